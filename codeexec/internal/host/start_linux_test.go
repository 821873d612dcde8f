package host

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// refusePtrace is the environment variable that has TestPtraceRefused's
// child refuse itself ptrace(2).
const refusePtrace = "ADKSKILLS_TEST_REFUSE_PTRACE"

// TestPtraceRefused: where ptrace is refused (a seccomp filter, Yama, an
// agent run under strace or a debugger), the first run's traced start
// fails with EPERM and the run starts untraced instead, bounded right
// after it starts; so do the runs after it. Its stdin, a pipe os/exec
// made for the first start, reaches the script, and its timeout still
// ends it. It runs in a child
// process, whose filter returns EPERM for every ptrace(2) of every thread.
func TestPtraceRefused(t *testing.T) {
	if os.Getenv(refusePtrace) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPtraceRefused$", "-test.v")
		cmd.Env = append(os.Environ(), refusePtrace+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestPtraceRefused") {
			t.Fatalf("the child test: %v\n%s", err, out)
		}
		return
	}
	if err := denyPtrace(); err != nil {
		t.Fatalf("installing the filter: %v", err)
	}
	if noPtrace.Load() {
		t.Fatal("noPtrace set before any run")
	}
	e := newLocal(withWorkspaceDir(t.TempDir()))
	const runs = 2
	for i := range runs {
		req := codeexectest.Script("scripts/cat.sh", "cat")
		req.Stdin = []byte("in\n")
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
	req := codeexectest.Script("scripts/wait.sh", "exec sleep 60") // no child left for PID 1 to reap
	req.Limits.Timeout = 200 * time.Millisecond
	start := time.Now()
	res, err := e.Execute(context.Background(), req)
	if err != nil || !res.TimedOut {
		t.Errorf("a run past its timeout: %v %+v, want it timed out", err, res)
	}
	if d := time.Since(start); d >= req.Limits.Timeout+codeexec.DefaultWaitDelay {
		t.Errorf("the timed-out run took %v: not killed at its timeout", d)
	}
	e.cfg.WaitRemovals()
}

// denyPtrace installs, for every thread of the process, a seccomp filter
// that fails ptrace(2) with EPERM and allows everything else.
func denyPtrace() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_PTRACE, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return errno
	}
	return nil
}
