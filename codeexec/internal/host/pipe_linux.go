package host

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeBytes is the pipe capacity asked for (F_SETPIPE_SZ), so a child
// writing large blocks wakes the reader once per block, not per 64 KiB. It
// is best effort: an unprivileged process is bounded by
// /proc/sys/fs/pipe-max-size (1 MiB by default).
const pipeBytes = 1 << 20

// growPipe asks for a pipeBytes capacity on f, a pipe.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeBytes)
	})
}

// pendingBytes is how many bytes wait in the pipe fd (FIONREAD).
func pendingBytes(fd int) (int, bool) {
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	return n, err == nil
}
