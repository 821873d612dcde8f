package host

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/execenv"
)

// BuildEnv returns a child environment ("K=V", sorted by name): the
// allowlist (execenv.Build) with the workspace seen at d and PATH hostPATH,
// then each layer in order. Nothing else of the host's environment is
// inherited.
func BuildEnv(d Dirs, hostPATH string, layers ...map[string]string) []string {
	return execenv.Build(d.Skill, d.Home, d.Tmp, hostPATH, layers...)
}

// LookupEnv returns the last value of name in env ("K=V" entries).
func LookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// ResolveInterpreter turns an interpreter command into the argv prefix to
// run: command[0] becomes an absolute path to an executable file, the rest
// is kept. Both executors use it; a Sandbox can bind the returned path
// read-only and run it as is.
//
//   - A name without a slash ("python3") is searched in the PATH of env, the
//     child's environment (not the agent's: the child runs with env).
//     Empty and relative PATH entries are skipped, so the search never
//     depends on a working directory.
//   - A relative path with a slash ("bin/run") is taken relative to dir,
//     the child's working directory (the skill root); an absolute path is
//     used as is.
//   - A pyenv shim (…/shims/<prog>, a script that execs libexec/pyenv) is
//     replaced by the interpreter it would run: the first entry of
//     PYENV_VERSION (from env) or of $PYENV_ROOT/version whose
//     versions/<v>/bin/<prog> is executable, or for "system" the next
//     <prog> in PATH after the shims. This makes a shim independent of HOME
//     (which points into the workspace) and saves the shim's start-up; a
//     .python-version file inside the skill is not honoured. When the
//     version cannot be resolved this way (an unknown version prefix, say),
//     the shim is kept; it still works because PYENV_ROOT and
//     PYENV_VERSION are passed through.
//
// A command that cannot be found is an error wrapping ErrStart.
func ResolveInterpreter(command []string, env []string, dir string) ([]string, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, fmt.Errorf("%w: empty interpreter command", codeexec.ErrStart)
	}
	name := command[0]
	pathList, _ := LookupEnv(env, "PATH")
	var found string
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := exec.LookPath(p); err != nil {
			return nil, fmt.Errorf("%w: interpreter %q: %w", codeexec.ErrStart, name, err)
		}
		found = p
	} else {
		found = searchPath(name, filepath.SplitList(pathList), false)
		if found == "" {
			return nil, fmt.Errorf("%w: interpreter %q not found in PATH %q", codeexec.ErrStart, name, pathList)
		}
	}
	if real := resolvePyenvShim(found, env); real != "" {
		found = real
	}
	return append([]string{found}, command[1:]...), nil
}

// searchPath returns the first executable dir/name over dirs, skipping
// empty and relative entries (and pyenv shim directories when skipShims), or
// "".
func searchPath(name string, dirs []string, skipShims bool) string {
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) || (skipShims && filepath.Base(d) == "shims") {
			continue
		}
		p := filepath.Join(d, name)
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return ""
}

// resolvePyenvShim returns the interpreter the pyenv shim at shim would run
// with env, or "" when shim is not a pyenv shim or the version cannot be
// resolved without running pyenv.
func resolvePyenvShim(shim string, env []string) string {
	shimDir := filepath.Dir(shim)
	if filepath.Base(shimDir) != "shims" {
		return ""
	}
	head := make([]byte, 4096)
	f, err := os.Open(shim)
	if err != nil {
		return ""
	}
	n, _ := f.Read(head)
	f.Close()
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) || !bytes.Contains(head, []byte(`libexec/pyenv" exec`)) {
		return ""
	}
	root := filepath.Dir(shimDir)
	if v, ok := LookupEnv(env, "PYENV_ROOT"); ok && v != "" {
		root = v
	}
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "export PYENV_ROOT="); ok {
			root = strings.Trim(v, `"'`)
		}
	}

	var versions []string
	if v, ok := LookupEnv(env, "PYENV_VERSION"); ok && v != "" {
		versions = strings.Split(v, ":")
	} else if b, err := os.ReadFile(filepath.Join(root, "version")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				versions = append(versions, strings.Fields(line)...)
			}
		}
	} else {
		versions = []string{"system"}
	}

	prog := filepath.Base(shim)
	pathList, _ := LookupEnv(env, "PATH")
	for _, v := range versions {
		if v == "system" {
			if p := searchPath(prog, filepath.SplitList(pathList), true); p != "" {
				return p
			}
			continue
		}
		if strings.Contains(v, "/") || v == ".." || v == "." {
			continue
		}
		p := filepath.Join(root, "versions", v, "bin", prog)
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return ""
}
