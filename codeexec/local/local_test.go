package local

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

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
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
	res := codeexectest.MustRun(t, New(WithWorkspaceDir(dir)), codeexectest.Script("scripts/ws.py", src))
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
		{"BadInterpreterTable", WithInterpreters(codeexec.Interpreters{{Language: "x", Extensions: []string{"py"}, Command: []string{"python3"}}})},
		{"DuplicateLanguage", WithInterpreters(append(codeexec.DefaultInterpreters(), codeexec.DefaultInterpreters()[0]))},
		{"EnvName", WithEnv(map[string]string{"A=B": "x"})},
		{"PassEnvName", WithPassEnv("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opt).Execute(context.Background(), codeexectest.Script("scripts/a.sh", "echo hi"))
			if !errors.Is(err, codeexec.ErrInvalidConfig) || !errors.Is(New(tt.opt).Err(), codeexec.ErrInvalidConfig) {
				t.Errorf("err = %v, Err() = %v, want ErrInvalidConfig", err, New(tt.opt).Err())
			}
		})
	}
}

func TestLocalWorkspaceDirMissing(t *testing.T) {
	e := New(WithWorkspaceDir(filepath.Join(t.TempDir(), "missing")))
	if _, err := e.Execute(context.Background(), codeexectest.Script("scripts/a.sh", "echo hi")); !errors.Is(err, codeexec.ErrWorkspace) {
		t.Errorf("err = %v, want ErrWorkspace", err)
	}
}

func TestLocalInterpreterTable(t *testing.T) {
	table := append(codeexec.DefaultInterpreters(), codeexec.Interpreter{Language: "posix", Extensions: []string{".posix"}, Command: []string{"sh", "-e"}})
	e := New(WithInterpreters(table))
	table[len(table)-1].Command[0] = "changed-after-New" // the executor holds a copy
	res := codeexectest.MustRun(t, e, codeexectest.Script("scripts/a.POSIX", "echo \"$0 $1\"; false; echo unreachable"))
	if res.Stdout.Text != "scripts/a.POSIX \n" || res.ExitCode != 1 {
		t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	if _, err := New(WithInterpreters(codeexec.Interpreters{})).Execute(context.Background(), codeexectest.Script("scripts/a.py", "")); !errors.Is(err, codeexec.ErrUnsupportedScript) {
		t.Errorf("empty table: err = %v, want ErrUnsupportedScript", err)
	}
}

// TestLocalShebangScript: without a request Interpreter, a script without
// an extension runs with the interpreter its #! line names, whether it
// comes from the skill or from Files.
func TestLocalShebangScript(t *testing.T) {
	src := "#!/usr/bin/env python3\nimport sys\nprint('py', sys.argv[1:])\n"
	fromFiles := &codeexec.Request{Files: []codeexec.File{{Path: "scripts/tool", Data: []byte(src)}}, Script: "scripts/tool", Args: []string{"a"}}
	for _, req := range []*codeexec.Request{codeexectest.Script("scripts/tool", src), fromFiles} {
		req.Args = []string{"a"}
		res := codeexectest.MustRun(t, New(), req)
		if res.Stdout.Text != "py ['a']\n" || res.ExitCode != 0 {
			t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
		}
	}
	if _, err := New().Execute(context.Background(), codeexectest.Script("scripts/tool", "#!/usr/bin/env ruby\n")); !errors.Is(err, codeexec.ErrUnsupportedScript) {
		t.Errorf("a #! line no entry runs: err = %v, want ErrUnsupportedScript", err)
	}
}

func TestLocalCancelledBeforeStart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(WithWorkspaceDir(dir)).Execute(ctx, codeexectest.Script("scripts/a.sh", "echo hi"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestLocalPyenvShim runs python3 through this machine's pyenv shim, if it
// has one: the shim is resolved even though HOME points into the workspace.
func TestLocalPyenvShim(t *testing.T) {
	shim, err := exec.LookPath("python3")
	if err != nil || filepath.Base(filepath.Dir(shim)) != "shims" {
		t.Skip("python3 is not a pyenv shim here")
	}
	got, err := host.ResolveInterpreter([]string{"python3"}, []string{"PATH=" + os.Getenv("PATH")}, t.TempDir())
	if err != nil || got[0] == shim {
		t.Fatalf("resolveInterpreter = %v, %v; want the real interpreter behind %s", got, err, shim)
	}
	res := codeexectest.MustRun(t, New(), codeexectest.Script("scripts/v.py", "import sys\nprint(sys.executable)"))
	if strings.TrimSpace(res.Stdout.Text) == "" || res.ExitCode != 0 {
		t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
}

// TestLocalOmittedListCapped: a run that writes far more files than the
// limits allow gets host.MaxOmittedListed entries and one that counts the rest.
func TestLocalOmittedListCapped(t *testing.T) {
	const extra = 7
	n := 1 + host.MaxOmittedListed + extra // one kept, the rest omitted
	req := codeexectest.Script("scripts/flood.py", "import sys\nfor i in range(int(sys.argv[1])):\n    open('f%05d' % i, 'w').write('x')\n")
	req.Args = []string{strconv.Itoa(n)}
	req.Limits.Output = codeexec.FileLimits{MaxFiles: 1}
	res := codeexectest.MustRun(t, New(), req)
	if len(res.Files) != 1 || len(res.Omitted) != host.MaxOmittedListed+1 {
		t.Fatalf("files %d omitted %d, want 1 and %d (stderr %q)", len(res.Files), len(res.Omitted), host.MaxOmittedListed+1, res.Stderr.Text)
	}
	last := res.Omitted[len(res.Omitted)-1]
	want := codeexec.OmittedFile{Size: extra, Reason: fmt.Sprintf("%d more omitted files not listed", extra)}
	if last != want {
		t.Errorf("last omitted entry %+v, want %+v", last, want)
	}
}
