package depcheck_test

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/adkskills/adkskills/codeexec/depcheck"
)

// python is the interpreter the checks run with, or the test is skipped.
func python(t *testing.T) string {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 here")
	}
	return "python3"
}

func TestCheck(t *testing.T) {
	skill := fstest.MapFS{
		"scripts/declares.py": {Data: []byte("# /// script\n# dependencies = [\"tinydep>=1\"]\n# ///\nimport tinydep\n")},
		"scripts/imports.py":  {Data: []byte("import json\nimport nosuchmodule_adkskills\n")},
		"scripts/fine.py":     {Data: []byte("import json, os\n")},
		"scripts/bad.py":      {Data: []byte("# /// script\n# dependencies = [\"--index-url=http://evil\"]\n# ///\n")},
		"scripts/run.sh":      {Data: []byte("echo\n")},
	}
	scripts := []string{"scripts/declares.py", "scripts/imports.py", "scripts/fine.py", "scripts/bad.py", "scripts/run.sh"}
	got, err := depcheck.Check(context.Background(), skill, scripts, python(t), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]depcheck.Script{}
	for _, s := range got {
		by[s.Path] = s
	}
	if _, ok := by["scripts/run.sh"]; ok || len(got) != 4 {
		t.Errorf("checked %d scripts, a shell script among them %v: want the four Python ones", len(got), ok)
	}
	if d := by["scripts/declares.py"]; d.Source != "scripts/declares.py" || !slices.Equal(d.Declared, []string{"tinydep>=1"}) || !slices.Equal(d.Unsatisfied, []string{"tinydep>=1"}) || d.Err != nil {
		t.Errorf("declares.py: %+v", d)
	}
	if d := by["scripts/imports.py"]; !slices.Equal(d.MissingImports, []string{"nosuchmodule_adkskills"}) || len(d.Declared) != 0 || d.Err != nil {
		t.Errorf("imports.py: %+v", d)
	}
	if d := by["scripts/fine.py"]; len(d.MissingImports)+len(d.Unsatisfied)+len(d.Declared) != 0 || d.Err != nil {
		t.Errorf("fine.py: %+v", d)
	}
	if d := by["scripts/bad.py"]; d.Err == nil {
		t.Errorf("bad.py: %+v, want its refused declaration", d)
	}
}
