// Package hosttest holds the helpers the tests of the host executors share
// (codeexec/local, codeexec/sandbox, codeexec/internal/host), beside those
// of codeexectest (Skill, Script, MustRun, Paths).
package hosttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SkillDir writes a skill folder of path -> content under a fresh
// directory and returns it.
func SkillDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "skill")
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// NewWorkspaceDir is a fresh workspace directory others can enter (the
// sandbox user must reach its workspaces).
func NewWorkspaceDir(t testing.TB) string {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// MustWrite writes data to the file p.
func MustWrite(t testing.TB, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// MustMkdir makes the directory p with mode.
func MustMkdir(t testing.TB, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(p, mode); err != nil {
		t.Fatal(err)
	}
}

// MustMkdirAll makes p and its parents.
func MustMkdirAll(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatal(err)
	}
}
