package host

import (
	"errors"

	"golang.org/x/sys/unix"
)

// cloneFile makes dst a copy-on-write clone of src (clonefile), or returns
// errNoClone where the file system cannot (anything but APFS).
func cloneFile(src, dst string) error {
	err := unix.Clonefile(src, dst, unix.CLONE_NOFOLLOW)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EXDEV) {
		return errNoClone
	}
	return err
}
