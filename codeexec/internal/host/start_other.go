//go:build !linux

package host

import "os/exec"

// startBounded starts cmd: there is no OOM score or run cgroup off Linux.
func startBounded(cmd *exec.Cmd, _ *runCgroup) error { return cmd.Start() }
