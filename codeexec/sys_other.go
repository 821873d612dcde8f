//go:build !unix

package codeexec

import (
	"io/fs"
	"os"
	"time"
)

// fileID identifies a file on the host. Windows file infos carry no stable
// identity here, so it is always the zero value and unchanged files are
// told apart by size, time and content alone.
type fileID struct{}

// idOf returns the zero identity.
func idOf(fs.FileInfo) fileID { return fileID{} }

// changeTime is unknown here: zero.
func changeTime(fs.FileInfo) time.Time { return time.Time{} }

// statFile describes the open file f.
func statFile(f *os.File) (fs.FileInfo, error) { return f.Stat() }
