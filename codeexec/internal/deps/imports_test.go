//go:build !depsunit

package deps

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adkskills/adkskills/codeexec/internal/deps/depstest"
)

// TestMissingImports: the static check reports the imports the
// interpreter cannot find, and only those: not the standard library, not
// the skill's own modules (beside the script or in the root), not
// optional imports, not relative ones; with the environment on the path,
// its packages are found too. A script that does not parse says so.
func TestMissingImports(t *testing.T) {
	f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0")}, map[string]string{
		"scripts/run.py": pep723(`"tinydep"`, `import json, os.path
import tinydep
from nosuchmod.sub import x
import helper, shared
from . import sibling
try:
    import optional_one
except ImportError:
    optional_one = None
try:
    import optional_two
except (ValueError, ModuleNotFoundError):
    pass
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    import typing_only
def later():
    import nosuchmod2
`),
		"scripts/helper.py":  "",
		"shared/__init__.py": "",
		"scripts/broken.py":  "def (:\n",
	})
	tests := []struct {
		name    string
		withEnv bool
		want    []MissingImport
	}{
		{"WithoutEnvironment", false, []MissingImport{{Script: "scripts/broken.py", Line: 1, SyntaxError: "invalid syntax"},
			{Script: "scripts/run.py", Line: 5, Module: "tinydep"}, {Script: "scripts/run.py", Line: 6, Module: "nosuchmod"},
			{Script: "scripts/run.py", Line: 21, Module: "nosuchmod2"}}},
		{"WithEnvironment", true, []MissingImport{{Script: "scripts/broken.py", Line: 1, SyntaxError: "invalid syntax"},
			{Script: "scripts/run.py", Line: 6, Module: "nosuchmod"}, {Script: "scripts/run.py", Line: 21, Module: "nosuchmod2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env *Env
			if tt.withEnv {
				var err error
				if env, err = f.resolve(t, f.store(t, Config{}), "scripts/run.py"); err != nil {
					t.Fatal(err)
				}
				defer env.Close()
			}
			got, err := MissingImports(t.Context(), f.py, os.DirFS(f.skill), []string{"scripts/run.py", "scripts/broken.py"}, env)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("MissingImports =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
	if _, err := MissingImports(t.Context(), f.py, os.DirFS(f.skill), []string{"../x.py"}, nil); err == nil {
		t.Error("a script outside the skill was accepted")
	}
	if _, err := MissingImports(t.Context(), filepath.Join(t.TempDir(), "nopython"), os.DirFS(f.skill), []string{"scripts/run.py"}, nil); err == nil {
		t.Error("a missing interpreter was accepted")
	}
	if s := (MissingImport{Script: "a.py", Line: 3, Module: "lxml"}).String(); s != "a.py:3: imports lxml, which the interpreter cannot find" {
		t.Errorf("String = %q", s)
	}
}
