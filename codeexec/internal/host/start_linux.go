package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// oomScoreAdj is every run process's oom_score_adj: the OOM killer's first
// choice, before the agent (whose own score an unprivileged process could
// not lower).
const oomScoreAdj = 1000

// noPtrace is set once a traced start failed with EPERM where an untraced
// one worked (ptrace forbidden, by seccomp or Yama, or the agent traced):
// runs are then bounded right after they start.
var noPtrace atomic.Bool

// startBounded starts cmd so that its process is the OOM killer's first
// choice (oom_score_adj 1000) and, when g is not nil, in g, before it runs
// its first instruction: the child stops at its exec (it is traced), is
// bounded, and only then let go. Its children inherit both. Where tracing
// is forbidden (a seccomp filter, Yama, an agent run under strace or a
// debugger), the child is bounded right after it starts instead.
//
// It returns the command that runs: cmd, or, when the traced start was
// refused, a copy of it (os/exec starts a command once, even one whose
// start failed), made with ctx, the context cmd was made with
// (context.Background for exec.Command's), and given cancel(copy) as its
// Cancel (nil: none).
func startBounded(ctx context.Context, cmd *exec.Cmd, g *runCgroup, cancel func(*exec.Cmd) func() error) (*exec.Cmd, error) {
	if noPtrace.Load() {
		return cmd, startThenBound(cmd, g)
	}
	// The tracer is the thread that forks: keep this goroutine on it until
	// the child is let go.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr.Ptrace = true
	err := cmd.Start()
	cmd.SysProcAttr.Ptrace = false
	if errors.Is(err, syscall.EPERM) {
		again := copyCmd(ctx, cmd)
		if cancel != nil {
			again.Cancel = cancel(again)
		}
		err = startThenBound(again, g)
		if again.Process != nil { // it was the tracing that was refused
			noPtrace.Store(true)
		}
		return again, err
	}
	if err != nil {
		return cmd, err
	}
	pid := cmd.Process.Pid
	// Wait for the stop without reaping: a child killed meanwhile (the run
	// was cancelled) is left for cmd.Wait.
	var info unix.Siginfo
	for {
		err = unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT|unix.WALL, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return cmd, err
	}
	if info.Code != cldTrapped {
		return cmd, nil // dead before it ran: its result says how
	}
	berr := bound(pid, g)
	if err := syscall.PtraceDetach(pid); err != nil {
		return cmd, err
	}
	return cmd, berr
}

// copyCmd is a command like cmd, not started, made with ctx, without a
// Cancel.
func copyCmd(ctx context.Context, cmd *exec.Cmd) *exec.Cmd {
	c := exec.CommandContext(ctx, cmd.Path)
	c.Cancel = nil
	c.Args, c.Env, c.Dir = cmd.Args, cmd.Env, cmd.Dir
	c.Stdin, c.Stdout, c.Stderr, c.ExtraFiles = cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles
	c.SysProcAttr, c.WaitDelay = cmd.SysProcAttr, cmd.WaitDelay
	return c
}

// cldTrapped is the si_code waitid reports for a traced child that
// stopped (linux/signal.h): a tracer waiting for its own child is told of
// every stop so, never with CLD_STOPPED.
const cldTrapped = 4

// startThenBound starts cmd and bounds it at once.
func startThenBound(cmd *exec.Cmd, g *runCgroup) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	return bound(cmd.Process.Pid, g)
}

// bound makes pid the OOM killer's first choice and puts it in g.
func bound(pid int, g *runCgroup) error {
	err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte(strconv.Itoa(oomScoreAdj)), 0)
	if g != nil {
		err = errors.Join(err, g.join(pid))
	}
	return err
}
