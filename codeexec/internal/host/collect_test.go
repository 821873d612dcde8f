package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
)

// makeEntries creates n empty files in dir, as hard links to one file.
func makeEntries(t testing.TB, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(src, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.Link(src, filepath.Join(dir, fmt.Sprintf("f%07d", i))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadNames: a folder is read in batches, never past the limit, and
// says when names were left.
func TestReadNames(t *testing.T) {
	n := 3*nameBatch + 5
	dir := t.TempDir()
	makeEntries(t, dir, n)
	for _, tt := range []struct {
		limit    int
		wantLen  int
		wantMore bool
	}{
		{0, 0, true},
		{1, 1, true},
		{nameBatch, nameBatch, true},
		{n - 1, n - 1, true},
		{n, n, false},
		{n + 1, n, false},
		{10 * n, n, false},
	} {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			f, err := os.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			names, more, err := readNames(f, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) != tt.wantLen || more != tt.wantMore {
				t.Errorf("readNames(%d): %d names, more %v; want %d, %v", tt.limit, len(names), more, tt.wantLen, tt.wantMore)
			}
		})
	}
}

// TestCollectEntryLimit: the walk reads at most MaxCollectedEntries entries in
// all, counting the names every folder on its path holds, and says where
// it stopped; a tree of exactly MaxCollectedEntries entries is walked whole.
func TestCollectEntryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a tree of over 100,000 entries")
	}
	half := MaxCollectedEntries / 2
	for _, tt := range []struct {
		name     string
		extra    int // entries past MaxCollectedEntries
		wantStop bool
	}{
		{"exactly the limit", 0, false},
		{"one over", 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			// "a" sorts first and holds the rest: a walk counting only the
			// entries it has visited would hold both folders' names at once.
			makeEntries(t, filepath.Join(root, "a"), MaxCollectedEntries-half-2+tt.extra)
			makeEntries(t, root, half)
			if err := os.Mkdir(filepath.Join(root, "b"), 0o755); err != nil {
				t.Fatal(err)
			}
			h, err := openDirHandle(root)
			if err != nil {
				t.Fatal(err)
			}
			defer h.close()
			files, omitted := collect(h, nil, codeexec.FileLimits{MaxFiles: MaxCollectedEntries * 2, MaxFileBytes: 1, MaxTotalBytes: 1})
			stopped := 0
			for _, o := range omitted {
				if strings.Contains(o.Reason, "the walk stopped") {
					stopped++
				}
			}
			if (stopped == 1) != tt.wantStop || stopped > 1 {
				t.Errorf("%d stop notes in %d omitted entries, want stop %v", stopped, len(omitted), tt.wantStop)
			}
			if got := len(files); got > MaxCollectedEntries {
				t.Errorf("%d files collected, over %d entries", got, MaxCollectedEntries)
			}
			if !tt.wantStop && len(files) != MaxCollectedEntries-2 {
				t.Errorf("%d files collected, want all %d", len(files), MaxCollectedEntries-2)
			}
		})
	}
}
