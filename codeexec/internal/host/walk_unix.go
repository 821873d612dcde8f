//go:build unix

package host

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory that the collection walk reads and opens
// entries of, relative to itself and never through a symbolic link.
type dirHandle struct{ f *os.File }

// openDirHandle opens the directory at path, which must not be a symbolic
// link.
func openDirHandle(path string) (dirHandle, error) {
	fd, err := openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return dirHandle{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return dirHandle{f: os.NewFile(uintptr(fd), path)}, nil
}

// openat is unix.Openat, close-on-exec, retried on EINTR.
func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func (d dirHandle) fd() int { return int(d.f.Fd()) }

// names lists at most limit of the directory's entries, reading them in
// batches so that a huge folder costs no more memory than limit names;
// more reports that entries were left unread.
func (d dirHandle) names(limit int) (names []string, more bool, err error) {
	return readNames(d.f, limit)
}

// lstat describes entry name without following a link.
func (d dirHandle) lstat(name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return statInfo(name, &st), nil
}

// stat describes the directory itself.
func (d dirHandle) stat() (fs.FileInfo, error) { return d.f.Stat() }

// openDir opens the subdirectory name, refusing a symbolic link.
func (d dirHandle) openDir(name string) (dirHandle, error) {
	fd, err := openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		return dirHandle{}, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return dirHandle{f: os.NewFile(uintptr(fd), name)}, nil
}

// openFile opens the file name for reading, refusing a symbolic link; a
// named pipe swapped in cannot block the open (O_NONBLOCK).
func (d dirHandle) openFile(name string) (*os.File, error) {
	fd, err := openat(d.fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// close closes the handle; closing twice is harmless.
func (d dirHandle) close() {
	if d.f != nil {
		_ = d.f.Close()
	}
}

// unixInfo is the fs.FileInfo of an entry the walk stat'ed.
type unixInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
	ctime time.Time
	id    fileID
	uid   uint32
}

// statInfo describes st, the stat of name.
func statInfo(name string, st *unix.Stat_t) fs.FileInfo {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	return &unixInfo{
		name:  name,
		size:  st.Size,
		mode:  mode,
		mtime: time.Unix(st.Mtim.Unix()),
		ctime: time.Unix(st.Ctim.Unix()),
		id:    fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)},
		uid:   st.Uid,
	}
}

func (i *unixInfo) Name() string       { return i.name }
func (i *unixInfo) Size() int64        { return i.size }
func (i *unixInfo) Mode() fs.FileMode  { return i.mode }
func (i *unixInfo) ModTime() time.Time { return i.mtime }
func (i *unixInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *unixInfo) Sys() any           { return i.id }
