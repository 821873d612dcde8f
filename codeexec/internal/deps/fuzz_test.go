package deps

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzParseScriptMetadata: any source is read without panicking; a block
// found yields metadata or an ErrDeclaration, and its requirements survive
// their normal form.
func FuzzParseScriptMetadata(f *testing.F) {
	for _, tt := range []string{"# /// script\n# dependencies = [\"a>=1; python_version<'3.9'\", \"b[x]\"]\n# requires-python = \">=3.8\"\n# ///\n",
		"# /// script\n# [tool.x]\n# a = {b = [1, 'c', \"\"\"d\"\"\"]}\n# ///\n", "# /// script\r\n#\r\n# ///", "# /// a\n# ///\n# /// script\n# ///\n"} {
		f.Add([]byte(tt))
	}
	for _, doc := range tomlCases {
		f.Add([]byte("# /// script\n# " + strings.ReplaceAll(doc, "\n", "\n# ") + "\n# ///\n"))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		meta, found, err := ParseScriptMetadata(src)
		if err != nil {
			if !found || !errors.Is(err, ErrDeclaration) {
				t.Fatalf("error %v (found %v), want ErrDeclaration for a found block", err, found)
			}
			return
		}
		if found != (meta != nil) {
			t.Fatalf("found %v with metadata %v", found, meta)
		}
		if meta == nil {
			return
		}
		for _, r := range meta.Dependencies {
			again, err := ParseRequirement(r.String())
			if err != nil || again.String() != r.String() {
				t.Fatalf("%q does not survive its normal form: %q, %v", r.String(), again.String(), err)
			}
		}
	})
}

// FuzzParseRequirement: a requirement that parses has a normal form that
// parses to itself; nothing that parses is a path, URL or option.
func FuzzParseRequirement(f *testing.F) {
	for _, s := range []string{"a", "A.B-c_d[x,Y]>=1.0,!=1.5.*;python_version<'3'", "a (==1.0+local)", "a; (os_name=='nt' or extra == \"x\") and 'x' not in sys_platform",
		"a===weird", "a~=1.2.3.post4.dev5", "a @ https://x", "./x", "-e x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRequirement(s)
		if err != nil {
			return
		}
		if strings.HasPrefix(strings.TrimSpace(s), "-") || strings.Contains(r.Name, "/") || r.Name == "" {
			t.Fatalf("%q parsed to %q", s, r.String())
		}
		again, err := ParseRequirement(r.String())
		if err != nil || again.String() != r.String() {
			t.Fatalf("%q: normal form %q reads back as %q (%v)", s, r.String(), again.String(), err)
		}
		env := map[string]string{"python_version": "3.11", "sys_platform": "linux"}
		if r.applies(env) != again.applies(env) {
			t.Fatalf("%q: the normal form's marker evaluates differently", s)
		}
	})
}

// FuzzVersion: a version that parses compares equal to its normal form,
// which parses back to itself.
func FuzzVersion(f *testing.F) {
	for _, s := range []string{"1.0", "v1!2.3rc4.post5.dev6+abc.7", "1.0-1", "1.0.DEV", "0"} {
		f.Add(s, "1.0")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		v, err := parseVersion(a)
		if err != nil {
			return
		}
		n, err := parseVersion(v.String())
		if err != nil || n.String() != v.String() || n.compare(v) != 0 {
			t.Fatalf("%q: normal form %q reads back as %q (%v)", a, v.String(), n.String(), err)
		}
		if w, err := parseVersion(b); err == nil && v.compare(w) != -w.compare(v) {
			t.Fatalf("compare(%q, %q) is not antisymmetric", a, b)
		}
	})
}

// FuzzRequirementsFile: any requirements file is read without panicking,
// and every error wraps ErrDeclaration.
func FuzzRequirementsFile(f *testing.F) {
	for _, s := range []string{"a\n-r b.txt\n", "a \\\n>=1 # c\n--pre\n", "-c b.txt\n-e x\n", "a --hash=sha256:00 --hash sha256:11\n", "${X}\n", "-rb.txt\n"} {
		f.Add(s, "b\n")
	}
	f.Fuzz(func(t *testing.T, main, inc string) {
		fsys := fstest.MapFS{"requirements.txt": {Data: []byte(main)}, "b.txt": {Data: []byte(inc)}}
		rs, err := parseRequirementsFile(fsys, "requirements.txt")
		if err != nil {
			if !errors.Is(err, ErrDeclaration) {
				t.Fatalf("error %v does not wrap ErrDeclaration", err)
			}
			return
		}
		for _, r := range append(rs.reqs, rs.constraints...) {
			if strings.HasPrefix(r.Name, "-") || strings.ContainsAny(r.line(), "\n\x00") {
				t.Fatalf("requirement %q from %q", r.line(), main)
			}
		}
	})
}

// FuzzTOML: any document is read without panicking or looping.
func FuzzTOML(f *testing.F) {
	for _, doc := range tomlCases {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		_, _ = parseTOML(doc)
	})
}
