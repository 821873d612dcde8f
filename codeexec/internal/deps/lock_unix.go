//go:build unix

package deps

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// errLocked is what tryLock returns when another holder has the lock.
var errLocked = errors.New("locked")

// tryLock takes f's flock (shared or exclusive) without waiting. flock
// locks belong to an open file, so two opens in one process exclude each
// other as two processes do.
func tryLock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return err
	}
}

// processAlive reports whether a process pid exists.
func processAlive(pid int) bool {
	return pid > 0 && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// releaseLock is a no-op: closing the file releases its flock.
func releaseLock(*os.File) {}

// fileIdentity is a file's device and inode.
func fileIdentity(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return ""
}
