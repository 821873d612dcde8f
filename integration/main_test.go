package integration

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// snapshot lists every entry under dir with its size and modification time.
func snapshot(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return out, err
}

// TestMain runs the test binary as a helper process when helperEnv is set
// (see helperMain). Otherwise it checks that the whole suite leaves the process working directory
// and the test skills exactly as it found them: scripts run in private
// workspaces, never here.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	dirs := []string{".", filepath.Join("..", "testdata", "skills")}
	before := map[string]map[string]string{}
	for _, d := range dirs {
		s, err := snapshot(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "snapshot:", err)
			os.Exit(2)
		}
		before[d] = s
	}
	code := m.Run()
	for _, d := range dirs {
		after, err := snapshot(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "snapshot:", err)
			os.Exit(2)
		}
		for p, v := range after {
			if before[d][p] != v {
				fmt.Fprintf(os.Stderr, "FAIL: the tests changed %s (%s -> %s)\n", p, before[d][p], v)
				code = 1
			}
		}
		for p := range before[d] {
			if _, ok := after[p]; !ok {
				fmt.Fprintf(os.Stderr, "FAIL: the tests removed %s\n", p)
				code = 1
			}
		}
	}
	os.Exit(code)
}
