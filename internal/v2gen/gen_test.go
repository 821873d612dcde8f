package main

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/adkskills/adkskills"

func TestRewritePath(t *testing.T) {
	cases := []struct{ in, old, want string }{
		{`"github.com/adkskills/adkskills/codeexec"`, module, `"github.com/adkskills/adkskills/v2/codeexec"`},
		{`"github.com/adkskills/adkskills"`, module, `"github.com/adkskills/adkskills/v2"`},
		{`"github.com/adkskills/adkskills/v2/codeexec"`, module, `"github.com/adkskills/adkskills/v2/codeexec"`},
		{`"github.com/adkskills/adkskills/v2"`, module, `"github.com/adkskills/adkskills/v2"`},
		{`"github.com/adkskills/adkskills/v2x"`, module, `"github.com/adkskills/adkskills/v2/v2x"`},
		{`"github.com/adkskills/adkskillsx/a"`, module, `"github.com/adkskills/adkskillsx/a"`},
		{`"example.com/github.com/adkskills/adkskills"`, module, `"example.com/github.com/adkskills/adkskills"`},
		{"// import github.com/adkskills/adkskills/skilltoolset, or github.com/adkskills/adkskills.", module,
			"// import github.com/adkskills/adkskills/v2/skilltoolset, or github.com/adkskills/adkskills/v2."},
		{`"google.golang.org/adk/agent"`, adkPath, `"google.golang.org/adk/v2/agent"`},
		{`"google.golang.org/adk/v2/agent"`, adkPath, `"google.golang.org/adk/v2/agent"`},
		{`"google.golang.org/adk-python/x"`, adkPath, `"google.golang.org/adk-python/x"`},
		{`"google.golang.org/adkx"`, adkPath, `"google.golang.org/adkx"`},
		{`"google.golang.org/genai"`, adkPath, `"google.golang.org/genai"`},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, rewritePath(c.in, c.old), c.in)
	}
	// Paths into a shared nested module stay; a longer name does not.
	shared := []struct{ in, want string }{
		{`"github.com/adkskills/adkskills/codeexec"`, `"github.com/adkskills/adkskills/codeexec"`},
		{`"github.com/adkskills/adkskills/codeexec/local"`, `"github.com/adkskills/adkskills/codeexec/local"`},
		{"// see github.com/adkskills/adkskills/codeexec.", "// see github.com/adkskills/adkskills/codeexec."},
		{`"github.com/adkskills/adkskills/codeexecx"`, `"github.com/adkskills/adkskills/v2/codeexecx"`},
		{`"github.com/adkskills/adkskills/tools/runscript"`, `"github.com/adkskills/adkskills/v2/tools/runscript"`},
		{`"github.com/adkskills/adkskills/internal/truncate"`, `"github.com/adkskills/adkskills/internal/truncate"`},
	}
	for _, c := range shared {
		assert.Equal(t, c.want, rewritePath(c.in, module, "codeexec", "internal/truncate"), c.in)
	}
}

func TestMajor(t *testing.T) {
	cases := map[string]int{
		"toolset.go":                  0,
		"toolset_test.go":             0,
		"adk1.go":                     0, // the name's first element is not a tag
		"context_adk1.go":             1,
		"context_adk1_test.go":        1,
		"context_adk2.go":             2,
		"context_adk2_test.go":        2,
		"sandbox_adk2_linux_test.go":  2,
		"context_adk10.go":            0,
		"my_adk2helper.go":            0,
		"sandbox_linux.go":            0,
		"createtime_adk1_windows.go":  1,
		"createtime_adk2_amd64.go":    2,
		"internal_adk1_adk2_weird.go": 1,
	}
	for name, want := range cases {
		assert.Equal(t, want, Major(name), name)
	}
}

// header is the generated-code convention (go help generate).
var header = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

func TestTransform(t *testing.T) {
	src := `// Package x says: go get github.com/adkskills/adkskills, see google.golang.org/adk/agent.
package x

import (
	"fmt"

	"google.golang.org/adk/agent"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/tools/runscript"
	"github.com/adkskills/adkskills/codeexec"
)

var _ = fmt.Sprint("github.com/adkskills/adkskills/tools/runscript", agent.Artifacts(nil), genai.Part{}, adkglue.X, runscript.Y, codeexec.Z)
`
	out, err := Transform("x/x.go", []byte(src), module, []string{"codeexec"}, false)
	require.NoError(t, err)
	got := string(out)
	first, _, _ := strings.Cut(got, "\n")
	assert.Regexp(t, header, first)
	assert.Contains(t, first, "x/x.go", "the header names the file to edit")
	assert.Contains(t, got, "\n\n// Package x", "a blank line keeps the header out of the package doc")
	assert.Contains(t, got, `"google.golang.org/adk/v2/agent"`)
	assert.Contains(t, got, `"google.golang.org/genai"`)
	assert.Contains(t, got, "\t\"github.com/adkskills/adkskills/codeexec\"\n\t\"github.com/adkskills/adkskills/v2/internal/adkglue\"\n\t\"github.com/adkskills/adkskills/v2/tools/runscript\"\n",
		"imports are rewritten (but the shared module's) and sorted")
	assert.Contains(t, got, "go get github.com/adkskills/adkskills/v2,", "the module path moves in comments")
	assert.Contains(t, got, "see google.golang.org/adk/agent.", "ADK paths in comments stay: they cite v1")
	assert.Contains(t, got, `fmt.Sprint("github.com/adkskills/adkskills/v2/tools/runscript"`, "and in strings")
	again, err := Transform("x/x.go", out, module, []string{"codeexec"}, false)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(again), "DO NOT EDIT"), "a second pass changes nothing but adds its header")
}

func TestTransformADK2(t *testing.T) {
	const body = "package x\n\nimport \"google.golang.org/adk/v2/agent\"\n\ntype C = agent.Context\n"
	cases := []struct {
		name string
		src  string
		err  error
	}{
		{"ignore", "//go:build ignore\n\n" + body, nil},
		{"ignore after a comment", "// Shim.\n\n//go:build ignore\n\n" + body, nil},
		{"no constraint", body, errADK2Constraint},
		{"another constraint", "//go:build linux\n\n" + body, errADK2Constraint},
		{"ignore and more", "//go:build ignore && linux\n\n" + body, errADK2Constraint},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Transform("x/c_adk2.go", []byte(c.src), module, nil, true)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.NotContains(t, string(out), "go:build")
			assert.Contains(t, string(out), `import "google.golang.org/adk/v2/agent"`)
			assert.Regexp(t, header, strings.SplitN(string(out), "\n", 2)[0])
		})
	}
	_, err := Transform("x/c.go", []byte("//go:build ignore\n\n"+body), module, nil, false)
	require.NoError(t, err, "a shared file may carry any constraint")
}

func TestTransformRefusesBrokenGo(t *testing.T) {
	_, err := Transform("x/x.go", []byte("package x\nfunc {"), module, nil, false)
	require.Error(t, err)
}

func TestCheckShared(t *testing.T) {
	for src, want := range map[string]error{
		"package x\nfunc f(tc C) { tc.Artifacts().Save() }":           errArtifactsCall,
		"package x\nfunc f(tc C) { _ = adkglue.Artifacts(tc) }":       nil,
		"package x\nfunc (c *T) Artifacts() A { return nil }":         nil,
		"package x\nfunc Artifacts(tc C) A { return tc.Artifacts() }": nil,
		"package x\nvar a = tc.Artifacts()":                           errArtifactsCall,
	} {
		assert.Equal(t, want, checkShared("x.go", []byte(src)), src)
	}
}

// tree writes files (path: content; a path ending in * is executable).
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		mode := fs.FileMode(0o644)
		if s, ok := strings.CutSuffix(p, "*"); ok {
			p, mode = s, 0o755
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), mode))
	}
}

// listing is every file under dir, by slash path, with "*" after an
// executable one.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if info, _ := d.Info(); info.Mode()&0o111 != 0 {
			rel += "*"
		}
		out = append(out, rel)
		return nil
	}))
	slices.Sort(out)
	return out
}

const goFile = "package a\n\nimport _ \"github.com/adkskills/adkskills/b\"\n"

func TestPlanAndSync(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"go.mod":                             "module " + module + "\n",
		"go.sum":                             "",
		"README.md":                          "root readme",
		"LICENSE":                            "license",
		".gitignore":                         "*.test",
		".ci/run*":                           "#!/bin/sh",
		"a/a.go":                             goFile,
		"a/uses.go":                          "package a\n\nimport _ \"github.com/adkskills/adkskills/nested/inner\"\n",
		"a/a_test.go":                        "package a\n",
		"a/ctx_adk1.go":                      "package a\n",
		"a/ctx_adk2.go":                      "//go:build ignore\n\npackage a\n",
		"a/.hidden":                          "editor junk",
		"a/testdata/skill/SKILL.md":          "---\n",
		"a/testdata/skill/run.sh*":           "#!/bin/sh",
		"a/testdata/skill/.env":              "hidden but test input",
		"a/testdata/skill/not_go_adk1.go":    "test input, not code: package",
		"a/testdata/mod/go.mod":              "module fixture\n",
		"a/testdata/.dir/x":                  "x",
		"cmd/tool/main.go":                   "package main\n",
		"internal/gen/main.go":               "package main\n",
		"nested/go.mod":                      "module " + module + "/nested\n",
		"nested/n.go":                        goFile,
		"nested/inner/go.mod":                "module " + module + "/nested/inner\n",
		"nested/inner/i.go":                  "package i\n",
		"excluded/go.mod":                    "module " + module + "/excluded\n",
		"excluded/e.go":                      "package e\n",
		"v2/stale/old.go":                    "package old\n",
		"v2/go.mod":                          "module " + module + "/v2\n",
		"v2/go.sum":                          "sums",
		"v2/a/a.go":                          "outdated",
		"v2/a/testdata/skill/deleted.txt":    "gone from the root",
		"v2/a/testdata/skill/run.sh":         "#!/bin/sh", // lost its mode
		"v2/.gitattributes_not_generated":    "x",
		"v2/deep/er/and/deeper/file.txt":     "x",
		"v2/a/testdata/skill/SKILL.md":       "---\n",
		"v2/a/testdata/skill/.env":           "hidden but test input",
		"v2/a/testdata/skill/not_go_adk1.go": "test input, not code: package",
		"v2/nested/go.mod":                   "module " + module + "/v2/nested\n",
		"v2/nested/go.sum":                   "v2 sums of the mirror an older generator made",
		"v2/nested/n.go":                     "package a\n",
	})
	cfg := Config{Module: module, ADKVersion: "v2.2.0", Out: "v2", Exclude: []string{"cmd", "internal/gen", "excluded"}}
	files, modules, err := Plan(root, cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"LICENSE", "README.md", "a/a.go", "a/a_test.go", "a/ctx_adk2.go",
		"a/testdata/.dir/x", "a/testdata/mod/go.mod",
		"a/testdata/skill/.env", "a/testdata/skill/SKILL.md", "a/testdata/skill/not_go_adk1.go", "a/testdata/skill/run.sh",
		"a/uses.go",
	}, slices.Sorted(maps.Keys(files)), "nested modules are shared, not mirrored")
	assert.Equal(t, []string{"nested", "nested/inner"}, modules, "nested modules, in path order; test data's and excluded ones are not")
	assert.Contains(t, string(files["a/a.go"].Data), `"github.com/adkskills/adkskills/v2/b"`)
	assert.Contains(t, string(files["a/uses.go"].Data), `"github.com/adkskills/adkskills/nested/inner"`, "an import of a shared module is kept")
	assert.Equal(t, "test input, not code: package", string(files["a/testdata/skill/not_go_adk1.go"].Data), "test data is copied byte for byte")
	readme := string(files["README.md"].Data)
	assert.Contains(t, readme, "`github.com/adkskills/adkskills/v2` is adkskills for agents built on ADK Go v2 (`google.golang.org/adk/v2` v2.2.0)")
	assert.Contains(t, readme, "- `github.com/adkskills/adkskills/nested/inner` (in `../nested/inner/`)\n")

	out := filepath.Join(root, "v2")
	st, err := Sync(out, files, keptByGo)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"LICENSE", "README.md", "a/a.go", "a/a_test.go", "a/ctx_adk2.go",
		"a/testdata/.dir/x", "a/testdata/mod/go.mod",
		"a/testdata/skill/.env", "a/testdata/skill/SKILL.md", "a/testdata/skill/not_go_adk1.go", "a/testdata/skill/run.sh*",
		"a/uses.go", "go.mod", "go.sum",
	}, listing(t, out))
	assert.Equal(t, "sums", read(t, filepath.Join(out, "go.sum")), "v2's go.sum is left to the go command")
	assert.Equal(t, Stats{Written: 9, Removed: 7}, st, "unchanged files are not rewritten")
	for _, d := range []string{"stale", "deep", "nested"} {
		_, err := os.Stat(filepath.Join(out, d))
		assert.True(t, errors.Is(err, fs.ErrNotExist), "directory %s is removed", d)
	}

	// A second run changes nothing.
	st, err = Sync(out, files, keptByGo)
	require.NoError(t, err)
	assert.Equal(t, Stats{}, st)

	// Rename and delete in the root: v2 follows.
	require.NoError(t, os.Rename(filepath.Join(root, "a"), filepath.Join(root, "b")))
	require.NoError(t, os.Remove(filepath.Join(root, "b", "ctx_adk2.go")))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "nested", "inner")))
	require.NoError(t, os.Remove(filepath.Join(root, "b", "uses.go")))
	files, modules, err = Plan(root, cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{"nested"}, modules)
	_, err = Sync(out, files, keptByGo)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"LICENSE", "README.md", "b/a.go", "b/a_test.go",
		"b/testdata/.dir/x", "b/testdata/mod/go.mod",
		"b/testdata/skill/.env", "b/testdata/skill/SKILL.md", "b/testdata/skill/not_go_adk1.go", "b/testdata/skill/run.sh*",
		"go.mod", "go.sum",
	}, listing(t, out))
}

func read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(data)
}

func TestPlanErrors(t *testing.T) {
	cases := map[string]map[string]string{
		"adk2 file the root would build": {"a/x_adk2.go": "package a\n"},
		"broken Go":                      {"a/a.go": "package a\nfunc {"},
		"shared code asking for artifacts": {
			"a/a.go": "package a\n\nfunc f(tc interface{ Artifacts() any }) any { return tc.Artifacts() }\n",
		},
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			tree(t, root, files)
			_, _, err := Plan(root, Config{Module: module, Out: "v2"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "a/", "the error names the file")
		})
	}
}

func TestSyncSymlinks(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{"a/testdata/target.txt": "x"})
	require.NoError(t, os.Symlink("target.txt", filepath.Join(root, "a", "testdata", "link")))
	files, _, err := Plan(root, Config{Module: module, Out: "v2"})
	require.NoError(t, err)
	assert.Equal(t, "target.txt", files["a/testdata/link"].Link)
	out := filepath.Join(root, "v2")
	_, err = Sync(out, files, keptByGo)
	require.NoError(t, err)
	target, err := os.Readlink(filepath.Join(out, "a", "testdata", "link"))
	require.NoError(t, err)
	assert.Equal(t, "target.txt", target)
	st, err := Sync(out, files, keptByGo)
	require.NoError(t, err)
	assert.Equal(t, Stats{}, st)
}
