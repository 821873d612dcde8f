//go:build unix

package codeexec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	check := func(ws *workspace, name string) {
		t.Helper()
		if !strings.HasPrefix(filepath.Base(ws.root), workspacePrefix) || filepath.Base(ws.skill) != name {
			t.Errorf("workspace %s with skill folder %s, want a run's root and %s", ws.root, ws.skill, name)
		}
		for _, d := range []string{ws.skill, ws.home, ws.tmp} {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v %v", d, fi, err)
			}
		}
		if _, err := os.Stat(filepath.Join(ws.dir, spareSkillName)); err == nil {
			t.Errorf("the spare's skill folder is still there beside %s", name)
		}
	}

	first, err := newWorkspace(parent, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	check(first, "alpha")
	first.remove() // waits for the spare
	spare := spareOf()

	second, err := newWorkspace(parent, "beta")
	if err != nil {
		t.Fatal(err)
	}
	check(second, "beta")
	if got, want := filepath.Base(second.root), workspacePrefix+strings.TrimPrefix(spare, sparePrefix); got != want {
		t.Errorf("the second run's root is %s, want the spare %s renamed", got, want)
	}
	second.remove()

	removeTree(filepath.Join(parent, spareOf())) // someone removes the spare
	third, err := newWorkspace(parent, DefaultSkillName)
	if err != nil {
		t.Fatalf("without its spare: %v", err)
	}
	check(third, DefaultSkillName)
	third.remove()

	// A spare a cleaner pruned (its empty HOME gone) is not used.
	removeTree(filepath.Join(parent, spareOf(), "w", homeDirName))
	pruned, err := newWorkspace(parent, DefaultSkillName)
	if err != nil {
		t.Fatalf("with a pruned spare: %v", err)
	}
	check(pruned, DefaultSkillName)
	pruned.remove()

	// Another user squats the name the spare's root would take: the run
	// takes another.
	squat := filepath.Join(parent, workspacePrefix+strings.TrimPrefix(spareOf(), sparePrefix))
	mustMkdir(t, squat, 0o755)
	mustWrite(t, filepath.Join(squat, "x"), "")
	squatted, err := newWorkspace(parent, DefaultSkillName)
	if err != nil {
		t.Fatalf("with the spare's run name taken: %v", err)
	}
	check(squatted, DefaultSkillName)
	if squatted.root == squat {
		t.Errorf("the run took the squatted %s", squat)
	}
	squatted.remove()
	removeTree(squat)
	spareOf()

	// Only the maxSpareParents directories used last keep a spare.
	var parents []string
	for range maxSpareParents + 1 {
		p := t.TempDir()
		ws, err := newWorkspace(p, DefaultSkillName)
		if err != nil {
			t.Fatal(err)
		}
		ws.remove()
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
	mustMkdir(t, dead, 0o700)
	mustWrite(t, filepath.Join(dead, lockFileName), "")
	ws, err := newWorkspace(other, DefaultSkillName)
	if err != nil {
		t.Fatal(err)
	}
	ws.remove()
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead agent's spare was not swept: %v", err)
	}
}
