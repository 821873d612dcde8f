package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// TestWithUIDs: a range must be positive, fit uids, and leave
// nobody out.
func TestWithUIDs(t *testing.T) {
	tests := []struct {
		first, count int
		ok           bool
	}{
		{DefaultFirstUID, DefaultUIDCount, true},
		{1, 1, true},
		{nobodyUID + 1, 10, true},
		{nobodyUID - 10, 10, true},
		{0, 10, false},
		{-5, 10, false},
		{100, 0, false},
		{100, -1, false},
		{nobodyUID - 10, 11, false},
		{nobodyUID, 1, false},
		{maxUID, 1, true},
		{maxUID, 2, false},
	}
	for _, tt := range tests {
		err := New(WithUIDs(tt.first, tt.count)).Err()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, codeexec.ErrInvalidConfig)) {
			t.Errorf("WithUIDs(%d, %d): Err() = %v, want ok %v", tt.first, tt.count, err, tt.ok)
		}
	}
}

// withLeaseDir makes the per-run uid leases live in a fresh directory.
func withLeaseDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	old := uidLeaseDirs
	uidLeaseDirs = []string{base}
	t.Cleanup(func() { uidLeaseDirs = old })
	return filepath.Join(base, uidLeaseDirName)
}

// TestSandboxUIDLeases: runs at the same time never share a uid; a uid
// comes back when its run's lease is released; a full range fails with
// ErrSandboxUnavailable; WithUser takes no lease.
func TestSandboxUIDLeases(t *testing.T) {
	withLeaseDir(t)
	const first, count = 70000, 3
	s := New(WithUIDs(first, count))
	var held []runUser
	seen := map[int]bool{}
	for range count {
		u, err := s.user()
		if err != nil {
			t.Fatal(err)
		}
		if u.uid < first || u.uid >= first+count || u.gid != u.uid || seen[u.uid] {
			t.Errorf("leased %d:%d (seen %v), want a fresh uid in [%d, %d) with the same gid", u.uid, u.gid, seen, first, first+count)
		}
		if u.insideUID != insideID || u.insideGID != insideID {
			t.Errorf("the script sees itself as %d:%d, want %d", u.insideUID, u.insideGID, insideID)
		}
		seen[u.uid] = true
		held = append(held, u)
	}
	if u, err := s.user(); !errors.Is(err, codeexec.ErrSandboxUnavailable) {
		u.release()
		t.Fatalf("a lease past the range: %+v, %v; want ErrSandboxUnavailable", u, err)
	}
	held[1].release()
	u, err := s.user()
	if err != nil || u.uid != held[1].uid {
		t.Errorf("after a release: %+v, %v; want uid %d back", u, err, held[1].uid)
	}
	u.release()
	for _, h := range held {
		h.release()
	}

	fixed, err := New(WithUser(1234, 4321)).user()
	if err != nil || fixed.uid != 1234 || fixed.gid != 4321 || fixed.insideUID != 1234 || fixed.lease != nil {
		t.Errorf("WithUser: %+v, %v", fixed, err)
	}
}

// TestSandboxUIDLeaseDir: leases are kept only in a directory of the
// agent's that no one else can write.
func TestSandboxUIDLeaseDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		ok    bool
	}{
		{"made fresh", func(t *testing.T, dir string) {}, true},
		{"already there", func(t *testing.T, dir string) { hosttest.MustMkdir(t, dir, 0o700) }, true},
		{"writable by others", func(t *testing.T, dir string) {
			hosttest.MustMkdir(t, dir, 0o700)
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a link", func(t *testing.T, dir string) {
			if err := os.Symlink(t.TempDir(), dir); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a file", func(t *testing.T, dir string) { hosttest.MustWrite(t, dir, "") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := withLeaseDir(t)
			tt.setup(t, dir)
			u, err := New(WithUIDs(70000, 1)).user()
			u.release()
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, codeexec.ErrSandboxUnavailable)) {
				t.Errorf("user() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestSandboxRunsOwnUIDs: under a root agent, runs alive at the same time
// run as different host uids of the range, each owning its own files, and
// see themselves as nobody.
func TestSandboxRunsOwnUIDs(t *testing.T) {
	requireSandbox(t)
	if !isRoot() {
		t.Skip("an unprivileged agent's runs are the agent's own uid")
	}
	const runs = 3
	dir := t.TempDir()
	e := New(WithWorkspaceDir(dir))
	req := codeexectest.Script("scripts/wait.sh", `id -u > me.txt; touch started
for i in $(seq 300); do [ -e release ] && exit 0; sleep 0.1; done; exit 1`)
	errs := make(chan error, runs)
	results := make(chan *codeexec.Result, runs)
	for range runs {
		go func() {
			res, err := e.Execute(context.Background(), req)
			errs <- err
			results <- res
		}()
	}
	var started []string
	for deadline := time.Now().Add(hosttest.HardDeadline); len(started) < runs; time.Sleep(20 * time.Millisecond) {
		started, _ = filepath.Glob(filepath.Join(dir, host.WorkspacePrefix+"*", "w", codeexec.DefaultSkillName, "started"))
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs started", len(started), runs)
		}
	}
	owners := map[uint32]bool{}
	for _, p := range started {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if !runUserOK(int(st.Uid), int(st.Gid)) || owners[st.Uid] {
			t.Errorf("a run's file is owned by %d:%d (owners so far %v): want a uid of the range of its own", st.Uid, st.Gid, owners)
		}
		owners[st.Uid] = true
		hosttest.MustWrite(t, filepath.Join(filepath.Dir(p), "release"), "")
	}
	for range runs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		res := <-results
		if f := fileNamed(res.Files, "me.txt"); f == nil || string(f.Data) != "65534\n" {
			t.Errorf("the script saw itself as %v, want nobody", f)
		}
	}
}

// fileNamed is the output file at path, or nil.
func fileNamed(files []codeexec.File, path string) *codeexec.File {
	for i := range files {
		if files[i].Path == path {
			return &files[i]
		}
	}
	return nil
}
