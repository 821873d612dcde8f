//go:build unix

package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
	"golang.org/x/sys/unix"
)

// TestRemoveAll: a tree goes whatever a script made of it: deeper than the
// descriptors the agent has left, folders without permissions, links to
// what must stay, wide folders.
func TestRemoveAll(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	const fdLimit = 64
	tests := []struct {
		name string
		make func(t *testing.T, root string)
	}{
		{"a file", func(t *testing.T, root string) { hosttest.MustWrite(t, root, "") }},
		{"an empty folder", func(t *testing.T, root string) { hosttest.MustMkdir(t, root, 0o755) }},
		{"a link to what stays", func(t *testing.T, root string) {
			if err := os.Symlink(filepath.Dir(keep), root); err != nil {
				t.Fatal(err)
			}
		}},
		{"deeper than the descriptor limit", func(t *testing.T, root string) {
			p := root
			for range 4 * fdLimit {
				p = filepath.Join(p, "d")
			}
			hosttest.MustMkdirAll(t, p)
			hosttest.MustWrite(t, filepath.Join(p, "f"), "deep")
		}},
		{"locked folders", func(t *testing.T, root string) {
			hosttest.MustMkdirAll(t, filepath.Join(root, "a", "b"))
			hosttest.MustWrite(t, filepath.Join(root, "a", "b", "f"), "x")
			for _, d := range []string{filepath.Join(root, "a", "b"), filepath.Join(root, "a"), root} {
				if err := os.Chmod(d, 0); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"a read-only folder", func(t *testing.T, root string) {
			hosttest.MustMkdirAll(t, root)
			hosttest.MustWrite(t, filepath.Join(root, "f"), "x")
			if err := os.Chmod(root, 0o500); err != nil {
				t.Fatal(err)
			}
		}},
		{"links inside", func(t *testing.T, root string) {
			hosttest.MustMkdirAll(t, root)
			for _, n := range []string{"up", "file"} {
				target := map[string]string{"up": filepath.Dir(keep), "file": keep}[n]
				if err := os.Symlink(target, filepath.Join(root, n)); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"wider than a batch", func(t *testing.T, root string) {
			makeEntries(t, filepath.Join(root, "w"), 2*nameBatch+1)
			hosttest.MustMkdirAll(t, filepath.Join(root, "w", "zz", "sub"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "tree")
			tt.make(t, root)
			low := lim
			low.Cur = fdLimit
			if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
				t.Fatal(err)
			}
			err := removeAll(root)
			if err2 := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err2 != nil {
				t.Fatal(err2)
			}
			if err != nil {
				t.Fatalf("removeAll: %v", err)
			}
			if _, err := os.Lstat(root); !os.IsNotExist(err) {
				t.Errorf("%s is still there (%v)", root, err)
			}
			if b, err := os.ReadFile(keep); err != nil || string(b) != "x" {
				t.Errorf("what a link pointed to was touched: %q, %v", b, err)
			}
		})
	}
	if err := removeAll(filepath.Join(t.TempDir(), "missing")); err != nil {
		t.Errorf("removeAll of nothing: %v", err)
	}
}
