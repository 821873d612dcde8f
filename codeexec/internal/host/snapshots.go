package host

import (
	"os"
	"path/filepath"
)

// Snapshots lists the snapshots of the cache directories under parent, a
// workspace directory, each as "<cache directory>/<snapshot key>" relative
// to parent; a snapshot's files are in its SnapTree folder.
func Snapshots(parent string) []string {
	var out []string
	dirs, _ := filepath.Glob(filepath.Join(parent, cachePrefix+"*"))
	for _, d := range dirs {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if validKey(e.Name()) {
				out = append(out, filepath.Base(d)+"/"+e.Name())
			}
		}
	}
	return out
}
