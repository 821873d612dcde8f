//go:build !unix

package deps

import "os/exec"

// setGroup leaves cmd as it is: cancellation kills the process alone.
func setGroup(*exec.Cmd) {}
