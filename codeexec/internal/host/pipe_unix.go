//go:build unix

package host

import "golang.org/x/sys/unix"

// pipeState asks the kernel about the read end: whether any process still
// holds the write end (no POLLHUP) and how many bytes wait in the pipe. ok
// is false when it cannot tell (the pipe is closed). Where the byte count
// is unknown, pending is 0 and drain judges by what its reader reads.
func (o *output) pipeState() (writers bool, pending int, ok bool) {
	rc, err := o.r.SyscallConn()
	if err != nil {
		return false, 0, false
	}
	_ = rc.Control(func(fd uintptr) {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, 0); err != nil {
			return
		}
		n, _ := pendingBytes(int(fd))
		writers, pending, ok = pfd[0].Revents&unix.POLLHUP == 0, n, true
	})
	return writers, pending, ok
}
