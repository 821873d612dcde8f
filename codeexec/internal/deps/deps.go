// Package deps installs what a skill's scripts declare they need, once per
// dependency set and interpreter, the way a Python or Node developer would,
// into a shared read-only environment that the executors show to a run.
//
// # Declarations
//
// A Python script declares its packages in its PEP 723 block ("# /// script",
// the block uv run and pipx run read); a script without one uses the
// skill's requirements.txt: scripts/requirements.txt for a script under
// scripts/ when it exists, else the one in the skill root. A Node script
// uses the skill's package.json (scripts/ first, then the root) with its
// package-lock.json or npm-shrinkwrap.json. What a skill may not choose is
// refused with ErrDeclaration: an index, --find-links, an editable or
// source build, a URL or path in place of a package name, an include that
// leaves the skill, a lock entry fetched from elsewhere than the registry.
//
// # Environments
//
// A Store keeps one environment per dependency set and interpreter
// identity (the key is a SHA-256 of both). The first Resolve builds it, in a
// temporary directory renamed into place once complete, under a file lock
// that other processes wait on; later calls and later processes find it.
// Its files and folders have no write bits and, in the sandbox, it is
// bound read-only. The store is bounded in bytes: after a build the least
// recently used environments that no run holds are removed.
//
// A Python environment is a pip --target directory: the interpreter stays
// the host's own, unchanged (the sandbox already shows it), and the
// directory is added to PYTHONPATH after the skill root. A venv would put a
// second interpreter path in front of the script and need python3-venv on
// Debian; --target needs pip alone and bypasses PEP 668's
// externally-managed refusal legitimately, since nothing is installed into
// the system. A Node environment is the node_modules that npm ci makes,
// named by NODE_PATH.
//
// # Installation
//
// pip and npm run as the agent's process (never in a script's sandbox,
// never as its user), with the operator's environment (PIP_INDEX_URL,
// PIP_FIND_LINKS, PIP_NO_INDEX, PIP_CERT, pip.conf, .npmrc, npm_config_*),
// never the script's. pip installs wheels only (--only-binary=:all:), so no
// package's setup.py runs, unless Config.AllowSourceBuilds; npm runs
// ci --ignore-scripts. With Config.NoInstall nothing is installed: a
// declaration that no environment of the store and not the interpreter
// itself satisfies is an error naming what is missing.
//
// # Using an Env
//
// Local: add Env.Vars(skillRoot) to the script's environment (PYTHONPATH
// with the skill root first, or NODE_PATH). Sandbox: the same variables
// with the sandbox's skill root, and bind every Env.Binds path read-only
// at the same path. Close the Env after the run: until then the store
// never evicts it.
package deps

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/adkskills/adkskills/internal/truncate"
	"github.com/adkskills/adkskills/internal/valid"
)

// Errors callers branch on.
var (
	// ErrDeclaration: the skill's declaration is malformed, or asks for
	// what a skill may not choose. The script should not run.
	ErrDeclaration = errors.New("invalid dependency declaration")
	// ErrUnavailable: the declared dependencies cannot be installed (or are
	// missing and installation is off). The script should not run. The
	// error is an *InstallError.
	ErrUnavailable = errors.New("dependencies unavailable")
)

// Defaults of Config.
const (
	// DefaultMaxBytes bounds a store's environments (4 GiB).
	DefaultMaxBytes = 4 << 30
	// DefaultInstallTimeout bounds one pip or npm run.
	DefaultInstallTimeout = 10 * time.Minute
	// maxOutputChars bounds the installer output an error keeps.
	maxOutputChars = 4000
)

// Language names of Interpreter.Language with dependencies.
const (
	Python = "python"
	Node   = "node"
)

// Config configures a Store. The zero value is a usable store in
// DefaultDir that installs wheels.
type Config struct {
	// Dir holds the environments. Empty: DefaultDir(). It must not be
	// under /tmp when the sandbox runs scripts (the sandbox has its own
	// /tmp) unless the sandbox binds it there.
	Dir string
	// MaxBytes bounds the environments kept (DefaultMaxBytes); one
	// environment larger than it is still built and used.
	MaxBytes int64
	// NoInstall turns installation off: a declaration that no environment
	// of the store and not the interpreter satisfies is an ErrUnavailable
	// naming what is missing.
	NoInstall bool
	// AllowSourceBuilds lets pip build packages from source (running their
	// setup.py or build backend). Off: wheels only.
	AllowSourceBuilds bool
	// Env is pip's and npm's environment. Nil: the agent's own
	// (os.Environ) at each install: the operator's PIP_*, npm_config_*,
	// HOME (pip.conf, .npmrc), certificates and proxies.
	Env []string
	// NPM is the npm program; empty: "npm" in Env's PATH.
	NPM string
	// InstallTimeout bounds one install (DefaultInstallTimeout).
	InstallTimeout time.Duration
}

// DefaultDir is where environments live by default:
// $XDG_CACHE_HOME/adkskills/deps, else ~/.cache/adkskills/deps (on macOS
// ~/Library/Caches/adkskills/deps), outside /tmp, which the sandbox
// replaces.
func DefaultDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for dependency environments (set Config.Dir): %w", err)
	}
	return filepath.Join(dir, "adkskills", "deps"), nil
}

// Interpreter is the program that will run a script.
type Interpreter struct {
	// Language is "python" or "node"; other languages declare nothing.
	Language string
	// Path is the program's absolute host path (a pyenv shim already
	// replaced by the interpreter it runs).
	Path string
}

// Env is what a run needs to see its dependencies. The zero Env (nothing
// declared, or the interpreter satisfies everything) adds nothing.
type Env struct {
	// Key names the environment in the store ("" when there is none).
	Key string
	// Dir is the environment's directory ("" when there is none).
	Dir string
	// PythonPath are folders to put on PYTHONPATH after the skill root.
	PythonPath []string
	// NodePath are folders to put on NODE_PATH. An ES module ignores
	// NODE_PATH: a node_modules link to NodePath[0] in the skill root
	// serves both.
	NodePath []string
	// Binds are host folders a sandbox binds read-only at the same path.
	Binds []string
	// Built is true when this call installed the environment.
	Built bool
	// Declaration is what the skill declares for the script (nil: nothing).
	Declaration *Declaration

	release func()
}

// Vars returns the variables to add to the script's environment, with the
// skill root at skillRoot as the script sees it (PYTHONPATH keeps it
// first, as the executors' allowlist has it).
func (e *Env) Vars(skillRoot string) map[string]string {
	switch {
	case len(e.PythonPath) > 0:
		return map[string]string{"PYTHONPATH": strings.Join(append([]string{skillRoot}, e.PythonPath...), string(os.PathListSeparator))}
	case len(e.NodePath) > 0:
		return map[string]string{"NODE_PATH": strings.Join(e.NodePath, string(os.PathListSeparator))}
	}
	return nil
}

// Close lets the store evict the environment again. It is safe to call
// more than once.
func (e *Env) Close() error {
	if e != nil && e.release != nil {
		e.release()
		e.release = nil
	}
	return nil
}

// InstallError says which declared packages could not be installed and
// why. It wraps ErrUnavailable.
type InstallError struct {
	// Tool is "pip" or "npm".
	Tool string
	// Packages are the packages the failure names (else every declared
	// one).
	Packages []string
	// Reason says why: "no matching version", "no index reachable", "not
	// installed, and installation is off", ...
	Reason string
	// Output is the installer's output, head and tail kept (at most
	// 4000 characters).
	Output string
}

// Error names the packages and the reason, then the installer's output.
func (e *InstallError) Error() string {
	s := fmt.Sprintf("%v: %s: %s", ErrUnavailable, e.Tool, e.Reason)
	if len(e.Packages) > 0 {
		s = fmt.Sprintf("%v: %s could not install %s: %s", ErrUnavailable, e.Tool, strings.Join(e.Packages, ", "), e.Reason)
	}
	if e.Output != "" {
		s += "\n" + e.Tool + " said:\n" + e.Output
	}
	return s
}

// Unwrap returns ErrUnavailable.
func (e *InstallError) Unwrap() error { return ErrUnavailable }

// capOutput bounds installer output for an error.
func capOutput(s string) string { return truncate.String(strings.TrimSpace(s), maxOutputChars) }

// Declaration is what a skill declares for one script.
type Declaration struct {
	// Language is "python" or "node".
	Language string
	// Source is the declaring file, relative to the skill root: the
	// script itself (PEP 723), a requirements.txt, a package.json.
	Source string
	// Requirements are the Python packages, in declaration order.
	Requirements []Requirement
	// Constraints are the requirements.txt -c constraints.
	Constraints []Requirement
	// RequiresPython is the PEP 723 requires-python specifier ("" none).
	RequiresPython string
	// Pre is requirements.txt's --pre.
	Pre bool
	// Packages are the Node packages of package.json, "name@range",
	// sorted.
	Packages []string

	requiresPython specifier
	npm            *npmProject
}

// empty reports whether the declaration asks for nothing to install.
func (d *Declaration) empty() bool {
	return d == nil || len(d.Requirements) == 0 && len(d.Packages) == 0
}

// Declared returns what the skill declares for script (a path relative to
// the skill root) run as language: nil when nothing. A malformed or
// refused declaration is an error wrapping ErrDeclaration.
func Declared(skill fs.FS, script, language string) (*Declaration, error) {
	script, err := valid.Path(script)
	if err != nil || script == "." {
		return nil, fmt.Errorf("%w: script path: %v", ErrDeclaration, err)
	}
	switch language {
	case Python:
		return declaredPython(skill, script)
	case Node:
		return declaredNode(skill, script)
	}
	return nil, nil
}

// nearest returns the declaration file to use for script: under scripts/
// the one in scripts/ when it exists, else the skill root's ("" when
// neither exists).
func nearest(skill fs.FS, script, name string) (string, error) {
	var cands []string
	if strings.HasPrefix(script, "scripts/") {
		cands = append(cands, path.Join("scripts", name))
	}
	cands = append(cands, name)
	for _, c := range cands {
		fi, err := fs.Stat(skill, c)
		switch {
		case err == nil && fi.Mode().IsRegular():
			return c, nil
		case err == nil:
			return "", fmt.Errorf("%w: %s is not a regular file", ErrDeclaration, c)
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("%w: %s: %w", ErrDeclaration, c, err)
		}
	}
	return "", nil
}

// declaredPython reads a Python script's PEP 723 block, else the nearest
// requirements.txt.
func declaredPython(skill fs.FS, script string) (*Declaration, error) {
	src, err := readBounded(skill, script)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDeclaration, script, err)
	}
	meta, found, err := ParseScriptMetadata(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", script, err)
	}
	if found {
		return &Declaration{Language: Python, Source: script, Requirements: meta.Dependencies,
			RequiresPython: meta.RequiresPython, requiresPython: meta.requiresPython}, nil
	}
	file, err := nearest(skill, script, "requirements.txt")
	if err != nil || file == "" {
		return nil, err
	}
	rs, err := parseRequirementsFile(skill, file)
	if err != nil {
		return nil, err
	}
	return &Declaration{Language: Python, Source: file, Requirements: rs.reqs, Constraints: rs.constraints, Pre: rs.pre}, nil
}

// Resolve returns the environment script needs when in runs it: nothing
// when it declares nothing, else the store's environment for its
// declaration and in, built now if needed (unless installation is off).
// The caller must Close the Env after the run.
//
// Errors: ErrDeclaration for a malformed or refused declaration, an
// *InstallError (ErrUnavailable) when it cannot be satisfied, the
// context's error when ctx ends first.
func (s *Store) Resolve(ctx context.Context, skill fs.FS, script string, in Interpreter) (*Env, error) {
	d, err := Declared(skill, script, in.Language)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return &Env{}, nil
	}
	switch in.Language {
	case Python:
		return s.resolvePython(ctx, d, in)
	case Node:
		return s.resolveNode(ctx, d, in)
	}
	return &Env{}, nil
}
