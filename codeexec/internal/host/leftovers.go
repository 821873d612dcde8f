package host

import (
	"os"
	"path/filepath"
	"strings"
)

// Leftovers lists what a workspace directory holds besides the live spare
// workspaces (see NewWorkspace): what runs or dead agents left behind.
func Leftovers(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), sparePrefix) && !deadWorkspace(filepath.Join(dir, e.Name())) {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
