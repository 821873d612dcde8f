package deps_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/adkskills/adkskills/codeexec/internal/deps"
)

// A store with installation off, asked for a script that declares a
// package no environment and no interpreter has: the answer names it. An
// executor would add env.Vars(skillRoot) to the script's environment and,
// in a sandbox, bind env.Binds read-only at the same path, then Close env
// after the run.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "deps-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	store, err := deps.New(deps.Config{Dir: filepath.Join(dir, "envs"), NoInstall: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	skill := fstest.MapFS{"scripts/unpack.py": {Data: []byte(
		"# /// script\n# dependencies = [\"no-such-package-here>=0.7\"]\n# ///\nimport no_such_package_here\n")}}
	d, err := deps.Declared(skill, "scripts/unpack.py", deps.Python)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Source, "declares", d.Requirements[0])

	python := "/usr/bin/python3"
	env, err := store.Resolve(context.Background(), skill, "scripts/unpack.py", deps.Interpreter{Language: deps.Python, Path: python})
	var ie *deps.InstallError
	switch {
	case errors.As(err, &ie):
		fmt.Println(ie.Packages, errors.Is(err, deps.ErrUnavailable))
	case err != nil:
		fmt.Println(err)
	default:
		defer env.Close()
		fmt.Println(env.Vars("/workspace/skill"))
	}
	// Output:
	// scripts/unpack.py declares no-such-package-here>=0.7
	// [no-such-package-here>=0.7] true
}
