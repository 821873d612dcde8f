package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseGoMod reads a go.mod's JSON form, as go mod edit -json prints it.
func parseGoMod(t *testing.T, js string) *goMod {
	t.Helper()
	var m goMod
	require.NoError(t, json.Unmarshal([]byte(js), &m))
	return &m
}

func TestGoModEdits(t *testing.T) {
	cfg := Config{Module: module, ADKVersion: "v2.2.0", Out: "v2", Shared: []string{"codeexec"}}
	src := parseGoMod(t, `{
		"Module": {"Path": "github.com/adkskills/adkskills"},
		"Go": "1.25.0",
		"Require": [
			{"Path": "github.com/adkskills/adkskills/codeexec", "Version": "v0.0.0-00010101000000-000000000000"},
			{"Path": "google.golang.org/adk", "Version": "v1.7.0"},
			{"Path": "golang.org/x/sys", "Version": "v0.47.0"},
			{"Path": "go.opentelemetry.io/otel/log", "Version": "v0.21.0", "Indirect": true}
		],
		"Replace": [
			{"Old": {"Path": "github.com/adkskills/adkskills/codeexec"}, "New": {"Path": "./codeexec"}},
			{"Old": {"Path": "example.com/fork"}, "New": {"Path": "example.com/fork2", "Version": "v1.0.0"}},
			{"Old": {"Path": "example.com/abs"}, "New": {"Path": "/opt/abs"}}
		],
		"Tool": [
			{"Path": "example.com/tool/cmd/t"},
			{"Path": "github.com/adkskills/adkskills/cmd/x"},
			{"Path": "github.com/adkskills/adkskills/codeexec/cmd/y"}
		]
	}`)
	args, err := goModEdits(src, cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"-module=github.com/adkskills/adkskills/v2",
		"-droprequire=google.golang.org/adk",
		"-require=github.com/adkskills/adkskills/codeexec@v0.0.0-00010101000000-000000000000", // shared: the same module
		"-require=google.golang.org/adk/v2@v2.2.0",
		"-require=golang.org/x/sys@v0.47.0",
		// No indirect requirement: ADK v2 needs otel/log v0.20.0, and go mod tidy settles them.
		"-replace=github.com/adkskills/adkskills/codeexec=../codeexec", // relative to v2/
		"-replace=example.com/fork=example.com/fork2@v1.0.0",
		"-replace=example.com/abs=/opt/abs",
		"-tool=example.com/tool/cmd/t",
		"-tool=github.com/adkskills/adkskills/v2/cmd/x",
		"-tool=github.com/adkskills/adkskills/codeexec/cmd/y",
	}, args)

	_, err = goModEdits(parseGoMod(t, `{"Module": {"Path": "github.com/adkskills/adkskills"},
			"Replace": [{"Old": {"Path": "google.golang.org/adk"}, "New": {"Path": "../adk"}}]}`), cfg)
	assert.Error(t, err, "a replacement of ADK v1 has no twin")
}

// TestRunSharesNestedModule runs the generator, go mod tidy included, on a
// root that requires a nested module through a replacement by directory,
// as the root requires codeexec. It needs no download: every module is
// local.
func TestRunSharesNestedModule(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOFLAGS", "")
	root := t.TempDir()
	tree(t, root, map[string]string{
		"go.mod": "module " + module + "\n\ngo 1.25\n\nrequire " + module + "/x/sub v0.0.0-00010101000000-000000000000\n\n" +
			"replace " + module + "/x/sub => ./x/sub\n",
		"a/a.go":                "package a\n\nimport \"github.com/adkskills/adkskills/x/sub\"\n\nconst Name = sub.Name\n",
		"a/a_test.go":           "package a\n\nimport \"testing\"\n\nfunc TestName(t *testing.T) {\n\tif Name != \"sub\" {\n\t\tt.Fatal(Name)\n\t}\n}\n",
		"x/sub/go.mod":          "module " + module + "/x/sub\n\ngo 1.25\n",
		"x/sub/sub.go":          "package sub\n\n// Name is github.com/adkskills/adkskills/x/sub's name.\nconst Name = \"sub\"\n",
		"v2/x/sub/stale.go":     "package sub\n",
		"v2/x/sub/go.mod":       "module " + module + "/v2/x/sub\n\ngo 1.25\n",
		"v2/x/sub/testdata/old": "a mirror an older generator made",
		// The root's workspace, which v2 must not fall into.
		"go.work": "go 1.25\n\nuse (\n\t.\n\t./x/sub\n)\n",
	})
	out := filepath.Join(root, "v2")

	require.NoError(t, run(root, "v2.2.0", "", true))
	assert.Equal(t, []string{"README.md", "a/a.go", "a/a_test.go", "go.mod", "go.work"}, listing(t, out), "the nested module is not mirrored")
	m, err := readModule(out)
	require.NoError(t, err)
	assert.Equal(t, module+"/v2", m.Module.Path)
	assert.Equal(t, []replace{{Old: modVersion{Path: module + "/x/sub"}, New: modVersion{Path: "../x/sub"}}}, m.Replace)
	assert.Contains(t, read(t, filepath.Join(out, "a", "a.go")), `"github.com/adkskills/adkskills/x/sub"`)

	// The twin builds and tests against the very module the root uses.
	for _, args := range [][]string{{"build", "./..."}, {"test", "./..."}} {
		_, err := goCommand(out, args...)
		require.NoError(t, err)
	}

	// v2 is a workspace of its own: the go command works there without
	// GOWORK=off, inside the root's workspace.
	list := exec.Command("go", "list", "./...")
	list.Dir = out
	list.Env = append(os.Environ(), "GOWORK=")
	got, err := list.CombinedOutput()
	require.NoError(t, err, "%s", got)
	assert.Equal(t, module+"/v2/a\n", string(got))

	// A second run changes nothing.
	before := snapshot(t, out)
	require.NoError(t, run(root, "v2.2.0", "", true))
	assert.Equal(t, before, snapshot(t, out))
}

// snapshot is every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = read(t, p)
		return nil
	}))
	require.NotEmpty(t, files)
	return files
}
