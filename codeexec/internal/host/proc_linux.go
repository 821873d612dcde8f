package host

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// procGroup is a child's process group as Linux lets us watch it: through a
// pidfd of the leader, which tells when it exits without reaping it.
type procGroup struct {
	pid   int // the leader, and the group's id
	pidfd int // the leader's pidfd, or -1
}

// newProcGroup prepares cmd to lead its own process group, to be killed
// when the agent dies (PR_SET_PDEATHSIG: a script does not outlive an agent
// killed by SIGKILL or the OOM killer), and to hand back a pidfd.
func newProcGroup(cmd *exec.Cmd) *procGroup {
	g := &procGroup{pidfd: -1}
	a := groupAttr(cmd)
	a.Pdeathsig = syscall.SIGKILL
	a.PidFD = &g.pidfd
	return g
}

// abort releases what a command that failed to start left.
func (g *procGroup) abort() {
	if g.pidfd >= 0 {
		_ = unix.Close(g.pidfd)
		g.pidfd = -1
	}
}

// started watches the leader pid: as soon as it exits (seen with waitid
// WNOWAIT on its pidfd, which does not reap it: cmd.Wait does), its group is
// killed, so background children of a finished script die at once instead
// of holding the output pipes until WaitDelay.
func (g *procGroup) started(pid int) {
	g.pid = pid
	fd := g.pidfd
	g.pidfd = -1
	go func() {
		idtype, id := unix.P_PID, pid
		if fd >= 0 {
			idtype, id = unix.P_PIDFD, fd
			defer unix.Close(fd)
		}
		for {
			var info unix.Siginfo
			err := unix.Waitid(idtype, id, &info, unix.WEXITED|unix.WNOWAIT, nil)
			switch {
			case err == unix.EINTR:
				continue
			case err == nil || err == unix.ECHILD:
				killGroup(pid) // exited, or already reaped by cmd.Wait
			case idtype == unix.P_PIDFD:
				idtype, id = unix.P_PID, pid // an old kernel: wait by pid
				continue
			}
			// Any other error: leave the group to finish.
			return
		}
	}()
}
