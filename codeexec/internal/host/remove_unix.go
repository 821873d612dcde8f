//go:build unix

package host

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// removeTree deletes dir and everything in it, best effort: what cannot be
// removed stays for the next sweep.
func removeTree(dir string) { _ = removeAll(dir) }

// removeAll deletes path and everything below it however deep a script
// nested its folders, with at most two descriptors open: it holds only the
// folder it empties, climbs back through "..", checked against the folder
// it came from, and remembers only the names on its path. (os.RemoveAll
// holds a descriptor per level: a tree deeper than the agent's descriptor
// limit defeats it, and while it runs every other open of the agent fails.)
// Folders a script made unreadable or unwritable are made the agent's
// again on the way down. It must run when nothing is changing the tree: a
// run's processes are all dead when its workspace is removed.
func removeAll(path string) error {
	if err := unlinkEntry(unix.AT_FDCWD, path); err == nil || !errors.Is(err, unix.ENOTEMPTY) {
		return ignoreGone(err)
	}
	fd, err := openToEmpty(unix.AT_FDCWD, path)
	if err != nil {
		return ignoreGone(err)
	}
	type level struct {
		name string
		id   fileID
	}
	id, err := fdID(fd)
	if err != nil {
		unix.Close(fd)
		return err
	}
	stack := []level{{path, id}}
	for {
		child, err := emptyOrDescend(fd)
		if err != nil {
			unix.Close(fd)
			return err
		}
		if child != "" { // a non-empty folder: go down into it
			sub, err := openToEmpty(fd, child)
			unix.Close(fd)
			if err != nil {
				return err
			}
			subID, err := fdID(sub)
			if err != nil {
				unix.Close(sub)
				return err
			}
			fd = sub
			stack = append(stack, level{child, subID})
			continue
		}
		// fd is empty: climb back and remove it.
		if len(stack) == 1 {
			unix.Close(fd)
			return ignoreGone(unix.Rmdir(path))
		}
		up, err := openat(fd, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
		unix.Close(fd)
		if err != nil {
			return err
		}
		if upID, err := fdID(up); err != nil || upID != stack[len(stack)-2].id {
			unix.Close(up)
			return fmt.Errorf("remove %s: a folder moved while it was removed", path)
		}
		name := stack[len(stack)-1].name
		stack = stack[:len(stack)-1]
		fd = up
		if err := ignoreGone(unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)); err != nil {
			unix.Close(fd)
			return err
		}
	}
}

// emptyOrDescend removes the entries of the folder fd in batches until it
// is empty (returning "") or meets a folder with something in it, whose
// name it returns.
func emptyOrDescend(fd int) (string, error) {
	for {
		names, err := listBatch(fd)
		if err != nil || len(names) == 0 {
			return "", err
		}
		for _, n := range names {
			err := unlinkEntry(fd, n)
			if errors.Is(err, unix.ENOTEMPTY) {
				return n, nil
			}
			if err = ignoreGone(err); err != nil {
				return "", err
			}
		}
	}
}

// listBatch reads up to nameBatch names of the folder fd from its start,
// through a descriptor of its own (fd stays open).
func listBatch(fd int) ([]string, error) {
	dup, err := openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), ".")
	defer f.Close()
	names, _, err := readNames(f, nameBatch)
	return names, err
}

// unlinkEntry removes name of the folder dirfd, a file or an empty folder,
// making dirfd writable when it was not; it fails with ENOTEMPTY for a
// folder with something in it.
func unlinkEntry(dirfd int, name string) error {
	err := unlinkOnce(dirfd, name)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		if dirfd == unix.AT_FDCWD || unix.Fchmod(dirfd, 0o700) != nil {
			return err
		}
		err = unlinkOnce(dirfd, name)
	}
	return err
}

// unlinkOnce unlinks name as a file and, when it is a folder (EISDIR on
// Linux, EPERM elsewhere), as a folder.
func unlinkOnce(dirfd int, name string) error {
	err := unix.Unlinkat(dirfd, name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		if rerr := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); !errors.Is(rerr, unix.ENOTDIR) {
			err = rerr
		}
	}
	if errors.Is(err, unix.EEXIST) {
		err = unix.ENOTEMPTY // what some systems answer for a folder with entries
	}
	return err
}

// openToEmpty opens the folder name of dirfd to remove what is in it,
// refusing a symbolic link, and gives it mode 0700 so its entries can be
// listed and removed whatever mode a script gave it.
func openToEmpty(dirfd int, name string) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW
	fd, err := openat(dirfd, name, flags)
	if errors.Is(err, unix.EACCES) {
		if unix.Fchmodat(dirfd, name, 0o700, 0) == nil {
			fd, err = openat(dirfd, name, flags)
		}
	}
	if err != nil {
		return -1, err
	}
	_ = unix.Fchmod(fd, 0o700)
	return fd, nil
}

// fdID is the identity of the open file fd.
func fdID(fd int) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fileID{}, err
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

// ignoreGone is err, or nil when it says the entry is already gone.
func ignoreGone(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}
