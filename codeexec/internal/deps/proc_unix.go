//go:build unix

package deps

import (
	"os/exec"
	"syscall"
)

// setGroup starts cmd in a process group of its own and makes its
// cancellation kill the whole group (a build backend pip started, say).
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
