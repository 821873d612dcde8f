package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// catScript prints the content of data/a.txt.
const catScript = "cat data/a.txt"

// poisonScript tries every way a script might change the snapshot its
// shipped files come from, then prints what it reads.
const poisonScript = `import os, stat
f = "data/a.txt"
tried = {}
def attempt(name, fn):
    try:
        fn(); tried[name] = "ok"
    except OSError as e:
        tried[name] = e.strerror
attempt("write", lambda: open(f, "a").write("poison"))
attempt("truncate", lambda: os.truncate(f, 0))
attempt("chmod", lambda: os.chmod(f, 0o666))
attempt("utime", lambda: os.utime(f, (0, 0)))
attempt("xattr", lambda: os.setxattr(f, "user.x", b"1"))
attempt("link", lambda: os.link(f, os.environ["TMPDIR"] + "/l"))
attempt("rename", lambda: os.rename(f, "data/moved.txt"))
print(sorted(tried.items()))
`

// TestSandboxCachePoisoning: a sandboxed script cannot change the snapshot
// its files come from, however it tries (write, truncate, chmod, utime,
// xattr, link, rename), neither for the runs going on with it nor for the
// next; under a root agent the files are root's and read-only, under an
// unprivileged one they are the run's own copies.
func TestSandboxCachePoisoning(t *testing.T) {
	requireSandbox(t)
	dir := hosttest.NewWorkspaceDir(t)
	e := New(WithWorkspaceDir(dir))
	src := hosttest.SkillDir(t, map[string]string{"scripts/p.py": poisonScript, "scripts/a.sh": catScript, "data/a.txt": "clean"})
	codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}) // builds the snapshot
	snaps := host.Snapshots(dir)
	if len(snaps) != 1 {
		t.Fatalf("snapshots %v, want one", snaps)
	}
	shipped := filepath.Join(dir, snaps[0], host.SnapTree, "data", "a.txt")
	before, err := os.Lstat(shipped)
	if err != nil {
		t.Fatal(err)
	}

	// The poisoner alone, then the snapshot itself: same inode, owner,
	// mode and bytes.
	res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/p.py"})
	t.Logf("poisoning attempts: %s", strings.TrimSpace(res.Stdout.Text))
	after, err := os.Lstat(shipped)
	if err != nil {
		t.Fatalf("the snapshot file is gone: %v", err)
	}
	if b, _ := os.ReadFile(shipped); string(b) != "clean" || !os.SameFile(before, after) || after.Mode() != before.Mode() || host.RootWritableOnly(after) != host.RootWritableOnly(before) {
		t.Errorf("the snapshot file changed: %q, mode %v -> %v", b, before.Mode(), after.Mode())
	}

	// Then the poisoner beside other runs, and runs after it.
	const together = 4
	var wg sync.WaitGroup
	reads := make([]string, together)
	wg.Go(func() {
		res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/p.py"})
		t.Logf("poisoning attempts: %s", strings.TrimSpace(res.Stdout.Text))
	})
	for i := range together {
		wg.Go(func() {
			reads[i] = codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}).Stdout.Text
		})
	}
	wg.Wait()
	for _, r := range reads {
		if r != "clean" {
			t.Errorf("a run beside the poisoner read %q", r)
		}
	}
	for range 2 {
		if res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: os.DirFS(src), Script: "scripts/a.sh"}); res.Stdout.Text != "clean" {
			t.Errorf("a run after the poisoner read %q", res.Stdout.Text)
		}
	}
	if got := host.Snapshots(dir); len(got) != 1 || got[0] != snaps[0] {
		t.Errorf("snapshots %v, want %v, unharmed (not dropped and rebuilt)", got, snaps)
	}
	if isRoot() && !host.RootWritableOnly(after) {
		t.Errorf("the root agent's snapshot file is not root's and read-only: %v", after.Mode())
	}
}
