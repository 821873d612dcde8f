// Package depcheck tells an operator, before any run, what a skill's scripts
// need: the dependencies each declares (a PEP 723 block, a
// requirements.txt, a package.json) and which of them, and of the modules a
// Python script imports, the interpreter and the dependency store cannot
// satisfy without installing. It never installs anything. adkskills
// validate --deps prints it.
package depcheck

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"

	"github.com/adkskills/adkskills/codeexec/internal/deps"
	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// Script is what one script needs.
type Script struct {
	// Path is the script, relative to the skill root.
	Path string
	// Source is the file that declares its dependencies ("" for none).
	Source string
	// Declared are the declared packages: "name[extras] specifier" for
	// Python, "name@range" for Node.
	Declared []string
	// Unsatisfied are the declared packages neither the interpreter nor an
	// environment of the store has: a run installs them (or, with
	// installation off, fails on them).
	Unsatisfied []string
	// Reason says why they are unsatisfied.
	Reason string
	// MissingImports are the top-level modules a Python script imports that
	// nothing installed or declared provides: the script fails on them.
	MissingImports []string
	// Err is a declaration that is malformed or refused, or a script that
	// does not parse.
	Err error
}

// Check checks each of scripts (paths relative to the skill root) of the
// skill folder skill, run by python or node (a command found in PATH as
// the executors find it, a pyenv shim resolved, or an absolute path; ""
// skips that language), against the dependency store in storeDir ("" for
// the default one). Scripts of other languages are left out.
func Check(ctx context.Context, skill fs.FS, scripts []string, python, node, storeDir string) ([]Script, error) {
	store, err := deps.New(deps.Config{Dir: storeDir, NoInstall: true})
	if err != nil {
		return nil, err
	}
	env := os.Environ()
	for _, prog := range []*string{&python, &node} {
		if *prog == "" {
			continue
		}
		argv, err := host.ResolveInterpreter([]string{*prog}, env, "/")
		if err != nil {
			return nil, err
		}
		*prog = argv[0]
	}
	var out []Script
	for _, p := range scripts {
		s := Script{Path: p}
		lang, prog := language(p, python, node)
		if prog == "" {
			continue
		}
		d, err := deps.Declared(skill, p, lang)
		if err != nil {
			s.Err = err
			out = append(out, s)
			continue
		}
		if d != nil {
			s.Source = d.Source
			for _, r := range d.Requirements {
				s.Declared = append(s.Declared, r.String())
			}
			s.Declared = append(s.Declared, d.Packages...)
		}
		env, err := store.Resolve(ctx, skill, p, deps.Interpreter{Language: lang, Path: prog})
		var ie *deps.InstallError
		switch {
		case errors.As(err, &ie):
			s.Unsatisfied, s.Reason = ie.Packages, ie.Reason
		case err != nil:
			s.Err = err
		}
		if lang == deps.Python && err == nil {
			missing, merr := deps.MissingImports(ctx, prog, skill, []string{p}, env)
			if merr != nil {
				s.Err = merr
			}
			for _, m := range missing {
				if m.Module == "" {
					s.Err = errors.New(m.String())
					continue
				}
				s.MissingImports = append(s.MissingImports, m.Module)
			}
		}
		env.Close()
		out = append(out, s)
	}
	return out, nil
}

// language is the language of the script p by its extension, and the
// interpreter that runs it ("" for a script neither runs).
func language(p, python, node string) (string, string) {
	switch path.Ext(p) {
	case ".py":
		return deps.Python, python
	case ".js", ".mjs", ".cjs":
		return deps.Node, node
	}
	return "", ""
}
