//go:build !unix

package host

import "os/exec"

// closeInherited does nothing here: Local does not run scripts off unix.
func closeInherited(*exec.Cmd) {}
