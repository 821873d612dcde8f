package scriptrun

import (
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"unpacked/**", "unpacked/word/document.xml", true},
		{"unpacked/**", "unpacked/[Content_Types].xml", true},
		{"unpacked/**", "unpacked", false}, // what is under unpacked/, not a file of that name
		{"unpacked/**", "unpacked2/a", false},
		{"unpacked/**", "other/unpacked/a", false},
		{"**", "a", true},
		{"**", "a/b/c", true},
		{"**/*.xml", "a.xml", true},
		{"**/*.xml", "a/b/c.xml", true},
		{"**/*.xml", "a/b/c.xmlx", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/z/y", false},
		{"a/**/b/**/c", "a/x/b/y/b/c", true},
		{"a/**/**/c", "a/c", true},
		{"*.csv", "data.csv", true},
		{"*.csv", "dir/data.csv", false}, // * stays within one folder
		{"*", ".hidden", true},
		{"dist/?.zip", "dist/a.zip", true},
		{"dist/?.zip", "dist/ab.zip", false},
		{"[ab].txt", "b.txt", true},
		{"[^ab].txt", "b.txt", false},
		{"[^ab].txt", "c.txt", true},
		{"[*].txt", "*.txt", true}, // a class matches a literal metacharacter
		{"a**b", "axxb", true},     // ** inside an element is *
		{"a**b", "ax/xb", false},
	}
	for _, c := range cases {
		_, glob, err := parseEntry(c.pattern)
		require.NoError(t, err, c.pattern)
		require.True(t, glob || !strings.ContainsAny(c.pattern, "*?["), c.pattern)
		assert.Equal(t, c.want, globMatch(c.pattern, c.path), "%q ~ %q", c.pattern, c.path)
	}
}

func TestParseEntry(t *testing.T) {
	cases := []struct {
		entry, clean string
		glob         bool
		err          string
	}{
		{entry: "report.docx", clean: "report.docx"},
		{entry: "./unpacked//word/", clean: "unpacked/word"},
		{entry: "unpacked/**", clean: "unpacked/**", glob: true},
		{entry: "dist∕report.zip", clean: "dist∕report.zip"}, // an artifact name is a one-element path
		{entry: "", err: "empty path"},
		{entry: "/etc/passwd", err: "absolute"},
		{entry: "../secrets", err: `leaves the skill folder with ".."`},
		{entry: "a/../../b", err: `leaves the skill folder with ".."`},
		{entry: "a/../b", err: `leaves the skill folder with ".."`},
		{entry: `a\b`, err: "backslash"},
		{entry: ".", err: "the skill folder itself"},
		{entry: "./", err: "the skill folder itself"},
		{entry: "a[", err: "malformed glob"},
		{entry: "ok/[x/y]", err: "malformed glob"},
	}
	for _, c := range cases {
		clean, glob, err := parseEntry(c.entry)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.entry)
			continue
		}
		require.NoError(t, err, c.entry)
		assert.Equal(t, c.clean, clean, c.entry)
		assert.Equal(t, c.glob, glob, c.entry)
	}
}

func TestInputPath(t *testing.T) {
	cases := []struct {
		name, path, err string
	}{
		{name: "report.md", path: "report.md"},
		{name: "unpacked∕word∕document.xml", path: "unpacked/word/document.xml"},
		{name: "artifact_e-5f3c_0", path: "artifact_e-5f3c_0"},              // an upload
		{name: "dist%2Fold.zip", path: "dist/old.zip"},                      // an earlier release's name
		{name: "odd name#1 ", path: "odd name#1 "},                          // not a name of ours: the name is the path
		{name: ArtifactName(".."), err: `stands for the path ".."`},         // ~2E~2E
		{name: ArtifactName("a/../../etc/passwd"), err: "leaves the skill"}, // a∕..∕..∕etc∕passwd
		{name: legacyArtifactName("../x"), err: "leaves the skill"},         // ..%2Fx
		{name: "..", err: "leaves the skill"},
		{name: ".", err: "the skill folder itself"},
		{name: ArtifactName("a//b"), err: "not clean"},
		{name: ArtifactName("./a"), err: "not clean"},
		{name: "user:notes.txt", err: "user-scoped"},
		{name: "user:" + ArtifactName("x/y"), err: "user-scoped"},
	}
	for _, c := range cases {
		p, err := inputPath(c.name)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.path, p, c.name)
	}
}

// TestCatalogueKeepsTheCurrentName: an earlier release's name and the
// current one stand for one path; the current name is what a changed file
// is saved under, so it is the one staged.
func TestCatalogueKeepsTheCurrentName(t *testing.T) {
	for _, names := range [][]string{
		{"dist%2Fa.txt", "dist∕a.txt"},
		{"dist∕a.txt", "dist%2Fa.txt"},
	} {
		cat := newCatalogue(names, nil)
		assert.Equal(t, map[string]string{"dist/a.txt": "dist∕a.txt"}, cat.byPath, names)
		assert.Equal(t, "dist/a.txt", cat.byName["dist%2Fa.txt"].path, "the old name can still be named")
	}
}

func TestSelectInputs(t *testing.T) {
	names := []string{
		"artifact_e-1_0", "notes.txt", "unpacked∕word∕document.xml", "unpacked∕[Content_Types].xml",
		"unpacked∕word∕media∕image1.png", "user:profile.txt", ArtifactName(".."),
		// A file literally named "a∕b.txt" in the root, beside the artifact "a∕b.txt" (path a/b.txt).
		"a∕b.txt", ArtifactName("a∕b.txt"),
		"out", "out∕x",
	}
	cat := newCatalogue(names, nil)
	cases := []struct {
		name    string
		entries []string
		max     int
		want    map[string]string // path -> artifact
		err     string
	}{
		{name: "by artifact name", entries: []string{"unpacked∕word∕document.xml"}, want: map[string]string{"unpacked/word/document.xml": "unpacked∕word∕document.xml"}},
		{name: "by path", entries: []string{"unpacked/word/document.xml"}, want: map[string]string{"unpacked/word/document.xml": "unpacked∕word∕document.xml"}},
		{name: "an upload", entries: []string{"artifact_e-1_0"}, want: map[string]string{"artifact_e-1_0": "artifact_e-1_0"}},
		{name: "a glob", entries: []string{"unpacked/**"}, want: map[string]string{
			"unpacked/word/document.xml":     "unpacked∕word∕document.xml",
			"unpacked/[Content_Types].xml":   "unpacked∕[Content_Types].xml",
			"unpacked/word/media/image1.png": "unpacked∕word∕media∕image1.png",
		}},
		{name: "overlapping entries select a file once", entries: []string{"unpacked/**", "unpacked/word/document.xml", "**/*.xml"}, want: map[string]string{
			"unpacked/word/document.xml":     "unpacked∕word∕document.xml",
			"unpacked/[Content_Types].xml":   "unpacked∕[Content_Types].xml",
			"unpacked/word/media/image1.png": "unpacked∕word∕media∕image1.png",
		}},
		{name: "a literal path with glob characters", entries: []string{"unpacked/[Content_Types].xml"}, want: map[string]string{"unpacked/[Content_Types].xml": "unpacked∕[Content_Types].xml"}},
		{name: "an artifact name wins over the path it reads as", entries: []string{"a∕b.txt"}, want: map[string]string{"a/b.txt": "a∕b.txt"}},
		{name: "the other file by its own name", entries: []string{ArtifactName("a∕b.txt")}, want: map[string]string{"a∕b.txt": ArtifactName("a∕b.txt")}},
		{name: "matches nothing", entries: []string{"nope.txt"}, err: `input_files[0] "nope.txt": no artifact of this session has that name or path`},
		{name: "a glob matching nothing", entries: []string{"notes.txt", "nope/**"}, err: `input_files[1] "nope/**": the glob matches no file path`},
		{name: "a name that decodes to ..", entries: []string{ArtifactName("..")}, err: `artifact "~2E~2E" cannot be passed in: it stands for the path ".."`},
		{name: "a user-scoped artifact", entries: []string{"user:profile.txt"}, err: "user-scoped artifact"},
		{name: "an unknown user-scoped name", entries: []string{"user:nothing.txt"}, err: "user-scoped artifact"},
		{name: "globs never select user-scoped artifacts", entries: []string{"user:*"}, err: "user-scoped artifact"},
		{name: "too many", entries: []string{"unpacked/**"}, max: 2, err: `input_files[0] "unpacked/**": selects more than 2 files`},
		{name: "a file inside another input", entries: []string{"out", "out/x"}, err: `input_files[1] "out/x": stages "out/x" inside "out", which input_files[0] "out" stages as a file`},
		{name: "two artifacts for one path", entries: []string{"notes.txt", ArtifactName("notes.txt")}, want: map[string]string{"notes.txt": "notes.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			maxFiles := c.max
			if maxFiles == 0 {
				maxFiles = 100
			}
			got, err := selectInputs(c.entries, cat, maxFiles)
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			m := map[string]string{}
			for _, in := range got {
				m[in.path] = in.artifact
			}
			assert.Equal(t, c.want, m)
		})
	}
}

// TestSelectInputsRefusesTwoArtifactsForOnePath: an earlier release's name
// and the current one, both named, would fill one path twice.
func TestSelectInputsRefusesTwoArtifactsForOnePath(t *testing.T) {
	cat := newCatalogue([]string{"dist%2Fa.txt", "dist∕a.txt"}, nil)
	_, err := selectInputs([]string{"dist%2Fa.txt", "dist/a.txt"}, cat, 10)
	assert.ErrorContains(t, err, `input_files[1] "dist/a.txt": selects artifact "dist∕a.txt" for the path "dist/a.txt", which input_files[0] "dist%2Fa.txt" fills with artifact "dist%2Fa.txt"`)
}

func TestCheckCollisions(t *testing.T) {
	skill := []string{"SKILL.md", "scripts/run.py", "data/in.csv"}
	cases := []struct {
		path, err string
	}{
		{path: "SKILL.md", err: `would replace the file "SKILL.md"`},
		{path: "scripts/run.py", err: `would replace the file "scripts/run.py"`},
		{path: "scripts", err: `would replace the folder "scripts"`},
		{path: "SKILL.md/x", err: `needs "SKILL.md" as a folder`},
		{path: "scripts/other.py"},
		{path: "data/out.csv"},
	}
	for _, c := range cases {
		err := checkCollisions([]InputFile{{index: 3, entry: "e", path: c.path}}, skill)
		if c.err == "" {
			assert.NoError(t, err, c.path)
			continue
		}
		assert.ErrorContains(t, err, `input_files[3] "e": `+c.err, c.path)
	}
}

// refGlob is the obvious recursive matcher globMatch must agree with.
func refGlob(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if refGlob(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	return len(name) > 0 && elementMatch(pat[0], name[0]) && refGlob(pat[1:], name[1:])
}

func FuzzGlobMatch(f *testing.F) {
	f.Add("unpacked/**", "unpacked/word/document.xml")
	f.Add("**/*.xml", "a/b.xml")
	f.Add("a/**/b/**", "a/b/b/c")
	f.Add("[ab]*/?", "b/x")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		pc, glob, err := parseEntry(pattern)
		if err != nil || !glob || strings.Count(pc, "/") > 8 {
			return
		}
		if c, _, err := parseEntry(p); err != nil || c != p || strings.ContainsAny(p, "*?[") {
			return
		}
		pat := strings.Split(pc, "/")
		if pat[len(pat)-1] == "**" {
			pat = append(pat[:len(pat)-1], "*", "**")
		}
		want := refGlob(pat, strings.Split(p, "/"))
		if got := globMatch(pc, p); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, want %v", pc, p, got, want)
		}
	})
}

// FuzzInputPath: whatever an artifact is called, the path it is staged at
// is a clean path inside the skill root.
func FuzzInputPath(f *testing.F) {
	for _, s := range []string{"report.md", "a∕..∕..∕x", "~2E~2E", "..%2Fx", "%2Fetc%2Fpasswd", "user:x", "a~2F..~2Fb", "~5C..", "∕abs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p, err := inputPath(name)
		if err != nil {
			return
		}
		if !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p || p == "." || strings.HasPrefix(p, "/") ||
			strings.ContainsAny(p, "\\\x00") || strings.HasPrefix(name, userScopePrefix) {
			t.Fatalf("artifact %q is staged at %q", name, p)
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == ".." {
				t.Fatalf("artifact %q is staged at %q", name, p)
			}
		}
	})
}

// FuzzSelectInputs: whatever the model asks for and whatever the session
// holds, every file selected is an artifact of the session staged at its
// own path, and no path is selected twice.
func FuzzSelectInputs(f *testing.F) {
	f.Add("unpacked/**", "unpacked∕a.xml\nunpacked∕b\nuser:c")
	f.Add("~2E~2E", "~2E~2E\nx")
	f.Add("**", "a\na∕b")
	f.Fuzz(func(t *testing.T, entries, names string) {
		cat := newCatalogue(strings.Split(names, "\n"), nil)
		got, err := selectInputs(strings.Split(entries, "\n"), cat, 100)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, in := range got {
			f, ok := cat.byName[in.artifact]
			if !ok || f.err != nil || f.path != in.path || seen[in.path] || strings.HasPrefix(in.artifact, userScopePrefix) {
				t.Fatalf("selected %+v from %q", in, names)
			}
			seen[in.path] = true
		}
	})
}
