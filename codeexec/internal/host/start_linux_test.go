package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// denySyscall is the environment variable that has TestStartRefused's
// child refuse itself the system call it names (see refused).
const denySyscall = "ADKSKILLS_TEST_DENY_SYSCALL"

// refused are the system calls TestStartRefused's children are refused,
// by name.
var refused = map[string]uint32{"ptrace": unix.SYS_PTRACE, "execve": unix.SYS_EXECVE}

// TestStartRefused runs each case in a child process of its own, whose
// seccomp filter fails one system call with EPERM for every thread.
//
// Ptrace: where tracing is refused (a seccomp filter, Yama, an agent run
// under strace or a debugger), the first run's traced start fails with
// EPERM and the run starts untraced instead, bounded right after it
// starts; so do the runs after it. Its stdin, a pipe os/exec made for the
// first start, reaches the script, and its timeout still ends it.
//
// Execve: an EPERM that is not tracing's (the untraced start fails too)
// fails the run and leaves the next runs traced.
func TestStartRefused(t *testing.T) {
	name := os.Getenv(denySyscall)
	if name == "" {
		for name := range refused {
			t.Run(name, func(t *testing.T) {
				cmd := exec.Command(os.Args[0], "-test.run=^TestStartRefused$", "-test.v")
				cmd.Env = append(os.Environ(), denySyscall+"="+name)
				out, err := cmd.CombinedOutput()
				if err == nil && strings.Contains(string(out), "--- SKIP: TestStartRefused") {
					t.Skipf("the child test skipped:\n%s", out)
				}
				if err != nil || !strings.Contains(string(out), "--- PASS: TestStartRefused") {
					t.Fatalf("the child test: %v\n%s", err, out)
				}
			})
		}
		return
	}
	if err := deny(refused[name]); err != nil {
		t.Skipf("no seccomp filter here: %v", err)
	}
	if noPtrace.Load() {
		t.Fatal("noPtrace set before any run")
	}
	// A WaitDelay far past the timeout: a run its Cancel does not kill
	// at the timeout ends only then.
	const waitDelay = 10 * time.Second
	e := newLocal(withWorkspaceDir(t.TempDir()), func(c *Config) { c.SetWaitDelay(waitDelay) })
	defer e.cfg.WaitRemovals()
	req := codeexectest.Script("scripts/cat.sh", "cat")
	req.Stdin = []byte("in\n")
	if name == "execve" {
		if _, err := e.Execute(context.Background(), req); !errors.Is(err, codeexec.ErrStart) {
			t.Errorf("a run whose exec is refused: %v, want ErrStart", err)
		}
		if noPtrace.Load() {
			t.Error("an EPERM not from tracing set noPtrace")
		}
		return
	}
	const runs = 2
	for i := range runs {
		res, err := e.Execute(context.Background(), req)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if res.ExitCode != 0 || res.Stdout.Text != "in\n" {
			t.Fatalf("run %d: exit %d, stdout %q, stderr %q", i, res.ExitCode, res.Stdout.Text, res.Stderr.Text)
		}
	}
	if !noPtrace.Load() {
		t.Error("ptrace refused, yet noPtrace is not set")
	}
	// Its copy of the command keeps the run's context and its Cancel: a
	// timeout kills the script's group at once, not os/exec's WaitDelay
	// later.
	noPtrace.Store(false)
	req = codeexectest.Script("scripts/wait.sh", "exec sleep 60") // no child left for PID 1 to reap
	req.Limits.Timeout = 200 * time.Millisecond
	start := time.Now()
	res, err := e.Execute(context.Background(), req)
	if err != nil || !res.TimedOut {
		t.Errorf("a run past its timeout: %v %+v, want it timed out", err, res)
	}
	if d := time.Since(start); d >= waitDelay/2 {
		t.Errorf("the timed-out run took %v: not killed at its timeout", d)
	}
}

// deny installs, for every thread of the process, a seccomp filter that
// fails the system call nr with EPERM and allows everything else.
func deny(nr uint32) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return errno
	}
	return nil
}

// TestStartBoundFails: a child that cannot be bounded (its run cgroup is
// gone) fails its start, traced or not, and is left for the caller to
// kill.
func TestStartBoundFails(t *testing.T) {
	for _, traced := range []bool{true, false} {
		t.Run(fmt.Sprint("Traced=", traced), func(t *testing.T) {
			old := noPtrace.Load()
			noPtrace.Store(!traced)
			defer noPtrace.Store(old)
			gone := &runCgroup{dirs: []string{filepath.Join(t.TempDir(), "gone")}}
			cmd := exec.Command("/bin/sh", "-c", "exec sleep 60")
			cmd.SysProcAttr = &syscall.SysProcAttr{}
			started, err := startBounded(context.Background(), cmd, gone, nil)
			if started.Process != nil {
				_ = started.Process.Kill()
				_ = started.Wait()
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("start into a cgroup that is gone: %v, want its join's ENOENT", err)
			}
		})
	}
}
