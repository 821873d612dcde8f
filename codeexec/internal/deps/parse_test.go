package deps

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestVersionOrder: PEP 440's own ordering examples, each strictly before
// the next.
func TestVersionOrder(t *testing.T) {
	order := []string{"1.0.dev456", "1.0a0.dev1", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2",
		"1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5", "1.0+abc.7", "1.0+5",
		"1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1", "1!0.1"}
	for i := 1; i < len(order); i++ {
		a, err := parseVersion(order[i-1])
		if err != nil {
			t.Fatal(err)
		}
		b, err := parseVersion(order[i])
		if err != nil {
			t.Fatal(err)
		}
		if a.compare(b) >= 0 || b.compare(a) <= 0 {
			t.Errorf("%s is not before %s", order[i-1], order[i])
		}
	}
	for _, eq := range [][2]string{{"1.0", "1.0.0"}, {"1.0alpha1", "1.0a1"}, {"1.0-1", "1.0.post1"}, {"v1.0c1", "1.0rc1"}, {"1.0+Ab-1", "1.0+ab.1"}, {"1.0.dev", "1.0.dev0"}} {
		a, _ := parseVersion(eq[0])
		b, _ := parseVersion(eq[1])
		if a.compare(b) != 0 {
			t.Errorf("%s != %s", eq[0], eq[1])
		}
	}
	for _, bad := range []string{"", "1.0.x", "abc", "1..0", "99999999999999999999999"} {
		if _, err := parseVersion(bad); err == nil {
			t.Errorf("parseVersion(%q) accepted", bad)
		}
	}
}

// TestSpecifier: pip's answers for an installed version (pre-releases
// admitted).
func TestSpecifier(t *testing.T) {
	tests := []struct {
		spec string
		in   []string
		out  []string
	}{
		{"", []string{"0", "1.0a1"}, nil},
		{"==1.0", []string{"1.0", "1.0.0", "1.0+local"}, []string{"1.0.1", "1.0a1"}},
		{"==1.0+local", []string{"1.0+local"}, []string{"1.0", "1.0+other"}},
		{"==1.*", []string{"1.0", "1.9.post1", "1.0a1"}, []string{"2.0", "0.9"}},
		{"==1.0.*", []string{"1", "1.0.7"}, []string{"1.1"}},
		{"!=1.0.*", []string{"1.1", "2"}, []string{"1.0.5"}},
		{"~=2.2", []string{"2.2", "2.9"}, []string{"3.0", "2.1"}},
		{"~=1.4.5", []string{"1.4.5", "1.4.9"}, []string{"1.5.0", "1.4.4"}},
		{">=1.0,<2", []string{"1.0", "1.9.9"}, []string{"2.0", "0.9"}},
		{"<2.0", []string{"1.9", "1.9.9"}, []string{"2.0", "2.0.1", "2.0a0"}},
		{"<2.0a5", []string{"2.0a1"}, []string{"2.0a5"}},
		{">1.7", []string{"1.7.1", "1.8"}, []string{"1.7", "1.7.post1", "1.7+local"}},
		{">1.7.post2", []string{"1.7.post3"}, []string{"1.7.post2"}},
		{"<=1.0", []string{"1.0", "1.0+x"}, []string{"1.0.post1"}},
		{"===1.0-foo", []string{"1.0-FOO"}, []string{"1.0"}},
		{">=3.11", []string{"3.11.7", "3.13.0rc1"}, []string{"3.10.12"}},
	}
	for _, tt := range tests {
		sp, err := parseSpecifier(tt.spec)
		if err != nil {
			t.Fatalf("%q: %v", tt.spec, err)
		}
		for _, v := range tt.in {
			if !sp.contains(v) {
				t.Errorf("%q does not contain %s", tt.spec, v)
			}
		}
		for _, v := range tt.out {
			if sp.contains(v) {
				t.Errorf("%q contains %s", tt.spec, v)
			}
		}
	}
	for _, bad := range []string{"1.0", ">=", "~=1", "==1.0a1.*", ">=1.0+local", "=>1.0", ">=1.0 junk", "== 1.*.0"} {
		if _, err := parseSpecifier(bad); err == nil {
			t.Errorf("parseSpecifier(%q) accepted", bad)
		}
	}
}

// TestParseRequirement: PEP 508 requirements in normal form; what is not
// a named package from the operator's index is refused.
func TestParseRequirement(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"Python_Docx", "python-docx", ""},
		{"requests [security , socks] >= 2.8.1, == 2.8.*", "requests[security,socks]==2.8.*,>=2.8.1", ""},
		{"name (>=1.0)", "name>=1.0", ""},
		{`pywin32 >=1.0 ; sys_platform == "win32"`, `pywin32>=1.0; sys_platform == "win32"`, ""},
		{`a; python_version < "3.8" and (os_name == 'nt' or extra == "x")`, `a; python_version < "3.8" and (os_name == "nt" or extra == "x")`, ""},
		{`a; "linux" in sys_platform`, `a; "linux" in sys_platform`, ""},
		{`a; 'x' not in platform_version`, `a; "x" not in platform_version`, ""},
		{"a[]", "a", ""},
		{"pkg @ https://example.com/pkg.whl", "", "direct reference"},
		{"https://example.com/pkg.whl", "", "URL or a path"},
		{"./local/pkg", "", "URL or a path"},
		{"/abs/pkg", "", "URL or a path"},
		{"pkg-1.0-py3-none-any.whl", "", "names a file"},
		{"pkg.tar.gz", "", "names a file"},
		{"-e .", "", "does not start with a package name"},
		{"pkg/sub", "", "URL or a path"},
		{"--index-url=x", "", "does not start with a package name"},
		{"", "", "empty"},
		{"a b", "", "no operator"},
		{"a[", "", "unclosed extras"},
		{"a[b c]", "", "invalid extra"},
		{"a[,]", "", "invalid extra"},
		{"a (>=1", "", "unclosed parenthesis"},
		{"a; os.name == 'nt'", "", "unknown marker variable"},
		{"a; python_version", "", "operator is missing"},
		{"a; 'x' == 'y'", "", "compares two strings"},
		{"a; (python_version > '3'", "", "unclosed parenthesis"},
		{"a; python_version > '3' junk", "", "unexpected"},
		{"a; python_version > '3", "", "unclosed string"},
		{"a\x00b", "", "control character"},
		{"a; python_version ==", "", "quoted string is missing"},
		{"a; os_name == 'nt' and", "", "quoted string is missing"},
		{"a; " + strings.Repeat("(", maxMarkerDepth+1) + "os_name == 'nt'" + strings.Repeat(")", maxMarkerDepth+1), "", "nested too deep"},
		{"a; " + strings.Repeat("(", maxMarkerDepth) + "os_name == 'nt'" + strings.Repeat(")", maxMarkerDepth), `a; os_name == "nt"`, ""},
		{"a; (os_name == 'nt' or os_name == 'x') and (extra == 'y')", `a; (os_name == "nt" or os_name == "x") and extra == "y"`, ""},
	}
	for _, tt := range tests {
		r, err := ParseRequirement(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseRequirement(%q) = %v, want an error saying %q", tt.in, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("ParseRequirement(%q): %v", tt.in, err)
		case tt.err == "" && r.String() != tt.want:
			t.Errorf("ParseRequirement(%q) = %q, want %q", tt.in, r.String(), tt.want)
		}
	}
}

// TestMarkerWords: a variable or keyword runs to the end of its word: a
// known name followed by any identifier character is another (unknown)
// name, whatever the character.
func TestMarkerWords(t *testing.T) {
	for _, c := range []string{"a", "z", "A", "Z", "0", "9", "_", "."} {
		if _, err := ParseRequirement("x; python_version" + c + " == '3'"); err == nil || !strings.Contains(err.Error(), "unknown marker variable") {
			t.Errorf("python_version%s: %v, want an unknown variable", c, err)
		}
		if _, err := ParseRequirement("x; python_version == '3' and" + c + " os_name == 'nt'"); err == nil || !strings.Contains(err.Error(), "unexpected") {
			t.Errorf("and%s: %v, want the word refused", c, err)
		}
	}
	for _, c := range []string{"-", "/", "@", "[", "`", "{", "~"} {
		if _, err := ParseRequirement("x; python_version" + c + " == '3'"); err == nil || strings.Contains(err.Error(), "unknown marker variable") {
			t.Errorf("python_version%s: %v, want the variable read and the rest refused", c, err)
		}
	}
}

// TestMarkers: markers evaluated as PEP 508 says, in a fixed environment.
func TestMarkers(t *testing.T) {
	env := map[string]string{"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux", "platform_version": "#1 SMP Debian",
		"os_name": "posix", "platform_machine": "x86_64", "implementation_name": "cpython", "platform_release": "6.1.0-rc7"}
	tests := []struct {
		marker string
		want   bool
	}{
		{`python_version >= "3.8"`, true},
		{`python_version < "3.8"`, false},
		{`python_full_version == "3.11.*"`, true},
		{`"3.8" <= python_version`, true},
		{`sys_platform == "win32" or os_name == "posix"`, true},
		{`sys_platform == "win32" and os_name == "posix"`, false},
		{`(sys_platform == "linux" or sys_platform == "darwin") and platform_machine != "arm64"`, true},
		{`"lin" in sys_platform`, true},
		{`"win" not in sys_platform`, true},
		{`extra == "test"`, false},
		{`platform_release >= "6"`, true},
		{`platform_release == "6.1.0-rc7"`, true},
		{`implementation_name === "cpython"`, true},
		{`implementation_name > "a"`, true}, // strings compare as Python's do
		{`platform_version < "#2"`, true},
		{`platform_version >= "#2"`, false},
		{`platform_version <= "#1 SMP Debian"`, true},
		{`platform_version > "#1 SMP Debian"`, false},
		{`platform_version < "#1 SMP Debian"`, false},
		{`platform_version >= "#1 SMP Debian"`, true},
		{`platform_version == "0"`, false}, // not a version: never compared as one
		{`extra == ""`, true},
		{`implementation_name != "pypy"`, true},
	}
	for _, tt := range tests {
		r, err := ParseRequirement("a; " + tt.marker)
		if err != nil {
			t.Fatalf("%s: %v", tt.marker, err)
		}
		if got := r.applies(env); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.marker, got, tt.want)
		}
		again, err := ParseRequirement(r.String())
		if err != nil || again.Marker != r.Marker {
			t.Errorf("%s does not survive its normal form %q: %v", tt.marker, r.Marker, err)
		}
	}
}

// TestScriptMetadata: PEP 723 blocks read as the reference implementation
// reads them.
func TestScriptMetadata(t *testing.T) {
	tests := []struct {
		name, src string
		found     bool
		deps      []string
		python    string
		err       string
	}{
		{"None", "import sys\n", false, nil, "", ""},
		{"Basic", "# /// script\n# requires-python = \">=3.11\"\n# dependencies = [\n#   \"requests<3\",\n#   \"rich\",\n# ]\n# ///\nimport requests\n",
			true, []string{"requests<3", "rich"}, ">=3.11", ""},
		{"CRLF", "# /// script\r\n# dependencies = [\"a\"]\r\n# ///\r\n", true, []string{"a"}, "", ""},
		{"EmptyLinesAsHash", "#!/usr/bin/env python\n# /// script\n#\n# dependencies = [\"a\"]  # why\n#\n# [tool.uv]\n# exclude-newer = 2023-10-16T00:00:00Z\n# ///\n",
			true, []string{"a"}, "", ""},
		{"Unclosed", "# /// script\n# dependencies = [\"a\"]\nprint()\n", false, nil, "", ""},
		{"OtherType", "# /// pyproject\n# x = 1\n# ///\n", false, nil, "", ""},
		{"LastCloserWins", "# /// script\n# dependencies = [\"a\"]\n# ///\n#\n# x = 1\n# ///\n", true, nil, "", "TOML line 2"},
		{"Two", "# /// script\n# dependencies = [\"a\"]\n# ///\n\n# /// script\n# dependencies = [\"b\"]\n# ///\n", true, nil, "", "2 \"# /// script\" blocks"},
		{"NoDeps", "# /// script\n# requires-python = \">=3\"\n# ///\n", true, nil, ">=3", ""},
		{"BadTOML", "# /// script\n# dependencies = [\"a\"\n# ///\n", true, nil, "", "TOML"},
		{"DepsNotArray", "# /// script\n# dependencies = \"a\"\n# ///\n", true, nil, "", "array of strings"},
		{"DepNotString", "# /// script\n# dependencies = [1]\n# ///\n", true, nil, "", "array of strings"},
		{"PythonNotString", "# /// script\n# requires-python = 3\n# ///\n", true, nil, "", "must be a string"},
		{"BadPython", "# /// script\n# requires-python = \"3\"\n# ///\n", true, nil, "", "requires-python"},
		{"ToolNotTable", "# /// script\n# tool = 1\n# ///\n", true, nil, "", "tool must be a table"},
		{"DirectReference", "# /// script\n# dependencies = [\"a @ https://x/a.whl\"]\n# ///\n", true, nil, "", "direct reference"},
		{"NoSpace", "# /// script\n#dependencies = [\"a\"]\n# ///\n", false, nil, "", ""},
		{"FormFeedSplitsLines", "# /// script\n# dependencies = [\"a\"]\f#x = 1\n# ///\n", true, nil, "", "TOML line 1"},
		{"TypeNeedsNewline", "# /// script", false, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, found, err := ParseScriptMetadata([]byte(tt.src))
			if found != tt.found {
				t.Fatalf("found = %v, want %v (%v)", found, tt.found, err)
			}
			if tt.err != "" {
				if !errors.Is(err, ErrDeclaration) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want ErrDeclaration saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !found {
				return
			}
			var deps []string
			for _, r := range meta.Dependencies {
				deps = append(deps, r.String())
			}
			if !slices.Equal(deps, tt.deps) || meta.RequiresPython != tt.python {
				t.Errorf("deps %q python %q, want %q %q", deps, meta.RequiresPython, tt.deps, tt.python)
			}
		})
	}
}

// tomlCases are TOML documents the differential test hands to both
// readers.
var tomlCases = []string{
	"a = 1\nb = 'x'\nc = \"y\\tz\\u00e9\"\n",
	"dependencies = [\n  \"a\",  # one\n  'b',\n]\n",
	"[tool.uv]\nexclude-newer = 2023-10-16T00:00:00Z\nd = 1979-05-27\nt = 07:32:00\nl = 1979-05-27 07:32:00\n",
	"x = \"\"\"\nmulti\\\n   line\"\"\"\ny = '''\nraw\\n'''\nz = \"\"\"q\"\"\"\"\"\n",
	"n = [1, 2.5, -3e2, 0x1F, 0o17, 0b101, 1_000, inf, -nan, true, false]\n",
	"t = {a = 1, b.c = \"x\"}\n[[arr]]\nk = 1\n[[arr]]\nk = 2\n[arr.sub]\nz = 3\n",
	"a.b.c = 1\na.b.d = 2\n\"quoted key\" = 3\n'lit.key' = 4\n",
	"[a]\nx = 1\n[a.b]\ny = 2\n[c.d]\n[c]\nz = 3\n",
	// Errors in both.
	"a = 1\na = 2\n",
	"[a]\n[a]\n",
	"a = \"unclosed\n",
	"a = [1, 2\n",
	"a = {b = 1,}\n",
	"a = 1 b = 2\n",
	"a = 01\n",
	"a = \"bad \\x escape\"\n",
	"t = {a = 1}\n[t]\n",
	"a = 1\n[a]\n",
	"x.y = 1\n[x]\n",
	"a = \"tab\tok\"\nb = 'ctrl\x01'\n",
	"= 1\n",
	"a = \n",
	"a = 1.\n",
	"a = +0x1\n",
	"[a]\nb = 1\n[a.b]\n",
	"a = [\n1,\n# c\n]\n",
	"a = 2024-13-45\n",
	"a = 1\nz = 2\nA = 3\nZ = 4\n0 = 5\n9 = 6\n_ = 7\n- = 8\n",
	"a@ = 1\n", "a` = 1\n", "a[ = 1\n", "a{ = 1\n", "a/ = 1\n", "a: = 1\n",
	"# comment \x00\na = 1\n",
	"a = 1 # trailing \x01\n",
	"a = 1 # trailing\r\nb = 2\r\n",
	"a = 1\r\n# c\r\nb = 2 # at the end",
	"a = [1, # c \x7f\n]\n",
	"t = 1979-05-27T25:00:00\n",
	"t = 1979-05-27 07:61:00\n",
	"t = 07:32:00+24:00\n",
	// Strings at their edges.
	"a = \"\\", "a = \"\\u00", "a = \"\\U0001F600\"\n", "a = \"x", "a = 'x", "a = 'x\ny'\n", "a = ''\n", "a = \"\"\n",
	"a = \"\"\"x\"\"\"\"\n", "a = \"\"\"x\"\"\"\"\"\n", "a = \"\"\"x\"\"\"\"\"\"\n", "a = '''x''''\n", "a = '''x'''''\n", "a = '''\n'''\n",
	"a = \"\"\"x\\   \n   y\"\"\"\n", "a = \"\"\"x\\\r\n  \n  y\"\"\"\n", "a = \"\"\"x\\ y\"\"\"\n", "a = \"\"\"x\\\t\n\ty\"\"\"\n", "a = \"\"\"x\\",
	"a = \"\"\"\x01\"\"\"\n", "a = '''\x7f'''\n", "a = \"\"\"\t\"\"\"\n", "a = '''\t'''\n", "a = \"\"\"\r\nx\r\ny\"\"\"\n", "a = \"\"\"unclosed",
	"a = \"\x7f\"\n", "a = \"\x1f\"\n", "a = '\x00'\n", "a = \"\\t\\b\\f\\r\\n\\\"\\\\\"\n",
	// Dates and times at their edges.
	"d = 1979-05-27 07:32:00\n", "d = 1979-05-27 x\n", "d = 1979-05-27 7\n", "d = 1979-05-27T07:32:00.999999Z\n", "d = 1979-05-27 07:32:00-08:00\n",
	"t = 23:59:59\n", "t = 23:59:60\n", "t = 24:00:00\n", "t = 23:60:00\n", "t = 00:00:00\n", "d = 2024-02-29\n", "d = 2023-02-29\n",
	"d = 1979-05-27T07:32:00+23:59\n", "d = 1979-05-27T07:32:00+24:00\n", "d = 1979-05-27T07:32:00-00:60\n", "d = 1979-05-27T07:32:00-00:59\n",
	// Numbers at their edges.
	"n = 9223372036854775807\n", "n = -9223372036854775808\n", "n = 0x7FFFFFFFFFFFFFFF\n", "n = 1e400\n", "n = 1__0\n", "n = _1\n", "n = 1_\n", "n = 0b2\n", "n = 0o8\n", "n = 0xg\n",
	"n = 1.5e+3\n", "n = .5\n", "n = 5.\n", "n = +inf\n", "n = -inf\n", "n = nan\n", "n = +nan\n", "n = truex\n", "n = TRUE\n",
	// Structure at its edges.
	"a = [\n]\n", "a = [,]\n", "a = [1,,2]\n", "a = [1 2]\n", "a = {}\n", "a = { }\n", "a = {b = 1, b = 2}\n", "a = {b.c = 1, b.d = 2}\n", "a = {b = 1\n}\n",
	"a = {b = {c = 1}}\n[a.b]\n", "[[a]]\n[a]\n", "a = 1\n[[a]]\n", "[a]\n[[a]]\n", "[ a . b ]\nc = 1\n", "[a\n", "[[a]\n", "[a]]\n", "[]\n", "a.b = 1\na.b.c = 2\n",
	"[[a]]\nb.c = 1\n[a.b]\n", "a = \"x\" # c\r\n", "a = 1\r", "\ufeffa = 1\n", "a = \"\"\"a b\"\"\"\n", "d = 1979-05-27 00:00:00\n",
}

// TestTOMLMatchesTomllib: this reader and Python's tomllib accept and
// reject the same documents and read the same values.
func TestTOMLMatchesTomllib(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is needed")
	}
	if exec.Command(py, "-c", "import tomllib").Run() != nil {
		t.Skip("python3 has no tomllib (3.11 or later)")
	}
	const script = `import json, sys, tomllib, math, datetime
def plain(v):
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list): return [plain(x) for x in v]
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)): return repr(v)
    if isinstance(v, (datetime.date, datetime.time)): return "datetime"
    return v
out = []
for doc in json.load(sys.stdin):
    try: out.append({"ok": True, "v": plain(tomllib.loads(doc))})
    except tomllib.TOMLDecodeError: out.append({"ok": False})
print(json.dumps(out))`
	in, _ := json.Marshal(tomlCases)
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []struct {
		OK bool `json:"ok"`
		V  any  `json:"v"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, doc := range tomlCases {
		got, err := parseTOML(doc)
		if (err == nil) != want[i].OK {
			t.Errorf("%q: error %v, tomllib ok %v", doc, err, want[i].OK)
			continue
		}
		if err == nil && !reflect.DeepEqual(jsonPlain(got), want[i].V) {
			t.Errorf("%q:\n got %v\nwant %v", doc, jsonPlain(got), want[i].V)
		}
	}
}

// TestTOMLErrors: errors say on which line, show a bounded excerpt, and
// nesting is bounded.
func TestTOMLErrors(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"a = 1\r\n\r\nb = \r\n", "TOML line 3: invalid value"},
		{"a = 1\n# x\nb = 2 c\n", "TOML line 3: unexpected \"c\""},
		{"a = \"\"\"\nx\n\"\"\"\nb = @\n", "TOML line 4"},
		{"a = " + strings.Repeat("x", 50) + "\n", `invalid value "` + strings.Repeat("x", 50) + `"`},
		{"a = 1 " + strings.Repeat("y", 50) + "\n", `unexpected "` + strings.Repeat("y", 20) + `..." after a value`},
		{"a = 1 yy\nzz\n", `unexpected "yy" after a value`},
		{"a = 1 " + strings.Repeat("y", 20) + "\n", `unexpected "` + strings.Repeat("y", 20) + `" after a value`},
		{"a = \nb = 1\n", `invalid value at ""`},
		{"a = 1 # x\x01\n", "control character"},
		{"a = '''\n\n'''\nb = @\n", "TOML line 4"},
		{"a = \"\"\"x\\\n\n   y\"\"\"\nb = @\n", "TOML line 4"},
		{"a = \"\"\"x\r\ny\"\"\"\nb = @\n", "TOML line 3"},
		{"a = " + strings.Repeat("[", maxTOMLDepth+2) + strings.Repeat("]", maxTOMLDepth+2) + "\n", "nested too deep"},
		{"a = \"\\u12\"\n", "invalid escape"},
		{"a = \"\\UFFFFFFFF\"\n", "invalid escape"},
		{"a = \"\\u+123\"\n", "invalid escape"},
		{"a = 99999999999999999999\n", "out of range"},
		{"a = 0x8000000000000000\n", "out of range"},
	}
	for _, tt := range tests {
		if _, err := parseTOML(tt.doc); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseTOML(%q) = %v, want %q", tt.doc, err, tt.want)
		}
	}
	deep := "a = " + strings.Repeat("[", maxTOMLDepth) + "1" + strings.Repeat("]", maxTOMLDepth) + "\n"
	if _, err := parseTOML(deep); err != nil {
		t.Errorf("nesting at the bound: %v", err)
	}
}

// jsonPlain turns parsed TOML into what the Python side prints.
func jsonPlain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = jsonPlain(e)
		}
		return out
	case []any:
		out := []any{}
		for _, e := range x {
			out = append(out, jsonPlain(e))
		}
		return out
	case int64:
		return float64(x)
	case float64:
		switch {
		case x != x:
			return "nan"
		case x > 1e308:
			return "inf"
		case x < -1e308:
			return "-inf"
		}
		return x
	case string:
		if tomlDate.MatchString(x) || tomlDateTime.MatchString(x) || tomlDateTime.MatchString(strings.Replace(x, " ", "T", 1)) {
			return "datetime"
		}
	}
	return v
}

// TestRequirementsFile: requirements.txt read as pip reads it, with what a
// skill may not say refused.
func TestRequirementsFile(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		reqs  []string
		cons  []string
		pre   bool
		err   string
	}{
		{"Plain", map[string]string{"requirements.txt": "# comment\nlxml>=4  # inline\n\nPillow\ndefusedxml ; python_version >= '3'\n"},
			[]string{"lxml>=4", "pillow", `defusedxml; python_version >= "3"`}, nil, false, ""},
		{"Continuation", map[string]string{"requirements.txt": "openpyxl \\\n  >= 3.0 \\\n  , < 4\n"}, []string{"openpyxl<4,>=3.0"}, nil, false, ""},
		{"Hashes", map[string]string{"requirements.txt": "a==1 --hash=sha256:ab --hash sha256:cd\n"}, []string{"a==1"}, nil, false, ""},
		{"IncludesAndPre", map[string]string{"requirements.txt": "--pre\n-r sub/more.txt\n-c constraints.txt\n", "sub/more.txt": "--requirement=../other.txt\nb\n",
			"other.txt": "c\n", "constraints.txt": "b<2\n"}, []string{"c", "b"}, []string{"b<2"}, true, ""},
		{"ShortInclude", map[string]string{"requirements.txt": "-rsub.txt\n", "sub.txt": "x\n"}, []string{"x"}, nil, false, ""},
		{"BOM", map[string]string{"requirements.txt": "\xef\xbb\xbfa\n"}, []string{"a"}, nil, false, ""},
		{"IndexURL", map[string]string{"requirements.txt": "--index-url https://evil/simple\na\n"}, nil, nil, false, "--index-url is not allowed"},
		{"ShortIndex", map[string]string{"requirements.txt": "-i https://evil/simple\n"}, nil, nil, false, "-i is not allowed"},
		{"ExtraIndex", map[string]string{"requirements.txt": "--extra-index-url=https://evil/simple\n"}, nil, nil, false, "--extra-index-url is not allowed"},
		{"FindLinks", map[string]string{"requirements.txt": "-f ./wheels\n"}, nil, nil, false, "-f is not allowed"},
		{"NoIndex", map[string]string{"requirements.txt": "--no-index\n"}, nil, nil, false, "--no-index is not allowed"},
		{"TrustedHost", map[string]string{"requirements.txt": "--trusted-host evil\n"}, nil, nil, false, "--trusted-host is not allowed"},
		{"Editable", map[string]string{"requirements.txt": "-e .\n"}, nil, nil, false, "-e is not allowed"},
		{"NoBinary", map[string]string{"requirements.txt": "--no-binary :all:\n"}, nil, nil, false, "--no-binary is not allowed"},
		{"GlobalOption", map[string]string{"requirements.txt": "a --global-option=x\n"}, nil, nil, false, "--global-option is not allowed"},
		{"UnknownOption", map[string]string{"requirements.txt": "--frobnicate\n"}, nil, nil, false, "--frobnicate is not allowed"},
		{"URL", map[string]string{"requirements.txt": "https://evil/a.whl\n"}, nil, nil, false, "URL or a path"},
		{"Path", map[string]string{"requirements.txt": "./vendor/a\n"}, nil, nil, false, "URL or a path"},
		{"DirectRef", map[string]string{"requirements.txt": "a @ git+https://evil/a\n"}, nil, nil, false, "direct reference"},
		{"EnvVar", map[string]string{"requirements.txt": "a==${VERSION}\n"}, nil, nil, false, "environment variable"},
		{"IncludeOutside", map[string]string{"requirements.txt": "-r ../../etc/reqs.txt\n"}, nil, nil, false, "leaves the skill"},
		{"IncludeAbsolute", map[string]string{"requirements.txt": "-r /etc/reqs.txt\n"}, nil, nil, false, "only files inside the skill"},
		{"IncludeURL", map[string]string{"requirements.txt": "-c https://evil/c.txt\n"}, nil, nil, false, "only files inside the skill"},
		{"IncludeMissing", map[string]string{"requirements.txt": "-r nope.txt\n"}, nil, nil, false, "nope.txt"},
		{"IncludeLoop", map[string]string{"requirements.txt": "-r a.txt\n", "a.txt": "-r requirements.txt\n"}, nil, nil, false, "includes itself"},
		{"IncludeNoFile", map[string]string{"requirements.txt": "-r\n"}, nil, nil, false, "needs a file"},
		{"IncludeTrailing", map[string]string{"requirements.txt": "-r a.txt b\n", "a.txt": "x\n"}, nil, nil, false, "unexpected"},
		{"HashNoValue", map[string]string{"requirements.txt": "a --hash\n"}, nil, nil, false, "needs a value"},
		{"BadHash", map[string]string{"requirements.txt": "a --hash=md5:x\n"}, nil, nil, false, "ALGORITHM:HEXDIGEST"},
		{"NotUTF8", map[string]string{"requirements.txt": "a\xff\n"}, nil, nil, false, "UTF-8"},
		{"LineNumber", map[string]string{"requirements.txt": "a\n\\\nb c\n"}, nil, nil, false, "line 2"},
		{"ContinuationAtEOF", map[string]string{"requirements.txt": "a\nb>=1 \\"}, []string{"a", "b>=1"}, nil, false, ""},
		{"LongConstraint", map[string]string{"requirements.txt": "--constraint=c.txt\nx\n", "c.txt": "x<2\n"}, []string{"x"}, []string{"x<2"}, false, ""},
		{"ConstraintIncludesRequirements", map[string]string{"requirements.txt": "-c c.txt\n", "c.txt": "-r d.txt\n", "d.txt": "y<3\n"}, nil, []string{"y<3"}, false, ""},
		{"DeepIncludes", deepIncludes(maxIncludeDepth + 1), nil, nil, false, "nested deeper than"},
		{"IncludesAtTheBound", deepIncludes(maxIncludeDepth), []string{"leaf"}, nil, false, ""},
		{"TooLarge", map[string]string{"requirements.txt": strings.Repeat("#", maxDeclarationBytes+1)}, nil, nil, false, "larger than"},
		{"AtTheSizeBound", map[string]string{"requirements.txt": "a\n" + strings.Repeat("#", maxDeclarationBytes-2)}, []string{"a"}, nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for p, c := range tt.files {
				fsys[p] = &fstest.MapFile{Data: []byte(c)}
			}
			rs, err := parseRequirementsFile(fsys, "requirements.txt")
			if tt.err != "" {
				if !errors.Is(err, ErrDeclaration) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want ErrDeclaration saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			str := func(rs []Requirement) (out []string) {
				for _, r := range rs {
					out = append(out, r.String())
				}
				return out
			}
			if !slices.Equal(str(rs.reqs), tt.reqs) || !slices.Equal(str(rs.constraints), tt.cons) || rs.pre != tt.pre {
				t.Errorf("reqs %q cons %q pre %v, want %q %q %v", str(rs.reqs), str(rs.constraints), rs.pre, tt.reqs, tt.cons, tt.pre)
			}
		})
	}
}

// deepIncludes is a chain of depth -r includes ending in a requirement.
func deepIncludes(depth int) map[string]string {
	files := map[string]string{}
	name := "requirements.txt"
	for i := range depth {
		next := fmt.Sprintf("r%d.txt", i)
		files[name] = "-r " + next + "\n"
		name = next
	}
	files[name] = "leaf\n"
	return files
}

// TestRequirementsText: the file pip installs from is the same for the
// same set in any order, and carries --pre, constraints and hashes.
func TestRequirementsText(t *testing.T) {
	parse := func(ss ...string) []Requirement {
		var out []Requirement
		for _, s := range ss {
			r, err := ParseRequirement(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	a, _ := requirementsText(&Declaration{Requirements: parse("B>=1", "a")})
	b, _ := requirementsText(&Declaration{Requirements: parse("a", "b >= 1", "a")})
	if a != b || a != "a\nb>=1\n" {
		t.Errorf("requirementsText = %q and %q, want both %q", a, b, "a\nb>=1\n")
	}
	h := parse("x==1")
	h[0].Hashes = []string{"sha256:ab"}
	reqs, cons := requirementsText(&Declaration{Requirements: h, Constraints: parse("y<2"), Pre: true})
	if reqs != "--pre\n-c constraints.txt\nx==1 --hash=sha256:ab\n" || cons != "y<2\n" {
		t.Errorf("requirementsText = %q, %q", reqs, cons)
	}
}

// TestPipFailure: pip's error lines name the packages and the reason.
func TestPipFailure(t *testing.T) {
	declared := []string{"a", "b"}
	tests := []struct {
		name       string
		lines      []string
		wheelsOnly bool
		pkgs       []string
		reason     string
	}{
		{"NoMatch", []string{"ERROR: Could not find a version that satisfies the requirement a>=2 (from versions: 1.0, 1.1)", "ERROR: No matching distribution found for a>=2"},
			false, []string{"a>=2"}, "no matching version (available: 1.0, 1.1)"},
		{"WheelsOnly", []string{"ERROR: Could not find a version that satisfies the requirement a (from versions: none)"},
			true, []string{"a"}, "only wheels are installed"},
		{"Network", []string{"WARNING: Retrying (Retry(total=4, connect=None)) after connection broken by 'NewConnectionError('<...>: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/a/",
			"ERROR: Could not find a version that satisfies the requirement a (from versions: none)"}, true, []string{"a"}, "no index reachable"},
		{"TLS", []string{"Could not fetch URL https://idx/simple/a/: There was a problem confirming the ssl certificate: ... CERTIFICATE_VERIFY_FAILED"}, true, declared, "TLS certificate"},
		{"NoPip", []string{"/usr/bin/python3: No module named pip"}, true, declared, "has no pip"},
		{"Conflict", []string{"ERROR: Cannot install a and b because these package versions have conflicting dependencies.", "ERROR: ResolutionImpossible: for help visit"}, true, declared, "conflict"},
		{"Hashes", []string{"ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE."}, true, declared, "--hash"},
		{"OtherPython", []string{"ERROR: Ignored the following versions that require a different python version: 2.0 Requires-Python >=3.99",
			"ERROR: No matching distribution found for a==2.0"}, true, []string{"a==2.0"}, "versions for another Python only: 2.0 Requires-Python >=3.99"},
		{"Unknown", []string{"ERROR: something else"}, true, declared, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kept []string
			for _, l := range tt.lines {
				if pipLineMatters(l) {
					kept = append(kept, l)
				}
			}
			pkgs, reason := pipFailure(kept, declared, tt.wheelsOnly)
			if !slices.Equal(pkgs, tt.pkgs) || !strings.Contains(reason, tt.reason) || (tt.reason == "") != (reason == "") {
				t.Errorf("pipFailure = %q, %q; want %q, %q", pkgs, reason, tt.pkgs, tt.reason)
			}
		})
	}
}

// TestOutputScan: the scan keeps the lines asked for, within its bounds,
// whatever the chunking, and caps the whole text.
func TestOutputScan(t *testing.T) {
	o := newOutputScan(func(l string) bool { return strings.HasPrefix(l, "ERROR") })
	long := "ERROR " + strings.Repeat("x", 2*maxScanLine)
	text := "noise\nERROR: one\r\n" + long + "\n" + strings.Repeat("ERROR n\n", maxScanLines+5) + strings.Repeat("noise\n", maxOutputChars) + "ERROR: last without newline"
	for i := 0; i < len(text); i += 7 {
		if _, err := o.Write([]byte(text[i:min(i+7, len(text))])); err != nil {
			t.Fatal(err)
		}
	}
	kept := o.kept()
	if len(kept) != maxScanLines || kept[0] != "ERROR: one" || len(kept[1]) != maxScanLine {
		t.Errorf("kept %d lines, first %q, second %d bytes; want %d, %q, %d", len(kept), kept[0], len(kept[1]), maxScanLines, "ERROR: one", maxScanLine)
	}
	if got := []rune(o.text()); len(got) <= maxOutputChars || !strings.HasSuffix(string(got), "ERROR: last without newline") || !strings.Contains(string(got), "truncated") {
		t.Errorf("text: %d characters, want the capped output ending with the last line", len(got))
	}
	small := newOutputScan(func(string) bool { return true })
	small.Write([]byte("only line"))
	if got := small.kept(); !slices.Equal(got, []string{"only line"}) {
		t.Errorf("a last line without newline: %q", got)
	}
}

// TestMissingModule: the module a traceback names.
func TestMissingModule(t *testing.T) {
	tests := []struct {
		stderr, want string
	}{
		{"Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'defusedxml'\n", "defusedxml"},
		{"ModuleNotFoundError: No module named 'docx.oxml'\n", "docx"},
		{"ImportError: No module named lxml\n", "lxml"},
		{"ModuleNotFoundError: No module named 'a'\nduring handling\nModuleNotFoundError: No module named 'b'\n", "b"},
		{"NameError: name 'x' is not defined\n", ""},
	}
	for _, tt := range tests {
		got, ok := MissingModule(tt.stderr)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("MissingModule(%q) = %q, %v; want %q", tt.stderr, got, ok, tt.want)
		}
	}
}

// TestDeclared: which file declares for which script.
func TestDeclared(t *testing.T) {
	fsys := fstest.MapFS{
		"requirements.txt":         {Data: []byte("rootdep\n")},
		"scripts/requirements.txt": {Data: []byte("scriptsdep\n")},
		"scripts/a.py":             {Data: []byte("import x\n")},
		"scripts/inline.py":        {Data: []byte("# /// script\n# dependencies = []\n# ///\n")},
		"tools/b.py":               {Data: []byte("")},
		"c.sh":                     {Data: []byte("")},
		"dir/requirements.txt/x":   {Data: []byte("")},
		"dir/d.py":                 {Data: []byte("")},
	}
	tests := []struct {
		script, lang, source string
		reqs                 []string
		err                  string
	}{
		{"scripts/a.py", Python, "scripts/requirements.txt", []string{"scriptsdep"}, ""},
		{"tools/b.py", Python, "requirements.txt", []string{"rootdep"}, ""},
		{"scripts/inline.py", Python, "scripts/inline.py", nil, ""}, // an empty block: nothing, never the file
		{"c.sh", "bash", "", nil, ""},
		{"../x.py", Python, "", nil, "script path"},
		{"missing.py", Python, "", nil, "missing.py"},
	}
	for _, tt := range tests {
		d, err := Declared(fsys, tt.script, tt.lang)
		if tt.err != "" {
			if !errors.Is(err, ErrDeclaration) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Declared(%s) = %v, want ErrDeclaration saying %q", tt.script, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Declared(%s): %v", tt.script, err)
		}
		if tt.source == "" {
			if d != nil {
				t.Errorf("Declared(%s) = %+v, want nil", tt.script, d)
			}
			continue
		}
		if d.Source != tt.source || !slices.Equal(names(d), tt.reqs) {
			t.Errorf("Declared(%s) = %s %q, want %s %q", tt.script, d.Source, names(d), tt.source, tt.reqs)
		}
	}
	if _, err := Declared(fstest.MapFS{"sub/requirements.txt/x": {}, "scripts/requirements.txt/y": {}, "scripts/e.py": {}}, "scripts/e.py", Python); !errors.Is(err, ErrDeclaration) {
		t.Errorf("a requirements.txt folder: %v, want ErrDeclaration", err)
	}
}
