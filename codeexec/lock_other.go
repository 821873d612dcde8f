//go:build !unix

package codeexec

import (
	"io/fs"
	"os"
)

// noFollow is 0 here: Windows opens no symbolic links by these names.
const noFollow = 0

// lockWorkspace creates root's lock file. Off unix it is not locked, and a
// sweep never takes a workspace with a lock file for dead.
func lockWorkspace(root string) (*os.File, error) {
	return os.OpenFile(root+string(os.PathSeparator)+lockFileName, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// tryLock is false here: liveness cannot be told.
func tryLock(*os.File) bool { return false }

// ownDir is false here: nothing is swept off unix.
func ownDir(string, fs.FileMode) bool { return false }

// killLeftovers does nothing here.
func killLeftovers(string) {}

// processAlive is true here: a builder's leftovers age out instead.
func processAlive(int) bool { return true }

// rootReadOnly is false here: there is no read-only cache off unix.
func rootReadOnly(fs.FileInfo) bool { return false }
