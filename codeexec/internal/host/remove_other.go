//go:build !unix

package host

import (
	"os"
	"path/filepath"
)

// removeTree deletes dir, making directories a script left unwritable
// writable again when a first attempt fails.
func removeTree(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
