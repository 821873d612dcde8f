//go:build unix

package host

import (
	"errors"
	"iter"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// killGroup sends SIGKILL to the process group pgid. A group that no longer
// exists is not an error.
func killGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// killTree kills the process tree of cmd, which has started: its process
// group. It may run while cmd is being waited for (from cmd.Cancel).
func killTree(cmd *exec.Cmd) { killGroup(cmd.Process.Pid) }

// finish runs once the leader has been waited for: it kills what is left of
// the group, reaps the members that are this process's children (a
// background child of the script becomes one when the agent is PID 1 of its
// container or a child subreaper), and waits until the group has no member
// left, so nothing of the run is alive when its files are collected.
func (g *procGroup) finish() {
	if g.pid <= 0 {
		return
	}
	killUntilGone(GroupGoneBound, func() bool {
		killGroup(g.pid)
		reapGroup(g.pid)
		return !errors.Is(syscall.Kill(-g.pid, 0), syscall.ESRCH)
	})
}

// killUntilGone calls kill, which kills what it finds of a run and
// reports whether anything was, between killPauses, until nothing is
// found or bound has passed.
func killUntilGone(bound time.Duration, kill func() (found bool)) {
	deadline := time.Now().Add(bound)
	for pause := range killPauses() {
		if !kill() || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
	}
}

// killPauses are the pauses between kills: from 50 µs (most often only
// exiting processes are left, gone within a fraction of a millisecond),
// doubling, up to 10 ms.
func killPauses() iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		for p := 50 * time.Microsecond; yield(p); p = min(2*p, 10*time.Millisecond) {
		}
	}
}

// reapGroup reaps every exited member of process group pgid that is a child
// of this process, without blocking. Only members of the group are waited
// for, so no other child's status is taken from its own waiter.
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}

// exitCode is the shell's view of st: the exit status, or 128+n for a death
// by signal n.
func exitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// groupAttr makes cmd's child lead a process group of its own.
func groupAttr(cmd *exec.Cmd) *syscall.SysProcAttr {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pgid = true, 0
	return cmd.SysProcAttr
}

// Supported reports whether host executors run scripts on this platform:
// nil on unix.
func Supported() error { return nil }
