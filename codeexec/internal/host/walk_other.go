//go:build !unix

package host

import (
	"io/fs"
	"os"
)

// dirHandle is an open directory that the collection walk reads and opens
// entries of. Off unix it is an os.Root, which never leaves the directory.
type dirHandle struct{ r *os.Root }

// openDirHandle opens the directory at path.
func openDirHandle(path string) (dirHandle, error) {
	r, err := os.OpenRoot(path)
	return dirHandle{r: r}, err
}

// names lists at most limit of the directory's entries; more reports
// that entries were left unread.
func (d dirHandle) names(limit int) (names []string, more bool, err error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return readNames(f, limit)
}

// lstat describes entry name without following a link.
func (d dirHandle) lstat(name string) (fs.FileInfo, error) { return d.r.Lstat(name) }

// stat describes the directory itself.
func (d dirHandle) stat() (fs.FileInfo, error) { return d.r.Stat(".") }

// openDir opens the subdirectory name.
func (d dirHandle) openDir(name string) (dirHandle, error) {
	r, err := d.r.OpenRoot(name)
	return dirHandle{r: r}, err
}

// openFile opens the file name for reading.
func (d dirHandle) openFile(name string) (*os.File, error) { return d.r.Open(name) }

// close closes the handle; closing twice is harmless.
func (d dirHandle) close() {
	if d.r != nil {
		_ = d.r.Close()
	}
}
