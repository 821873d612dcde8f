package codeexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLocalWorkspaceLayout: the run's root, 0700 under the workspace
// directory, holds the child's part (also 0700), which holds the skill
// root (the cwd), HOME and TMPDIR.
func TestLocalWorkspaceLayout(t *testing.T) {
	dir := t.TempDir()
	src := `import os, stat
ws = os.path.dirname(os.getcwd())
root = os.path.dirname(ws)
print(os.path.dirname(root))
print(oct(stat.S_IMODE(os.stat(root).st_mode)), oct(stat.S_IMODE(os.stat(ws).st_mode)))
print(os.path.relpath(os.getcwd(), ws), os.path.relpath(os.environ["HOME"], ws), os.path.relpath(os.environ["TMPDIR"], ws))
`
	res := mustRun(t, NewLocal(WithWorkspaceDir(dir)), script("scripts/ws.py", src))
	want := dir + "\n0o700 0o700\nskill .home .tmp\n"
	if res.Stdout.Text != want {
		t.Errorf("stdout %q (stderr %q), want %q", res.Stdout.Text, res.Stderr.Text, want)
	}
}

func TestLocalInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  Option
	}{
		{"RelativeWorkspaceDir", WithWorkspaceDir("relative/dir")},
		{"EmptyWorkspaceDir", WithWorkspaceDir("")},
		{"NegativeWaitDelay", WithWaitDelay(-time.Second)},
		{"BadInterpreterTable", WithInterpreters(Interpreters{{Language: "x", Extensions: []string{"py"}, Command: []string{"python3"}}})},
		{"DuplicateLanguage", WithInterpreters(append(DefaultInterpreters(), DefaultInterpreters()[0]))},
		{"EnvName", WithEnv(map[string]string{"A=B": "x"})},
		{"PassEnvName", WithPassEnv("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewLocal(tt.opt).Execute(context.Background(), script("scripts/a.sh", "echo hi"))
			if !errors.Is(err, ErrInvalidConfig) || !errors.Is(NewLocal(tt.opt).Err(), ErrInvalidConfig) {
				t.Errorf("err = %v, Err() = %v, want ErrInvalidConfig", err, NewLocal(tt.opt).Err())
			}
		})
	}
}

func TestLocalWorkspaceDirMissing(t *testing.T) {
	e := NewLocal(WithWorkspaceDir(filepath.Join(t.TempDir(), "missing")))
	if _, err := e.Execute(context.Background(), script("scripts/a.sh", "echo hi")); !errors.Is(err, ErrWorkspace) {
		t.Errorf("err = %v, want ErrWorkspace", err)
	}
}

func TestLocalInterpreterTable(t *testing.T) {
	table := append(DefaultInterpreters(), Interpreter{Language: "posix", Extensions: []string{".posix"}, Command: []string{"sh", "-e"}})
	e := NewLocal(WithInterpreters(table))
	table[len(table)-1].Command[0] = "changed-after-NewLocal" // the executor holds a copy
	res := mustRun(t, e, script("scripts/a.POSIX", "echo \"$0 $1\"; false; echo unreachable"))
	if res.Stdout.Text != "scripts/a.POSIX \n" || res.ExitCode != 1 {
		t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	if _, err := NewLocal(WithInterpreters(Interpreters{})).Execute(context.Background(), script("scripts/a.py", "")); !errors.Is(err, ErrUnsupportedScript) {
		t.Errorf("empty table: err = %v, want ErrUnsupportedScript", err)
	}
}

// TestLocalShebangScript: without a request Interpreter, a script without
// an extension runs with the interpreter its #! line names, whether it
// comes from the skill or from Files.
func TestLocalShebangScript(t *testing.T) {
	src := "#!/usr/bin/env python3\nimport sys\nprint('py', sys.argv[1:])\n"
	fromFiles := &Request{Files: []File{{Path: "scripts/tool", Data: []byte(src)}}, Script: "scripts/tool", Args: []string{"a"}}
	for _, req := range []*Request{script("scripts/tool", src), fromFiles} {
		req.Args = []string{"a"}
		res := mustRun(t, NewLocal(), req)
		if res.Stdout.Text != "py ['a']\n" || res.ExitCode != 0 {
			t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
		}
	}
	if _, err := NewLocal().Execute(context.Background(), script("scripts/tool", "#!/usr/bin/env ruby\n")); !errors.Is(err, ErrUnsupportedScript) {
		t.Errorf("a #! line no entry runs: err = %v, want ErrUnsupportedScript", err)
	}
}

func TestLocalCancelledBeforeStart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewLocal(WithWorkspaceDir(dir)).Execute(ctx, script("scripts/a.sh", "echo hi"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

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
			got, err := resolveInterpreter(tt.command, tt.env, skill)
			if tt.want == "" {
				if !errors.Is(err, ErrStart) {
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

// TestLocalPyenvShim runs python3 through this machine's pyenv shim, if it
// has one: the shim is resolved even though HOME points into the workspace.
func TestLocalPyenvShim(t *testing.T) {
	shim, err := exec.LookPath("python3")
	if err != nil || filepath.Base(filepath.Dir(shim)) != "shims" {
		t.Skip("python3 is not a pyenv shim here")
	}
	got, err := resolveInterpreter([]string{"python3"}, []string{"PATH=" + os.Getenv("PATH")}, t.TempDir())
	if err != nil || got[0] == shim {
		t.Fatalf("resolveInterpreter = %v, %v; want the real interpreter behind %s", got, err, shim)
	}
	res := mustRun(t, NewLocal(), script("scripts/v.py", "import sys\nprint(sys.executable)"))
	if strings.TrimSpace(res.Stdout.Text) == "" || res.ExitCode != 0 {
		t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
}

// TestLocalOmittedListCapped: a run that writes far more files than the
// limits allow gets MaxOmittedListed entries and one that counts the rest.
func TestLocalOmittedListCapped(t *testing.T) {
	const extra = 7
	n := 1 + MaxOmittedListed + extra // one kept, the rest omitted
	req := script("scripts/flood.py", "import sys\nfor i in range(int(sys.argv[1])):\n    open('f%05d' % i, 'w').write('x')\n")
	req.Args = []string{strconv.Itoa(n)}
	req.Limits.Output = FileLimits{MaxFiles: 1}
	res := mustRun(t, NewLocal(), req)
	if len(res.Files) != 1 || len(res.Omitted) != MaxOmittedListed+1 {
		t.Fatalf("files %d omitted %d, want 1 and %d (stderr %q)", len(res.Files), len(res.Omitted), MaxOmittedListed+1, res.Stderr.Text)
	}
	last := res.Omitted[len(res.Omitted)-1]
	want := OmittedFile{Size: extra, Reason: fmt.Sprintf("%d more omitted files not listed", extra)}
	if last != want {
		t.Errorf("last omitted entry %+v, want %+v", last, want)
	}
}
