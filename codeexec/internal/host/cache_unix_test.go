//go:build unix

package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// catScript prints the content of data/a.txt.
const catScript = "cat data/a.txt"

// cacheExecutors are host executors, one per way of staging from the
// cache (Local's, and a sandbox's as root and otherwise), all with their
// workspaces (and so their caches) under dir. codeexec/sandbox's tests run
// the cache through the real sandbox.
func cacheExecutors(t *testing.T, dir string) map[string]codeexec.Executor {
	return map[string]codeexec.Executor{
		"CloneOrLink": newStaging(StageCloneOrLink, withWorkspaceDir(dir)),
		"Link":        newStaging(StageLink, withWorkspaceDir(dir)),
		"CloneOrCopy": newStaging(StageCloneOrCopy, withWorkspaceDir(dir)),
	}
}

// TestCacheServesRepeatRuns: a second run of the same folder uses the
// snapshot the first built (one snapshot, not two), and sees the folder's
// bytes.
func TestCacheServesRepeatRuns(t *testing.T) {
	for name, e := range cacheExecutors(t, hosttest.NewWorkspaceDir(t)) {
		t.Run(name, func(t *testing.T) {
			src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": catScript, "data/a.txt": "first"})
			for range 2 {
				res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"})
				if res.Stdout.Text != "first" || len(res.Files) != 0 {
					t.Fatalf("stdout %q (stderr %q) files %v", res.Stdout.Text, res.Stderr.Text, codeexectest.Paths(res.Files))
				}
			}
		})
	}
	if n := len(Snapshots(t.TempDir())); n != 0 {
		t.Fatalf("a fresh directory has %d snapshots", n)
	}
}

// TestCacheStale: a skill file changed between two runs is the new bytes in
// the second.
func TestCacheStale(t *testing.T) {
	for name, e := range cacheExecutors(t, hosttest.NewWorkspaceDir(t)) {
		t.Run(name, func(t *testing.T) {
			src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": catScript, "data/a.txt": "old"})
			req := &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}
			if res := codeexectest.MustRun(t, e, req); res.Stdout.Text != "old" {
				t.Fatalf("first run: %q", res.Stdout.Text)
			}
			for _, content := range []string{"new", "NEW", "a longer new text"} { // same size too
				if err := os.WriteFile(filepath.Join(src, "data", "a.txt"), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				if res := codeexectest.MustRun(t, e, req); res.Stdout.Text != content {
					t.Errorf("after the change to %q the run saw %q", content, res.Stdout.Text)
				}
			}
		})
	}
}

// TestCacheTamperLocal: a Local script that changes a file it was shipped
// with (Local runs share the snapshot's inode through a hard link where
// the file system cannot clone) gets it back as an output, and the next run
// still gets the skill's own bytes.
func TestCacheTamperLocal(t *testing.T) {
	e := newLocal(withWorkspaceDir(hosttest.NewWorkspaceDir(t)))
	src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": catScript, "scripts/tamper.sh": "echo -n tampered >> data/a.txt; cat data/a.txt", "data/a.txt": "skill's own"})
	res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/tamper.sh"})
	if res.Stdout.Text != "skill's owntampered" || len(res.Files) != 1 || string(res.Files[0].Data) != "skill's owntampered" {
		t.Fatalf("the tampering run: stdout %q files %v", res.Stdout.Text, res.Files)
	}
	for range 2 {
		if res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}); res.Stdout.Text != "skill's own" {
			t.Errorf("after a run changed its copy, the next run saw %q", res.Stdout.Text)
		}
	}
}

// editKinds change a skill folder in ways a fingerprint of sizes and
// modification times alone would miss, or that move files: each puts
// back the modification time of what it touched.
var editKinds = []struct {
	name string
	edit func(t *testing.T, src string)
	want string // what catScript then prints
}{
	{"SameSizeTimeRestored", func(t *testing.T, src string) {
		p := filepath.Join(src, "data", "a.txt")
		restoreTimes(t, p, func() { hosttest.MustWrite(t, p, "EDITED") })
	}, "EDITED"},
	{"InPlaceTimeRestored", func(t *testing.T, src string) {
		p := filepath.Join(src, "data", "a.txt")
		restoreTimes(t, p, func() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte("PATCH"), 1); err != nil {
				t.Fatal(err)
			}
		})
	}, "oPATCH"},
	{"Chmod", func(t *testing.T, src string) {
		p := filepath.Join(src, "data", "a.txt")
		restoreTimes(t, p, func() {
			if err := os.Chmod(p, 0o600); err != nil {
				t.Fatal(err)
			}
		})
	}, "origin"},
	{"Delete", func(t *testing.T, src string) {
		if err := os.Remove(filepath.Join(src, "data", "a.txt")); err != nil {
			t.Fatal(err)
		}
	}, "missing"},
	{"Rename", func(t *testing.T, src string) {
		d := filepath.Join(src, "data")
		restoreTimes(t, d, func() {
			if err := os.Rename(filepath.Join(d, "a.txt"), filepath.Join(d, "b.txt")); err != nil {
				t.Fatal(err)
			}
		})
	}, "missing"},
}

// restoreTimes runs change and puts p's access and modification times back
// (as touch -r, cp -p or rsync -t would).
func restoreTimes(t *testing.T, p string, change func()) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	change()
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// TestCacheSeesEveryEdit: after each kind of edit, in this process and in
// a new one (which reads the index the first wrote), the next run is given
// the folder's current bytes and modes, never the snapshot of before.
func TestCacheSeesEveryEdit(t *testing.T) {
	trustNewFolders(t) // the folders are new: remember them at once
	const script = `cat data/a.txt 2>/dev/null || printf missing; stat -c ' %a' data/a.txt 2>/dev/null || true`
	for name, e := range cacheExecutors(t, hosttest.NewWorkspaceDir(t)) {
		for _, k := range editKinds {
			for _, fresh := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/NewProcess=%v", name, k.name, fresh), func(t *testing.T) {
					src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": script, "data/a.txt": "origin"})
					req := &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}
					if got := codeexectest.MustRun(t, e, req).Stdout.Text; !strings.HasPrefix(got, "origin ") {
						t.Fatalf("before the edit: %q", got)
					}
					k.edit(t, src)
					if fresh {
						forgetCaches() // as a new process, which has only the index on disk
					}
					want := k.want
					if fi, err := os.Stat(filepath.Join(src, "data", "a.txt")); err == nil {
						want += fmt.Sprintf(" %o", fi.Mode().Perm()) // a small file: the run's own copy
					}
					if got := strings.TrimSpace(codeexectest.MustRun(t, e, req).Stdout.Text); got != want {
						t.Errorf("after the edit the run was given %q, want %q", got, want)
					}
				})
			}
		}
	}
}

// forgetCaches drops this process's knowledge of every cache directory.
func forgetCaches() {
	caches.Range(func(k, _ any) bool {
		caches.Delete(k)
		return true
	})
}

// bigOrigin is a file too large to be copied up for a run (see copyUp): a
// run links it, and headScript prints its first six bytes.
var bigOrigin = "origin" + strings.Repeat(".", copyUpFileBytes)

const headScript = "head -c 6 data/a.txt"

// TestCacheLocalRewriteThroughLink: a Local script that rewrites a file it
// was shipped with in place, through the hard link to the snapshot, and
// sets its time back, is reported as having changed it, and neither the
// next run of the skill nor a run of a second, identical skill folder (a
// second tenant's) is given its bytes.
func TestCacheLocalRewriteThroughLink(t *testing.T) {
	trustNewFolders(t)
	const poison = `import os
p = "data/a.txt"
st = os.stat(p)
with open(p, "r+") as f:
    f.write("POISON")
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
`
	dir := hosttest.NewWorkspaceDir(t)
	e := newLocal(withWorkspaceDir(dir))
	files := map[string]string{"scripts/a.sh": headScript, "scripts/poison.py": poison, "data/a.txt": bigOrigin}
	src, twin := hosttest.SkillDir(t, files), hosttest.SkillDir(t, files)
	codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}) // the snapshot
	res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/poison.py"})
	if len(res.Files) != 1 || res.Files[0].Path != "data/a.txt" || !strings.HasPrefix(string(res.Files[0].Data), "POISON") {
		t.Errorf("the rewriting run reported files %v, want data/a.txt with its new bytes", codeexectest.Paths(res.Files))
	}
	for _, s := range []string{src, twin, src} {
		if got := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(s), Script: "scripts/a.sh"}).Stdout.Text; got != "origin" {
			t.Errorf("a run of %s after the rewrite was given %q", s, got)
		}
	}
}

// TestCacheDropsSnapshotsOfDeadRuns: a snapshot a Local run was linking
// files of when its agent died (its lease left, its workspace dead) is not
// given to anyone again: it may have been changed unchecked.
func TestCacheDropsSnapshotsOfDeadRuns(t *testing.T) {
	trustNewFolders(t)
	dir := hosttest.NewWorkspaceDir(t)
	src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": headScript, "data/a.txt": bigOrigin})
	codeexectest.MustRun(t, newLocal(withWorkspaceDir(dir)), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"})
	snaps := Snapshots(dir)
	if len(snaps) != 1 {
		t.Fatalf("snapshots %v", snaps)
	}
	leases := filepath.Join(dir, snaps[0], snapshotLeases)
	if entries, _ := os.ReadDir(leases); len(entries) != 0 {
		t.Fatalf("a finished run left its lease: %v", entries)
	}
	hosttest.MustWrite(t, filepath.Join(leases, WorkspacePrefix+"gone"), "")
	forgetCaches()
	codeexectest.MustRun(t, newLocal(withWorkspaceDir(dir)), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"})
	if got := Snapshots(dir); len(got) != 1 || got[0] == snaps[0] && fileExists(filepath.Join(dir, snaps[0], snapshotLeases, WorkspacePrefix+"gone")) {
		t.Errorf("snapshots %v: the one with a dead run's lease is still used", got)
	}
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// TestCacheOutputs: files taken from a snapshot are outputs only when the
// run changed them: replacing one with the same bytes is not, with others
// is, and so is a new file.
func TestCacheOutputs(t *testing.T) {
	src := `import os
os.remove("data/same.txt"); open("data/same.txt", "w").write("same")
os.remove("data/other.txt"); open("data/other.txt", "w").write("OTHER")
open("new.txt", "w").write("new")
open("data/read.txt").read()
`
	for name, e := range cacheExecutors(t, hosttest.NewWorkspaceDir(t)) {
		t.Run(name, func(t *testing.T) {
			dir := hosttest.SkillDir(t, map[string]string{"scripts/w.py": src, "data/same.txt": "same", "data/other.txt": "other", "data/read.txt": "read"})
			for range 2 { // the second from the snapshot the first built
				res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(dir), Script: "scripts/w.py"})
				if got := strings.Join(codeexectest.Paths(res.Files), " "); got != "data/other.txt new.txt" {
					t.Errorf("files %q (stderr %q), want data/other.txt new.txt", got, res.Stderr.Text)
				}
			}
		})
	}
}

// TestCacheConcurrentFirstRuns: eight runs of a folder no snapshot exists
// for yet, started together, all see the whole folder.
func TestCacheConcurrentFirstRuns(t *testing.T) {
	const runs = 8
	files := map[string]string{"scripts/sum.sh": "cat data/* | sha256sum | cut -c1-16"}
	for i := range 50 {
		files[fmt.Sprintf("data/%02d", i)] = strings.Repeat(strconv.Itoa(i), 1000)
	}
	want := ""
	for name, e := range cacheExecutors(t, hosttest.NewWorkspaceDir(t)) {
		t.Run(name, func(t *testing.T) {
			src := hosttest.SkillDir(t, files)
			var wg sync.WaitGroup
			outs := make([]string, runs)
			for i := range runs {
				wg.Go(func() {
					res, err := e.Execute(context.Background(), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/sum.sh"})
					if err == nil {
						outs[i] = res.Stdout.Text
					} else {
						outs[i] = err.Error()
					}
				})
			}
			wg.Wait()
			if want == "" {
				res := codeexectest.MustRun(t, newLocal(withSnapshotCache(-1)), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/sum.sh"})
				want = res.Stdout.Text
			}
			for i, o := range outs {
				if o != want {
					t.Errorf("run %d saw %q, want %q", i, o, want)
				}
			}
		})
	}
}

// cacheChildEnv makes the test binary one of TestCacheConcurrentProcesses'
// processes: it runs the folder named there with the workspace directory in
// cacheChildDirEnv.
const (
	cacheChildEnv    = "ADKSKILLS_CACHE_CHILD"
	cacheChildDirEnv = "ADKSKILLS_CACHE_CHILD_DIR"
)

// TestCacheChild is a process of TestCacheConcurrentProcesses.
func TestCacheChild(t *testing.T) {
	src := os.Getenv(cacheChildEnv)
	if src == "" {
		t.Skip("runs only as a child of TestCacheConcurrentProcesses")
	}
	e := newLocal(withWorkspaceDir(os.Getenv(cacheChildDirEnv)))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			res, err := e.Execute(context.Background(), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/sum.sh"})
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Printf("SUM %s\n", strings.TrimSpace(res.Stdout.Text))
		})
	}
	wg.Wait()
}

// TestCacheConcurrentProcesses: three processes of four runs each, all
// first runs of the same folder in one cache, all see the whole folder.
func TestCacheConcurrentProcesses(t *testing.T) {
	if os.Getenv(cacheChildEnv) != "" {
		t.Skip("already a child")
	}
	files := map[string]string{"scripts/sum.sh": "cat data/* | sha256sum | cut -c1-16"}
	for i := range 50 {
		files[fmt.Sprintf("data/%02d", i)] = strings.Repeat(strconv.Itoa(i), 2000)
	}
	src := hosttest.SkillDir(t, files)
	dir := hosttest.NewWorkspaceDir(t)
	want := strings.TrimSpace(codeexectest.MustRun(t, newLocal(withSnapshotCache(-1)), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/sum.sh"}).Stdout.Text)
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCacheChild$", "-test.v")
		cmd.Env = append(os.Environ(), cacheChildEnv+"="+src, cacheChildDirEnv+"="+dir)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, outs[i])
		}
		if got := strings.Count(outs[i].String(), "SUM "+want+"\n"); got != 4 {
			t.Errorf("process %d: %d of 4 runs saw the whole folder:\n%s", i, got, outs[i])
		}
	}
	if snaps := Snapshots(dir); len(snaps) != 1 {
		t.Errorf("snapshots %v, want one", snaps)
	}
}

// trustNewFolders makes the cache remember the fingerprints of folders
// written a moment ago, for tests of what its index keeps.
func trustNewFolders(t *testing.T) {
	old := racyMargin
	racyMargin = -time.Hour
	t.Cleanup(func() { racyMargin = old })
}

// TestCacheBounded: the cache keeps its byte limit, dropping the least
// recently used snapshots.
func TestCacheBounded(t *testing.T) {
	trustNewFolders(t)
	const size = 10_000
	dir := hosttest.NewWorkspaceDir(t)
	e := newLocal(withWorkspaceDir(dir), withSnapshotCache(2*size+size/2))
	for i := range 4 {
		src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": "true", "data/blob": strings.Repeat(strconv.Itoa(i), size)})
		codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"})
	}
	if snaps := Snapshots(dir); len(snaps) != 2 {
		t.Errorf("snapshots %v: want the two most recent of four within the limit", snaps)
	}
	// The index names only the snapshots kept.
	index, _ := filepath.Glob(filepath.Join(dir, cachePrefix+"*", cacheIndexDir, "*"))
	if len(index) != 2 {
		t.Errorf("index entries %v: want one for each snapshot kept", index)
	}
}

// TestCacheSweptOnStart: the first use of a cache directory removes what
// dead builders and evictions left.
func TestCacheSweptOnStart(t *testing.T) {
	dir := hosttest.NewWorkspaceDir(t)
	cdir := filepath.Join(dir, cachePrefix+strconv.Itoa(os.Geteuid()))
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	left := []string{cacheTmpInfix + strconv.Itoa(dead.Process.Pid) + "-x", cacheTrash + "y"}
	alive := cacheTmpInfix + strconv.Itoa(os.Getpid()) + "-z"
	for _, d := range append(left, alive) {
		if err := os.MkdirAll(filepath.Join(cdir, d, "tree"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(cdir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": "true"})
	codeexectest.MustRun(t, newLocal(withWorkspaceDir(dir)), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"})
	for _, d := range left {
		if _, err := os.Lstat(filepath.Join(cdir, d)); err == nil {
			t.Errorf("%s survived the sweep", d)
		}
	}
	if _, err := os.Lstat(filepath.Join(cdir, alive)); err != nil {
		t.Errorf("a live builder's %s was swept: %v", alive, err)
	}
}

// TestCacheNotFollowedThroughLink: a cache directory that is a link (to a
// directory someone else prepared) is not used; runs copy instead.
func TestCacheNotFollowedThroughLink(t *testing.T) {
	dir := hosttest.NewWorkspaceDir(t)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, cachePrefix+strconv.Itoa(os.Geteuid()))); err != nil {
		t.Fatal(err)
	}
	src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": catScript, "data/a.txt": "bytes"})
	if res := codeexectest.MustRun(t, newLocal(withWorkspaceDir(dir)), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}); res.Stdout.Text != "bytes" {
		t.Errorf("stdout %q stderr %q", res.Stdout.Text, res.Stderr.Text)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the link's target was used as a cache: %v", entries)
	}
}

// TestCacheOff: withSnapshotCache(-1) keeps no snapshot.
func TestCacheOff(t *testing.T) {
	dir := hosttest.NewWorkspaceDir(t)
	src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": catScript, "data/a.txt": "x"})
	codeexectest.MustRun(t, newLocal(withWorkspaceDir(dir), withSnapshotCache(-1)), &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"})
	if left := Leftovers(dir); len(left) != 0 {
		t.Errorf("with the cache off, the workspace directory holds %v", left)
	}
}

// TestCopiedFilesKeepTheirChangeTime: a skill file staged as a clone or
// copy of a snapshot is recorded with its change time, so the collection
// after a run that left it alone takes it for unchanged without reading
// it back (a run's cost does not grow with its skill's size).
func TestCopiedFilesKeepTheirChangeTime(t *testing.T) {
	src := hosttest.SkillDir(t, map[string]string{"scripts/a.sh": catScript, "data/a.txt": "first"})
	parent := hosttest.NewWorkspaceDir(t)
	c, err := cacheFor(parent, false, DefaultCacheBytes)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first stage builds the snapshot, the second takes it
		ws, err := NewWorkspace(parent, codeexec.DefaultSkillName)
		if err != nil {
			t.Fatal(err)
		}
		snap, _, err := ws.stage(&codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}, codeexec.DefaultMaxSkillBytes, StageCloneOrCopy, func() *cache { return c })
		if err != nil {
			t.Fatal(err)
		}
		for p, rec := range snap {
			var st unix.Stat_t
			if err := unix.Lstat(filepath.Join(ws.Skill, p), &st); err != nil {
				t.Fatal(err)
			}
			info := statInfo(filepath.Base(p), &st) // as the collection walk sees it
			reads := 0
			same, _ := snap.unchanged(p, info, func() ([]byte, error) {
				reads++
				return os.ReadFile(filepath.Join(ws.Skill, p))
			})
			if !same || reads != 0 || rec.shared {
				t.Errorf("%s: unchanged %v after %d reads (shared %v), want unchanged without a read", p, same, reads, rec.shared)
			}
		}
		ws.Remove()
	}
}

// BenchmarkCacheLookup finds and verifies the snapshot of a skill of
// lookupFiles files, as every run after the first does.
func BenchmarkCacheLookup(b *testing.B) {
	files := map[string]string{"scripts/a.sh": catScript}
	for i := range lookupFiles - 1 {
		files[fmt.Sprintf("data/%02d/f%04d.txt", i%40, i)] = "x"
	}
	src := os.DirFS(hosttest.SkillDir(b, files))
	c, err := cacheFor(b.TempDir(), false, DefaultCacheBytes)
	if err != nil {
		b.Fatal(err)
	}
	fp, _, ok := fingerprint(src, codeexec.DefaultMaxSkillBytes)
	if !ok {
		b.Fatal("no fingerprint")
	}
	key, _, err := c.snapshotFor(src, fp, time.Time{}, codeexec.DefaultMaxSkillBytes, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	c.remember(fp, key) // the files were just written: a run would not yet trust the fingerprint
	b.ReportAllocs()
	for b.Loop() {
		if _, m, ok := c.lookup(fp); !ok || len(m.Files) != lookupFiles {
			b.Fatalf("lookup: %v", ok)
		}
	}
}

// lookupFiles is the file count of the benchmarks' many-small-files skill.
const lookupFiles = 2000

// BenchmarkCacheChecks: what a run pays to trust the cache, on a skill of
// lookupFiles small files and on one of bigSkillFiles files of
// bigSkillBytes bytes: the fingerprint (one stat a file, change time
// included) and, for a Local run that linked the snapshot, the check after
// it (one stat a file; none is read unless its change time moved).
func BenchmarkCacheChecks(b *testing.B) {
	const (
		bigSkillFiles = 20
		bigSkillBytes = 5_000_000
	)
	small := map[string]string{"scripts/a.sh": "true"}
	for i := range lookupFiles - 1 {
		small[fmt.Sprintf("data/%02d/f%04d.txt", i%40, i)] = "x"
	}
	big := map[string]string{"scripts/a.sh": "true"}
	for i := range bigSkillFiles {
		big[fmt.Sprintf("data/blob%02d", i)] = strings.Repeat("y", bigSkillBytes)
	}
	for _, skill := range []struct {
		name  string
		files map[string]string
	}{{"2000Files", small}, {"100MB", big}} {
		src := os.DirFS(hosttest.SkillDir(b, skill.files))
		b.Run(skill.name+"/Fingerprint", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, ok := fingerprint(src, codeexec.DefaultMaxSkillBytes); !ok {
					b.Fatal("no fingerprint")
				}
			}
		})
		b.Run(skill.name+"/LocalLinkCheck", func(b *testing.B) {
			ws, err := NewWorkspace(hosttest.NewWorkspaceDir(b), codeexec.DefaultSkillName)
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Remove()
			c, err := cacheFor(filepath.Dir(ws.Root), false, DefaultCacheBytes)
			if err != nil {
				b.Fatal(err)
			}
			snap, use, err := ws.stage(&codeexec.Request{Skill: src, Script: "scripts/a.sh"}, codeexec.DefaultMaxSkillBytes, StageCloneOrLink, func() *cache { return c })
			if err != nil {
				b.Fatal(err)
			}
			if use == nil {
				b.Skip("the file system clones: a Local run links nothing to check")
			}
			defer use.release()
			b.ReportAllocs()
			for b.Loop() {
				use.check(snap)
			}
		})
	}
}
