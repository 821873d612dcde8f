//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package fileartifact

import "os"

// flock reports that this system takes no directory locks: saves and
// deletes leave leftovers that the age rule sweeps (see sweep).
func flock(*os.File, lockMode) error { return errNoLocks }
