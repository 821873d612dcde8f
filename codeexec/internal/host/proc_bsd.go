//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package host

import (
	"os/exec"

	"golang.org/x/sys/unix"
)

// procGroup is a child's process group as the BSDs let us watch it: a
// kqueue EVFILT_PROC/NOTE_EXIT event tells when the leader exits without
// reaping it. There is no parent-death signal: a script can outlive an agent
// killed by SIGKILL (the next start removes its workspace).
type procGroup struct {
	pid int
}

// newProcGroup prepares cmd to lead its own process group.
func newProcGroup(cmd *exec.Cmd) *procGroup {
	groupAttr(cmd)
	return &procGroup{}
}

// abort releases what a command that failed to start left.
func (g *procGroup) abort() {}

// started watches the leader pid and kills its group as soon as it exits.
func (g *procGroup) started(pid int) {
	g.pid = pid
	kq, err := unix.Kqueue()
	if err != nil {
		return // finish kills the group after cmd.Wait
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	go func() {
		defer unix.Close(kq)
		out := make([]unix.Kevent_t, 1)
		for {
			_, err := unix.Kevent(kq, []unix.Kevent_t{ev}, out, nil)
			if err == unix.EINTR {
				continue
			}
			// Exited, or already gone (ESRCH): kill what is left.
			killGroup(pid)
			return
		}
	}()
}
