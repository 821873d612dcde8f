package main

import (
	"encoding/json"
	"io/fs"
	"os"
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
	cfg := Config{Module: module, ADKVersion: "v2.2.0", Out: "v2"}
	src := parseGoMod(t, `{
		"Module": {"Path": "github.com/adkskills/adkskills/codeexec/agentsandbox"},
		"Go": "1.26.0",
		"Require": [
			{"Path": "github.com/adkskills/adkskills", "Version": "v0.0.0"},
			{"Path": "github.com/adkskills/adkskills/other", "Version": "v0.3.0"},
			{"Path": "google.golang.org/adk", "Version": "v1.7.0"},
			{"Path": "k8s.io/client-go", "Version": "v0.37.0"},
			{"Path": "go.opentelemetry.io/otel/log", "Version": "v0.21.0", "Indirect": true}
		],
		"Replace": [
			{"Old": {"Path": "github.com/adkskills/adkskills", "Version": "v0.0.0"}, "New": {"Path": "../.."}},
			{"Old": {"Path": "github.com/adkskills/adkskills/other"}, "New": {"Path": "../../other"}},
			{"Old": {"Path": "example.com/fork"}, "New": {"Path": "example.com/fork2", "Version": "v1.0.0"}}
		],
		"Tool": [
			{"Path": "sigs.k8s.io/agent-sandbox/packages/sandboxd/cmd/sandboxd"},
			{"Path": "github.com/adkskills/adkskills/cmd/x"}
		]
	}`)
	args, err := goModEdits(src, cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"-module=github.com/adkskills/adkskills/v2/codeexec/agentsandbox",
		"-droprequire=google.golang.org/adk",
		"-droprequire=github.com/adkskills/adkskills",
		"-require=github.com/adkskills/adkskills/v2@v2.0.0",
		"-require=github.com/adkskills/adkskills/v2/other@v0.3.0", // a v1 path stays one under /v2
		"-require=google.golang.org/adk/v2@v2.2.0",
		"-require=k8s.io/client-go@v0.37.0",
		// No indirect requirement: ADK v2 needs otel/log v0.20.0, and go mod tidy settles them.
		"-replace=github.com/adkskills/adkskills/v2=../..", // no v0 version names a /v2 module's
		"-replace=github.com/adkskills/adkskills/v2/other=../../other",
		"-replace=example.com/fork=example.com/fork2@v1.0.0",
		"-tool=sigs.k8s.io/agent-sandbox/packages/sandboxd/cmd/sandboxd",
		"-tool=github.com/adkskills/adkskills/v2/cmd/x",
	}, args)

	for name, js := range map[string]string{
		"the root without a replacement": `{"Module": {"Path": "github.com/adkskills/adkskills/n"},
			"Require": [{"Path": "github.com/adkskills/adkskills", "Version": "v0.4.0"}]}`,
		"the root replaced by a module": `{"Module": {"Path": "github.com/adkskills/adkskills/n"},
			"Require": [{"Path": "github.com/adkskills/adkskills", "Version": "v0.4.0"}],
			"Replace": [{"Old": {"Path": "github.com/adkskills/adkskills"}, "New": {"Path": "example.com/fork", "Version": "v0.4.1"}}]}`,
		"ADK v1 replaced": `{"Module": {"Path": "github.com/adkskills/adkskills/n"},
			"Replace": [{"Old": {"Path": "google.golang.org/adk"}, "New": {"Path": "../adk"}}]}`,
	} {
		_, err := goModEdits(parseGoMod(t, js), cfg)
		assert.Error(t, err, name)
	}
}

func TestTidyOrder(t *testing.T) {
	mods := map[string]*goMod{
		"a":     parseGoMod(t, `{"Replace": [{"Old": {"Path": "x/c"}, "New": {"Path": "../c/d"}}, {"Old": {"Path": "x"}, "New": {"Path": ".."}}]}`),
		"b":     parseGoMod(t, `{"Replace": [{"Old": {"Path": "x/c"}, "New": {"Path": "x/c", "Version": "v1.0.0"}}]}`),
		"c/d":   parseGoMod(t, `{"Replace": [{"Old": {"Path": "x/e"}, "New": {"Path": "../../e"}}]}`),
		"e":     parseGoMod(t, `{}`),
		"loop1": parseGoMod(t, `{"Replace": [{"Old": {"Path": "x/loop2"}, "New": {"Path": "../loop2"}}]}`),
		"loop2": parseGoMod(t, `{"Replace": [{"Old": {"Path": "x/loop1"}, "New": {"Path": "../loop1"}}]}`),
	}
	assert.Equal(t, []string{"e", "c/d", "a", "b", "loop2", "loop1"}, tidyOrder(mods))
}

// TestRunMirrorsNestedModule runs the generator, go mod tidy included, on a
// root with a nested module that requires the root through a replacement
// by directory and has a tool, as codeexec/agentsandbox does. It needs no
// download: every module is local.
func TestRunMirrorsNestedModule(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOFLAGS", "")
	root := t.TempDir()
	const nested = "module " + module + "/x/sub\n\ngo 1.25\n\n" +
		"require " + module + " v0.0.0\n\nreplace " + module + " => ../..\n\ntool " + module + "/cmd/tool\n"
	tree(t, root, map[string]string{
		"go.mod":                "module " + module + "\n\ngo 1.25\n",
		"a/a.go":                "package a\n\nconst Name = \"a\"\n",
		"cmd/tool/main.go":      "package main\n\nimport \"github.com/adkskills/adkskills/a\"\n\nfunc main() { println(a.Name) }\n",
		"deploy/kit.yaml":       "kind: Kit\n",
		"x/sub/go.mod":          nested,
		"x/sub/sub.go":          "package sub\n\nimport _ \"github.com/adkskills/adkskills/a\"\n",
		"x/sub/sub_test.go":     "package sub\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestKit(t *testing.T) {\n\tif _, err := os.Stat(\"../../deploy/kit.yaml\"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
		"x/sub/testdata/in.txt": "input",
		// A nested module new to v2, whose code imports a module only its
		// own go.mod finds: v2/ is tidied once its go.mod is there.
		"y/fresh/go.mod":          "module " + module + "/y/fresh\n\ngo 1.25\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../../testdata/lib\n",
		"y/fresh/fresh.go":        "package fresh\n\nimport _ \"example.com/lib\"\n",
		"testdata/lib/go.mod":     "module example.com/lib\n\ngo 1.25\n",
		"testdata/lib/lib.go":     "package lib\n",
		"x/gone/go.mod":           "module " + module + "/x/gone\n\ngo 1.25\n",
		"x/gone/gone.go":          "package gone\n",
		"v2/x/sub/stale.go":       "package sub\n\nimport _ \"example.com/gone\"\n",
		"v2/x/sub/testdata/old":   "gone from the root",
		"v2/x/sub/go.mod":         "module " + module + "/v2/x/sub\n\ngo 1.25\n\nrequire " + module + " v0.0.0\n\nreplace example.com/gone => ./gone\n\ntool example.com/gone/cmd\n",
		"v2/x/sub/go.sum":         "",
		"v2/x/gone/go.mod":        "module " + module + "/v2/x/gone\n\ngo 1.25\n",
		"v2/x/gone/still_here.go": "package gone\n",
	})
	require.NoError(t, os.RemoveAll(filepath.Join(root, "x", "gone"))) // the root dropped it
	out := filepath.Join(root, "v2")

	require.NoError(t, run(root, "v2.2.0", "", true))
	assert.Equal(t, []string{
		"README.md", "a/a.go", "cmd/tool/main.go", "deploy/kit.yaml", "go.mod",
		"testdata/lib/go.mod", "testdata/lib/lib.go",
		"x/sub/go.mod", "x/sub/go.sum", "x/sub/sub.go", "x/sub/sub_test.go", "x/sub/testdata/in.txt",
		"y/fresh/fresh.go", "y/fresh/go.mod",
	}, listing(t, out))
	m, err := readModule(filepath.Join(out, "x", "sub"))
	require.NoError(t, err)
	assert.Equal(t, module+"/v2/x/sub", m.Module.Path)
	require.Len(t, m.Require, 1)
	assert.Equal(t, module+"/v2", m.Require[0].Path)
	assert.Equal(t, "v2.0.0", m.Require[0].Version)
	assert.Equal(t, []replace{{Old: modVersion{Path: module + "/v2"}, New: modVersion{Path: "../.."}}}, m.Replace, "the last run's replacement is gone")
	require.Len(t, m.Tool, 1)
	assert.Equal(t, module+"/v2/cmd/tool", m.Tool[0].Path)
	assert.Contains(t, read(t, filepath.Join(out, "x", "sub", "sub.go")), `"github.com/adkskills/adkskills/v2/a"`)

	// The twin builds, runs its tool from v2's code and finds v2's mirror
	// of deploy/.
	for _, args := range [][]string{{"build", "./..."}, {"tool", "tool"}, {"test", "./..."}} {
		_, err := goCommand(filepath.Join(out, "x", "sub"), args...)
		require.NoError(t, err)
	}

	_, err = goCommand(filepath.Join(out, "y", "fresh"), "build", "./...")
	require.NoError(t, err)

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
