//go:build unix

package host

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// fdDir lists this process's open descriptors.
func fdDir() string {
	if runtime.GOOS == "linux" {
		return "/proc/self/fd"
	}
	return "/dev/fd"
}

// inheritedFDs lists this process's descriptors above stderr that a child
// would inherit: those without close-on-exec. Go opens every descriptor of
// its own with close-on-exec; these are what the agent was started with (a
// shell's `exec 7</secret`, a supervisor's sockets) or what C code opened.
func inheritedFDs() []int {
	entries, err := os.ReadDir(fdDir())
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			out = append(out, fd)
		}
	}
	return out
}

// closeInherited makes cmd's child start with none of the agent's
// inherited descriptors: for each, cmd.ExtraFiles gets a nil entry at its
// number (os/exec closes that descriptor in the child, between fork and
// exec), or already holds a file of the launcher's there, which replaces
// it. The agent's own descriptors are left as they are.
func closeInherited(cmd *exec.Cmd) {
	for _, fd := range inheritedFDs() {
		for len(cmd.ExtraFiles) <= fd-3 {
			cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
		}
	}
}
