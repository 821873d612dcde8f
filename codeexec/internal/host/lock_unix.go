//go:build unix

package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// NoFollow refuses to open a symbolic link.
const NoFollow = unix.O_NOFOLLOW

// lockWorkspace creates root's lock file and locks it for as long as the
// returned file stays open (close-on-exec: no script inherits it). The
// file is locked under another name and then renamed into place, so a
// sweeping process never finds a lock file that nobody holds yet.
func lockWorkspace(root string) (*os.File, error) {
	tmp := filepath.Join(root, lockFileName+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|NoFollow, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(root, lockFileName)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// TryLock takes f's lock without waiting; false when another process holds
// it.
func TryLock(f *os.File) bool {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}

// OwnDir reports whether dir is a directory (not a link) of this process's
// user with none of the permission bits in closed set (0o022: no one else
// may write in it; 0o077: no one else may enter it).
func OwnDir(dir string, closed fs.FileMode) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&closed != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// killLeftovers kills the processes of the dead run in root: on Linux,
// those of its recorded process group whose working directory is still
// inside root (so a process group number reused since is never hit). The
// BSDs and macOS have no /proc to tell them by: nothing is killed there.
func killLeftovers(root string) {
	b, err := os.ReadFile(filepath.Join(root, groupFileName))
	if err != nil {
		return
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pgid <= 1 {
		return
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := unix.Getpgid(pid); err != nil || g != pgid {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err == nil && (cwd == root || strings.HasPrefix(cwd, root+"/")) {
			err = unix.Kill(pid, unix.SIGKILL)
		}
		_ = errors.Is(err, unix.ESRCH) // gone already: nothing to do
	}
}

// processAlive reports whether a process pid exists.
func processAlive(pid int) bool {
	return pid > 0 && !errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}

// RootWritableOnly reports whether info is root's and writable by no one
// else (no group or other write bit).
func RootWritableOnly(info fs.FileInfo) bool {
	var uid uint32
	switch st := info.(type) {
	case *unixInfo:
		uid = st.uid
	default:
		sys, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return false
		}
		uid = sys.Uid
	}
	return uid == 0 && info.Mode().Perm()&0o022 == 0
}
