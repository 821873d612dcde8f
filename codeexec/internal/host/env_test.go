package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
)

// fakePyenv builds a pyenv-like tree: root/shims/<prog> (a shim script),
// root/versions/<v>/bin/<prog> for each version, root/version = global.
func fakePyenv(t *testing.T, prog, global string, versions ...string) (root string) {
	t.Helper()
	root = t.TempDir()
	shim := "#!/usr/bin/env bash\nset -e\nexport PYENV_ROOT=\"" + root + "\"\nexec \"" + root + "/libexec/pyenv\" exec \"$program\" \"$@\"\n"
	writeExec(t, filepath.Join(root, "shims", prog), shim)
	for _, v := range versions {
		writeExec(t, filepath.Join(root, "versions", v, "bin", prog), "#!/bin/sh\n")
	}
	if global != "" {
		if err := os.WriteFile(filepath.Join(root, "version"), []byte("# comment\n"+global+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func writeExec(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestResolveInterpreter(t *testing.T) {
	root := fakePyenv(t, "python3", "3.99.0 3.98.0", "3.98.0", "3.99.0", "3.97.0")
	noGlobal := fakePyenv(t, "python3", "")
	sysDir := t.TempDir()
	writeExec(t, filepath.Join(sysDir, "python3"), "#!/bin/sh\n")
	skill := t.TempDir()
	writeExec(t, filepath.Join(skill, "bin", "run"), "#!/bin/sh\n")
	plain := t.TempDir()
	writeExec(t, filepath.Join(plain, "tool"), "#!/bin/sh\n")
	writeExec(t, filepath.Join(plain, "shims", "python3"), "#!/bin/sh\n# not pyenv\n")

	pathOf := func(dirs ...string) string { return "PATH=" + strings.Join(dirs, ":") }
	tests := []struct {
		name    string
		command []string
		env     []string
		want    string // argv[0]; "" for an ErrStart
	}{
		{"PlainName", []string{"tool", "-x"}, []string{pathOf("", "relative", plain)}, filepath.Join(plain, "tool")},
		{"ChildPATHNotHost", []string{"tool"}, []string{pathOf(sysDir)}, ""},
		{"NotFound", []string{"no-such-tool"}, []string{pathOf(plain)}, ""},
		{"Absolute", []string{filepath.Join(plain, "tool")}, nil, filepath.Join(plain, "tool")},
		{"RelativeToSkillRoot", []string{"bin/run"}, nil, filepath.Join(skill, "bin", "run")},
		{"NotAPyenvShim", []string{"python3"}, []string{pathOf(filepath.Join(plain, "shims"))}, filepath.Join(plain, "shims", "python3")},
		{"ShimGlobalVersion", []string{"python3"}, []string{pathOf(filepath.Join(root, "shims"), sysDir)}, filepath.Join(root, "versions", "3.99.0", "bin", "python3")},
		{"ShimPYENV_VERSION", []string{"python3"}, []string{pathOf(filepath.Join(root, "shims")), "PYENV_VERSION=3.97.0"}, filepath.Join(root, "versions", "3.97.0", "bin", "python3")},
		{"ShimVersionFallback", []string{"python3"}, []string{pathOf(filepath.Join(root, "shims")), "PYENV_VERSION=9.9:3.98.0"}, filepath.Join(root, "versions", "3.98.0", "bin", "python3")},
		{"ShimSystem", []string{"python3"}, []string{pathOf(filepath.Join(root, "shims"), sysDir), "PYENV_VERSION=system"}, filepath.Join(sysDir, "python3")},
		{"ShimNoVersionFileIsSystem", []string{"python3"}, []string{pathOf(filepath.Join(noGlobal, "shims"), sysDir)}, filepath.Join(sysDir, "python3")},
		{"ShimUnresolvedKept", []string{"python3"}, []string{pathOf(filepath.Join(root, "shims")), "PYENV_VERSION=3.9"}, filepath.Join(root, "shims", "python3")},
		{"ShimVersionTraversal", []string{"python3"}, []string{pathOf(filepath.Join(root, "shims")), "PYENV_VERSION=../../x"}, filepath.Join(root, "shims", "python3")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveInterpreter(tt.command, tt.env, skill)
			if tt.want == "" {
				if !errors.Is(err, codeexec.ErrStart) {
					t.Errorf("resolveInterpreter = %v, %v; want ErrStart", got, err)
				}
				return
			}
			if err != nil || got[0] != tt.want || len(got) != len(tt.command) {
				t.Errorf("resolveInterpreter = %v, %v; want [%s ...]", got, err, tt.want)
			}
		})
	}
}
