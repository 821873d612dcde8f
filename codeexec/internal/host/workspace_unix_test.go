//go:build unix

package host

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// TestWorkspaceSpares: a run's workspace comes from the spare made while
// the previous run went on; the spare is the agent's, locked, and
// complete; a spare removed or pruned under the agent is replaced, a
// squatted name does not stop a run, only the directories used last keep
// a spare, and a dead agent's spare is swept.
func TestWorkspaceSpares(t *testing.T) {
	parent := t.TempDir()
	spareOf := func() string {
		t.Helper()
		var names []string
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if len(names) != 1 || !strings.HasPrefix(names[0], sparePrefix) {
			t.Fatalf("%s holds %v, want one spare", parent, names)
		}
		if deadWorkspace(filepath.Join(parent, names[0])) {
			t.Errorf("the spare's lock is not held")
		}
		return names[0]
	}
	check := func(ws *Workspace, name string) {
		t.Helper()
		if !strings.HasPrefix(filepath.Base(ws.Root), WorkspacePrefix) || filepath.Base(ws.Skill) != name {
			t.Errorf("workspace %s with skill folder %s, want a run's root and %s", ws.Root, ws.Skill, name)
		}
		for _, d := range []string{ws.Skill, ws.Home, ws.Tmp} {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v %v", d, fi, err)
			}
		}
		if _, err := os.Stat(filepath.Join(ws.Dir, spareSkillName)); err == nil {
			t.Errorf("the spare's skill folder is still there beside %s", name)
		}
	}

	first, err := NewWorkspace(parent, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	check(first, "alpha")
	first.Remove() // waits for the spare
	spare := spareOf()

	second, err := NewWorkspace(parent, "beta")
	if err != nil {
		t.Fatal(err)
	}
	check(second, "beta")
	if got, want := filepath.Base(second.Root), WorkspacePrefix+strings.TrimPrefix(spare, sparePrefix); got != want {
		t.Errorf("the second run's root is %s, want the spare %s renamed", got, want)
	}
	second.Remove()

	removeTree(filepath.Join(parent, spareOf())) // someone removes the spare
	third, err := NewWorkspace(parent, codeexec.DefaultSkillName)
	if err != nil {
		t.Fatalf("without its spare: %v", err)
	}
	check(third, codeexec.DefaultSkillName)
	third.Remove()

	// A spare a cleaner pruned (its empty HOME gone) is not used.
	removeTree(filepath.Join(parent, spareOf(), "w", HomeDirName))
	pruned, err := NewWorkspace(parent, codeexec.DefaultSkillName)
	if err != nil {
		t.Fatalf("with a pruned spare: %v", err)
	}
	check(pruned, codeexec.DefaultSkillName)
	pruned.Remove()

	// Another user squats the name the spare's root would take: the run
	// takes another.
	squat := filepath.Join(parent, WorkspacePrefix+strings.TrimPrefix(spareOf(), sparePrefix))
	hosttest.MustMkdir(t, squat, 0o755)
	hosttest.MustWrite(t, filepath.Join(squat, "x"), "")
	squatted, err := NewWorkspace(parent, codeexec.DefaultSkillName)
	if err != nil {
		t.Fatalf("with the spare's run name taken: %v", err)
	}
	check(squatted, codeexec.DefaultSkillName)
	if squatted.Root == squat {
		t.Errorf("the run took the squatted %s", squat)
	}
	squatted.Remove()
	removeTree(squat)
	spareOf()

	// Only the maxSpareParents directories used last keep a spare.
	var parents []string
	for range maxSpareParents + 1 {
		p := t.TempDir()
		ws, err := NewWorkspace(p, codeexec.DefaultSkillName)
		if err != nil {
			t.Fatal(err)
		}
		ws.Remove()
		parents = append(parents, p)
	}
	if entries, _ := os.ReadDir(parents[0]); len(entries) != 0 {
		t.Errorf("the directory used longest ago still holds %d entries, want its spare removed", len(entries))
	}
	for _, p := range parents[1:] {
		if entries, _ := os.ReadDir(p); len(entries) != 1 {
			t.Errorf("%s holds %d entries, want its spare", p, len(entries))
		}
	}

	// A dead agent's spare (its lock free) goes with the first sweep.
	other := t.TempDir()
	dead := filepath.Join(other, sparePrefix+"dead")
	hosttest.MustMkdir(t, dead, 0o700)
	hosttest.MustWrite(t, filepath.Join(dead, lockFileName), "")
	ws, err := NewWorkspace(other, codeexec.DefaultSkillName)
	if err != nil {
		t.Fatal(err)
	}
	ws.Remove()
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead agent's spare was not swept: %v", err)
	}
}

// TestOnRemoveOrder: a workspace's removal hooks run after its tree is
// gone, the last added first (a run's cgroup, added after its uid lease,
// is killed and removed before the uid is leased again).
func TestOnRemoveOrder(t *testing.T) {
	ws, err := NewWorkspace(t.TempDir(), "skill")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, name := range []string{"uid lease", "cgroup"} {
		ws.OnRemove(func() {
			if _, err := os.Lstat(ws.Root); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: the workspace is still there (%v)", name, err)
			}
			order = append(order, name)
		})
	}
	ws.Remove()
	if want := []string{"cgroup", "uid lease"}; !slices.Equal(order, want) {
		t.Errorf("hooks ran %q, want %q", order, want)
	}
}
