//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package host

import "os"

// growPipe is a no-op: the BSDs size pipes themselves.
func growPipe(*os.File) {}

// pendingBytes cannot tell how many bytes wait in a pipe here; drain then
// relies on what its reader reads.
func pendingBytes(int) (int, bool) { return 0, false }
