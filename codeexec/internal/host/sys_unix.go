//go:build unix

package host

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// changeTime is the inode change time (ctime) info records, or zero. It
// moves on every write, chmod or link and, unlike the modification time,
// cannot be set back by the file's owner.
func changeTime(info fs.FileInfo) time.Time {
	switch st := info.(type) {
	case *unixInfo:
		return st.ctime
	default:
		if sys, ok := info.Sys().(*syscall.Stat_t); ok {
			return statCtime(sys)
		}
	}
	return time.Time{}
}

// statFile describes the open file f, with its change time.
func statFile(f *os.File) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return statInfo(f.Name(), &st), nil
}

// lstatFile describes the file at path, not following a link, with its
// change time.
func lstatFile(path string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return statInfo(filepath.Base(path), &st), nil
}

// idOf returns the identity of the file info describes.
func idOf(info fs.FileInfo) fileID {
	switch st := info.Sys().(type) {
	case fileID:
		return st
	case *syscall.Stat_t:
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}
