//go:build unix

package host

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// hostileTrees are what a script can leave in its skill folder that a
// plain os.RemoveAll cannot take: folders it locked or made read-only,
// more entries than a batch, a deep chain.
var hostileTrees = []struct {
	name string
	make func(t *testing.T, skill string)
}{
	{"nothing", func(*testing.T, string) {}},
	{"locked folders", func(t *testing.T, skill string) {
		a := filepath.Join(skill, "a")
		hosttest.MustMkdirAll(t, filepath.Join(a, "b"))
		hosttest.MustWrite(t, filepath.Join(a, "b", "f"), "x")
		for _, d := range []string{filepath.Join(a, "b"), a} {
			if err := os.Chmod(d, 0); err != nil {
				t.Fatal(err)
			}
		}
	}},
	{"read-only folders", func(t *testing.T, skill string) {
		ro := filepath.Join(skill, "ro")
		makeEntries(t, ro, nameBatch+1)
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(skill, 0o500); err != nil {
			t.Fatal(err)
		}
	}},
	{"a deep chain", func(t *testing.T, skill string) {
		p := skill
		for range 200 {
			p = filepath.Join(p, "d")
		}
		hosttest.MustMkdirAll(t, p)
	}},
}

// TestRemoveLater: a finished run's workspace leaves its directory at once
// (only the spare stays) and is gone from the trash once WaitRemovals
// returns, whatever the script left in it.
func TestRemoveLater(t *testing.T) {
	if trashDir() == "" {
		t.Skip("no usable trash in os.TempDir")
	}
	for _, tt := range hostileTrees {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			if trashFor(parent) == "" {
				t.Skip("t.TempDir is on another file system than os.TempDir")
			}
			ws, err := NewWorkspace(parent, "skill")
			if err != nil {
				t.Fatal(err)
			}
			tt.make(t, ws.Skill)
			var cfg Config
			cfg.RemoveLater(ws)
			if left := Leftovers(parent); len(left) != 0 {
				t.Errorf("the workspace directory holds %v after RemoveLater", left)
			}
			if filepath.Dir(ws.Root) != trashDir() {
				t.Errorf("the workspace went to %s, not into the trash %s", ws.Root, trashDir())
			}
			cfg.WaitRemovals()
			if _, err := os.Lstat(ws.Root); !os.IsNotExist(err) {
				t.Errorf("%s is still there after WaitRemovals (%v)", ws.Root, err)
			}
		})
	}
}

// TestWaitRemovalsWaits: WaitRemovals returns only once a removal that
// could not start yet (every worker busy) is done.
func TestWaitRemovalsWaits(t *testing.T) {
	parent := t.TempDir()
	if trashDir() == "" || trashFor(parent) == "" {
		t.Skip("no trash on t.TempDir's file system")
	}
	ws, err := NewWorkspace(parent, "skill")
	if err != nil {
		t.Fatal(err)
	}
	makeEntries(t, filepath.Join(ws.Skill, "wide"), 4*nameBatch)
	for range removalWorkers { // every worker busy
		removalSlots <- struct{}{}
	}
	var cfg Config
	cfg.RemoveLater(ws)
	if _, err := os.Lstat(ws.Root); err != nil {
		t.Fatalf("removed while every worker was busy: %v", err)
	}
	for range removalWorkers {
		<-removalSlots
	}
	cfg.WaitRemovals()
	if _, err := os.Lstat(ws.Root); !os.IsNotExist(err) {
		t.Errorf("%s is still there after WaitRemovals (%v)", ws.Root, err)
	}
}

// TestTrashSweep: a sweep of the trash removes what a dead agent left
// there, hostile trees included, and leaves a live agent's removal alone.
func TestTrashSweep(t *testing.T) {
	trash := trashDir()
	if trash == "" {
		t.Skip("no usable trash in os.TempDir")
	}
	var dead []string
	for _, tt := range hostileTrees {
		ws, err := makeWorkspace(trash) // a spare: named, locked, complete
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.claim("skill"); err != nil {
			t.Fatal(err)
		}
		tt.make(t, ws.Skill)
		_ = ws.lock.Close() // the agent died: the kernel dropped its lock
		dead = append(dead, ws.Root)
	}
	live, err := makeWorkspace(trash)
	if err != nil {
		t.Fatal(err)
	}
	if err := live.claim("skill"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(live.Remove)
	sweep(trash)
	for _, d := range dead {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("a dead agent's %s is still in the trash (%v)", d, err)
		}
	}
	entries, _ := os.ReadDir(trash)
	if !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == filepath.Base(live.Root) }) {
		t.Errorf("the sweep removed a live agent's %s", live.Root)
	}
}
