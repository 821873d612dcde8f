package host

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// ProtectAgent makes this process undumpable when it does not run as root,
// once: a process of the same user (a Local script) can then no longer
// read its memory, environment or open files through /proc/PID, nor trace
// it. Root's processes are root's to read anyway. It also turns off core
// dumps of the agent and attaching a debugger to it as its own user.
var ProtectAgent = sync.OnceValue(func() error {
	if os.Geteuid() == 0 {
		return nil
	}
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
})
