package depcheck_test

import (
	"context"
	"fmt"
	"os"
	"testing/fstest"

	"github.com/adkskills/adkskills/codeexec/depcheck"
)

func ExampleCheck() {
	skill := fstest.MapFS{"scripts/report.py": {Data: []byte("import json\nimport not_installed_anywhere\n")}}
	store, _ := os.MkdirTemp("", "deps-")
	defer os.RemoveAll(store)
	report, err := depcheck.Check(context.Background(), skill, []string{"scripts/report.py"}, "python3", "", store)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range report {
		fmt.Printf("%s: missing imports %v\n", s.Path, s.MissingImports)
	}
	// Output:
	// scripts/report.py: missing imports [not_installed_anywhere]
}
