package host

import (
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

// noPtrace is set once starting a traced child failed (ptrace forbidden,
// by seccomp or Yama): runs are then bounded right after they start.
var noPtrace atomic.Bool

// startBounded starts cmd so that its process is the OOM killer's first
// choice (oom_score_adj 1000) and, when g is not nil, in g, before it runs
// its first instruction: the child stops at its exec (it is traced), is
// bounded, and only then let go. Its children inherit both. Where tracing
// is forbidden, the child is bounded right after it starts instead.
func startBounded(cmd *exec.Cmd, g *runCgroup) error {
	if noPtrace.Load() {
		return startThenBound(cmd, g)
	}
	// The tracer is the thread that forks: keep this goroutine on it until
	// the child is let go.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr.Ptrace = true
	err := cmd.Start()
	cmd.SysProcAttr.Ptrace = false
	if errors.Is(err, syscall.EPERM) {
		noPtrace.Store(true)
		return startThenBound(cmd, g)
	}
	if err != nil {
		return err
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
		return err
	}
	if info.Code != cldTrapped && info.Code != cldStopped {
		return nil // dead before it ran: its result says how
	}
	berr := bound(pid, g)
	if err := syscall.PtraceDetach(pid); err != nil {
		return err
	}
	return berr
}

// The si_code values waitid reports for a stopped child (linux/signal.h):
// a traced one, and a stopped one.
const (
	cldTrapped = 4
	cldStopped = 5
)

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
