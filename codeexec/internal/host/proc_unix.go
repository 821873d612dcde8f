//go:build unix

package host

import (
	"errors"
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
	deadline := time.Now().Add(GroupGoneBound)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		killGroup(g.pid)
		reapGroup(g.pid)
		if err := syscall.Kill(-g.pid, 0); errors.Is(err, syscall.ESRCH) || time.Now().After(deadline) {
			return
		}
		time.Sleep(pause)
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
