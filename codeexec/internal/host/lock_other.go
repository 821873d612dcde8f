//go:build !unix

package host

import (
	"io/fs"
	"os"
)

// NoFollow is 0 here: Windows opens no symbolic links by these names.
const NoFollow = 0

// lockWorkspace creates root's lock file. Off unix it is not locked, and a
// sweep never takes a workspace with a lock file for dead.
func lockWorkspace(root string) (*os.File, error) {
	return os.OpenFile(root+string(os.PathSeparator)+lockFileName, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// TryLock is false here: liveness cannot be told.
func TryLock(*os.File) bool { return false }

// OwnDir is false here: nothing is swept off unix.
func OwnDir(string, fs.FileMode) bool { return false }

// killLeftovers does nothing here.
func killLeftovers(string) {}

// processAlive is true here: a builder's leftovers age out instead.
func processAlive(int) bool { return true }

// RootWritableOnly is false here: there is no root-owned cache off unix.
func RootWritableOnly(fs.FileInfo) bool { return false }
