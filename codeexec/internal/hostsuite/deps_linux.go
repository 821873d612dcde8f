package hostsuite

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/deps/depstest"
)

// printVersion imports the wheel the tests build and prints its version.
const printVersion = "import tinydep\nprint(tinydep.VERSION)\n"

// pep723 declares deps in a PEP 723 block above body.
func pep723(deps, body string) string {
	return "# /// script\n# dependencies = [" + deps + "]\n# ///\n" + body
}

// testDependencies: what a script declares (a PEP 723 block, a
// requirements.txt) is installed from the operator's own pip configuration
// (here an offline wheelhouse) and seen by the script; what cannot be
// installed is an error naming it, and nothing runs; with installation off
// a missing package is reported, not installed; a module nothing declares
// is named in the result's note.
func testDependencies(t *testing.T, newExec NewExecutor) {
	if err := exec.Command("python3", "-m", "pip", "--version").Run(); err != nil {
		t.Skipf("python3 has no pip here, so nothing can be installed: %v", err)
	}
	wheelhouse := t.TempDir()
	depstest.WriteWheel(t, wheelhouse, depstest.PackageWheel("tinydep", "1.0"))
	// An offline operator's pip: only the wheelhouse, no machine config.
	t.Setenv("PIP_NO_INDEX", "1")
	t.Setenv("PIP_FIND_LINKS", wheelhouse)
	t.Setenv("PIP_CONFIG_FILE", os.DevNull)
	t.Setenv("PIP_CACHE_DIR", filepath.Join(t.TempDir(), "pip-cache"))
	store := t.TempDir()
	if err := os.Chmod(store, 0o755); err != nil { // the sandbox user reads the environments
		t.Fatal(err)
	}
	writable(t, store)
	tests := []struct {
		name    string
		files   map[string]string
		opts    Options
		stdout  string
		errText string // the error wraps ErrDependencies and holds this
		note    string
	}{
		{"PEP723", map[string]string{"scripts/run.py": pep723(`"tinydep"`, printVersion)}, Options{}, "1.0\n", "", ""},
		{"Requirements", map[string]string{"requirements.txt": "tinydep==1.0\n", "scripts/run.py": printVersion}, Options{}, "1.0\n", "", ""},
		{"Unavailable", map[string]string{"scripts/run.py": pep723(`"nosuchdep>=2"`, "open('ran', 'w')\n")}, Options{}, "", "pip could not install nosuchdep", ""},
		{"NoInstall", map[string]string{"scripts/run.py": pep723(`"tinydep"`, printVersion)}, Options{NoInstall: true, DependencyStore: filepath.Join(t.TempDir(), "empty")}, "", "tinydep", ""},
		{"Undeclared", map[string]string{"scripts/run.py": printVersion}, Options{}, "", "", "the Python module tinydep, which is not installed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			if o.DependencyStore != "" {
				writable(t, filepath.Dir(o.DependencyStore))
			}
			if o.DependencyStore == "" {
				o.DependencyStore = store
			}
			req := &codeexec.Request{Skill: codeexectest.Skill(tt.files), Script: "scripts/run.py"}
			res, err := newExec(o).Execute(t.Context(), req)
			if tt.errText != "" {
				if !errors.Is(err, codeexec.ErrDependencies) || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("Execute = %v, %v; want ErrDependencies naming %q", res, err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout.Text != tt.stdout || !strings.Contains(res.Note, tt.note) {
				t.Errorf("stdout %q, note %q (stderr %q); want %q and a note with %q", res.Stdout.Text, res.Note, res.Stderr.Text, tt.stdout, tt.note)
			}
		})
	}
}

// writable makes the environments under dir writable again before the test
// removes it: they are read-only, which only root's removal ignores.
func writable(t *testing.T, dir string) {
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
	})
}
