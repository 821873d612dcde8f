//go:build !depsunit

package deps

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Test fixtures: wheels and source distributions made here (a wheel is a
// zip with its .dist-info; no build backend, no network), a wheelhouse,
// skills on disk, and the environment an offline operator gives pip.

// writeSdist writes a source distribution of name whose setup.py writes
// marker (proof that it ran) before doing anything else.
func writeSdist(t testing.TB, dir, name, version, marker string) {
	t.Helper()
	base := fmt.Sprintf("%s-%s", name, version)
	files := map[string]string{
		base + "/PKG-INFO": fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version),
		base + "/setup.py": fmt.Sprintf("open(%q, 'w').write('setup.py ran')\nfrom setuptools import setup\nsetup(name=%q, version=%q, py_modules=[])\n", marker, name, version),
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, p := range []string{base + "/PKG-INFO", base + "/setup.py"} {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(files[p])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[p])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, base+".tar.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTree writes files (path -> content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// offlineEnv is the environment of an operator without a network: pip
// looks only in the wheelhouse, with no configuration file of the
// machine's and a cache of the test's own.
func offlineEnv(t testing.TB, wheelhouse string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIP_") && !strings.HasPrefix(kv, "npm_config_") {
			env = append(env, kv)
		}
	}
	// PIP_USER=1 (an operator's habit) would clash with --target: the
	// store drops it.
	return append(env, "PIP_NO_INDEX=1", "PIP_FIND_LINKS="+wheelhouse, "PIP_CONFIG_FILE="+os.DevNull, "PIP_USER=1",
		"PIP_CACHE_DIR="+filepath.Join(t.TempDir(), "pip-cache"))
}

var (
	pythonOnce sync.Once
	pythonPath string
	pythonErr  error
)

// python is the absolute path of the interpreter python3 runs (a pyenv
// shim resolved), skipping the test where there is none.
func python(t testing.TB) string {
	t.Helper()
	pythonOnce.Do(func() {
		out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
		if err != nil {
			pythonErr = err
			return
		}
		pythonPath = strings.TrimSpace(string(out))
		if err := exec.Command(pythonPath, "-m", "pip", "--version").Run(); err != nil {
			pythonErr = fmt.Errorf("no pip: %w", err)
		}
	})
	if pythonErr != nil || runtime.GOOS == "windows" {
		t.Skipf("python3 with pip is needed: %v", pythonErr)
	}
	return pythonPath
}

// runPython runs script (a path in skillDir) with python and the variables
// of env, as an executor would (the skill root on PYTHONPATH, nothing of
// the host's environment), and returns its stdout.
func runPython(t testing.TB, py, skillDir, script string, env *Env) (string, error) {
	t.Helper()
	cmd := exec.Command(py, filepath.Join(skillDir, filepath.FromSlash(script)))
	cmd.Dir = skillDir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PYTHONPATH=" + skillDir, "PYTHONDONTWRITEBYTECODE=1", "HOME=" + t.TempDir()}
	for k, v := range env.Vars(skillDir) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// envDirs lists the environments and leftovers in a store's directory.
func envDirs(t testing.TB, dir string) (envs, leftovers []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case validKey(e.Name()):
			envs = append(envs, e.Name())
		case e.Name() != locksDir:
			leftovers = append(leftovers, e.Name())
		}
	}
	return envs, leftovers
}
