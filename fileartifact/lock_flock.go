//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package fileartifact

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errBusy is flock's error while another open file holds the lock.
var errBusy = errors.New("fileartifact: the directory is locked by a live process")

// flock takes the flock(2) lock of the open directory f in mode m; with
// tryExclusive it fails with errBusy while another open file holds a lock.
// The kernel drops the lock when the last descriptor of f closes, so a
// process killed by any signal leaves no lock behind.
func flock(f *os.File, m lockMode) error {
	how := unix.LOCK_EX
	switch m {
	case tryExclusive:
		how |= unix.LOCK_NB
	case waitShared:
		how = unix.LOCK_SH
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return errBusy
		default:
			// ENOLCK, EINVAL, EBADF (an NFS mount that maps flock to
			// fcntl locks, which a directory cannot take): no locks here.
			return errors.Join(errNoLocks, err)
		}
	}
}
