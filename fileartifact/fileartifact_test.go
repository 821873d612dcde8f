package fileartifact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// assertOnlyStore checks that parent holds nothing but the store directory,
// that the store holds only directories and regular files, and that no
// hostile ID of the suite landed next to parent or at the file-system root.
func assertOnlyStore(t testing.TB, parent string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "store" {
		t.Errorf("%s holds %v, want only the store", parent, entries)
	}
	err = filepath.WalkDir(filepath.Join(parent, "store"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			t.Errorf("%s is a %v, want a directory or a regular file", p, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	for _, p := range []string{filepath.Join(filepath.Dir(parent), "escape"), "/abs", "/escape"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists: a name escaped the store", p)
		}
	}
}

// saveText saves a text/plain InlineData part and returns its version.
func saveText(t testing.TB, svc artifact.Service, session, name, body string) int64 {
	t.Helper()
	r, err := svc.Save(context.Background(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: session, FileName: name,
		Part: genai.NewPartFromBytes([]byte(body), "text/plain")})
	if err != nil {
		t.Fatalf("Save(%q): %v", name, err)
	}
	return r.Version
}

// loadText loads a version and returns its bytes.
func loadText(t testing.TB, svc artifact.Service, session, name string, version int64) string {
	t.Helper()
	r, err := svc.Load(context.Background(), &artifact.LoadRequest{AppName: app, UserID: user, SessionID: session, FileName: name, Version: version})
	if err != nil {
		t.Fatalf("Load(%q, %d): %v", name, version, err)
	}
	return string(r.Part.InlineData.Data)
}

func TestNew(t *testing.T) {
	t.Run("creates the directory, private", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		s, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != dirPerm {
			t.Fatalf("Stat(%s) = %v, %v; want a %v directory", dir, fi, err, fs.FileMode(dirPerm))
		}
		if s.dir != dir {
			t.Errorf("dir = %q, want %q", s.dir, dir)
		}
	})
	t.Run("relative directory is made absolute", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		s, err := New("store")
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, "store"); s.dir != want {
			t.Errorf("dir = %q, want %q", s.dir, want)
		}
	})
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"empty", func(*testing.T) string { return "" }},
		{"a file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"under a file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(p, "store")
		}},
		{"unreadable", func(t *testing.T) string {
			if os.Geteuid() == 0 {
				t.Skip("root can open any directory")
			}
			p := filepath.Join(t.TempDir(), "locked")
			if err := os.Mkdir(p, 0); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			if s, err := New(tc.dir(t)); err == nil {
				t.Fatalf("New = %v, want an error", s)
			}
		})
	}
}

// TestLayout pins the documented on-disk layout: raw bytes in data, the
// metadata beside them, private modes, escaped components.
func TestLayout(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	png := bin()
	for _, r := range []*artifact.SaveRequest{
		{AppName: "App", UserID: "ada", SessionID: "s/1", FileName: "Report.txt", Part: txt("hello\n")},
		{AppName: "App", UserID: "ada", SessionID: "s/1", FileName: "user:chart.png", Part: png},
	} {
		if _, err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]byte{
		"!app/ada/sessions/s%2f1/!report.txt/1/data": []byte("hello\n"),
		"!app/ada/user/user%3achart.png/1/data":      png.InlineData.Data,
	}
	got := map[string][]byte{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		wantPerm := fs.FileMode(filePerm)
		if d.IsDir() {
			wantPerm = dirPerm
		}
		if fi.Mode().Perm() != wantPerm {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), wantPerm)
		}
		if rel, _ := filepath.Rel(dir, p); filepath.Base(p) == dataFile {
			got[filepath.ToSlash(rel)], err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("data files (-want +got)\n%s", diff)
	}

	raw, err := os.ReadFile(filepath.Join(dir, "!app/ada/sessions/s%2f1/!report.txt/1", metaFile))
	if err != nil {
		t.Fatal(err)
	}
	var m meta
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Name != "!report.txt" || m.MIMEType != "text/plain" || m.Payload != payloadText || m.CreateTime == 0 {
		t.Errorf("meta.json = %s", raw)
	}
}

func TestPath(t *testing.T) {
	s := newStore(t)
	saveText(t, s, sess1, "user:Notes.md", "one")
	saveText(t, s, sess1, "user:Notes.md", "two")
	for _, tc := range []struct {
		name      string
		session   string
		file      string
		version   int64
		wantBody  string
		wantError error
	}{
		{"given version", sess1, "user:Notes.md", 1, "one", nil},
		{"latest", "s2", "user:Notes.md", 0, "two", nil},
		{"latest, negative", "s2", "user:Notes.md", -1, "two", nil},
		{"missing version", sess1, "user:Notes.md", 3, "", fs.ErrNotExist},
		{"missing artifact", sess1, "nope", 0, "", fs.ErrNotExist},
		{"missing artifact, given version", sess1, "nope", 1, "", fs.ErrNotExist},
		{"invalid name", sess1, "a/b", 1, "", errAny},
		{"empty session", "", "user:Notes.md", 1, "", errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.Path(app, user, tc.session, tc.file, tc.version)
			if tc.wantError != nil {
				if err == nil || (tc.wantError != errAny && !errors.Is(err, tc.wantError)) {
					t.Fatalf("Path = %q, %v; want error %v", p, err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !filepath.IsAbs(p) || !strings.HasPrefix(p, s.dir+string(filepath.Separator)) {
				t.Errorf("Path = %q, want an absolute path under %s", p, s.dir)
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != tc.wantBody {
				t.Errorf("ReadFile(Path) = %q, %v; want %q", b, err, tc.wantBody)
			}
		})
	}
}

// errAny stands for "some error" in tables.
var errAny = errors.New("any error")

func TestGetArtifactVersionMetadata(t *testing.T) {
	s := newStore(t)
	before := time.Now()
	saveText(t, s, sess1, "a", "x")
	r, err := s.GetArtifactVersion(t.Context(), &artifact.GetArtifactVersionRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
	if err != nil {
		t.Fatal(err)
	}
	av := r.ArtifactVersion
	created := createdAt(av)
	if created.Before(before.Add(-time.Second)) || created.After(time.Now().Add(time.Second)) {
		t.Errorf("CreateTime = %v, want about %v", created, before)
	}
	p, err := s.Path(app, user, sess1, "a", 1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(av.CanonicalURI)
	if err != nil || u.Scheme != "file" || u.Path != filepath.ToSlash(p) {
		t.Errorf("CanonicalURI = %q, want the file URL of %s", av.CanonicalURI, p)
	}
}

// TestPersists reads with a new Service what another one saved.
func TestPersists(t *testing.T) {
	dir := t.TempDir()
	a, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	saveText(t, a, sess1, "a", "one")
	saveText(t, a, sess1, "user:u", "shared")
	b, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := saveText(t, b, sess1, "a", "two"); got != 2 {
		t.Errorf("second service saved version %d, want 2", got)
	}
	if got := loadText(t, b, "s2", "user:u", 0); got != "shared" {
		t.Errorf("Load = %q, want %q", got, "shared")
	}
}

// TestSaveCopiesPart: the store keeps what was saved, not the caller's
// pointer, and a loaded part is the caller's own. (ADK's in-memory service
// keeps and returns the pointer, so a caller that reuses its buffer changes
// the stored artifact: we deliberately differ. artifacttest allows both.)
func TestSaveCopiesPart(t *testing.T) {
	s := newStore(t)
	p := genai.NewPartFromBytes([]byte("original"), "text/plain")
	if _, err := s.Save(t.Context(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a", Part: p}); err != nil {
		t.Fatal(err)
	}
	copy(p.InlineData.Data, "mutated!")
	p.InlineData.MIMEType = "image/png"
	if got := loadText(t, s, sess1, "a", 0); got != "original" {
		t.Errorf("Load = %q, want %q", got, "original")
	}
	r, err := s.Load(t.Context(), &artifact.LoadRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
	if err != nil {
		t.Fatal(err)
	}
	copy(r.Part.InlineData.Data, "mutated!")
	if got := loadText(t, s, sess1, "a", 0); got != "original" {
		t.Errorf("Load after changing a loaded part = %q, want %q", got, "original")
	}
}

// TestSessionNamedUser: a session whose ID is "user" is an ordinary session.
// ADK's in-memory service keeps user-scoped artifacts under the session key
// "user", so there its List shows that session's artifacts in every session
// of the user; that is a collision we deliberately do not copy.
func TestSessionNamedUser(t *testing.T) {
	s := newStore(t)
	saveText(t, s, "user", "plain", "x")
	saveText(t, s, sess1, "user:shared", "y")
	for _, tc := range []struct {
		session string
		want    []string
	}{
		{"user", []string{"plain", "user:shared"}},
		{sess1, []string{"user:shared"}},
	} {
		r, err := s.List(t.Context(), &artifact.ListRequest{AppName: app, UserID: user, SessionID: tc.session})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, r.FileNames); diff != "" {
			t.Errorf("List(%q) (-want +got)\n%s", tc.session, diff)
		}
	}
}

func TestNilRequests(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	for name, f := range map[string]func() error{
		"Save":               func() error { _, err := s.Save(ctx, nil); return err },
		"Load":               func() error { _, err := s.Load(ctx, nil); return err },
		"Delete":             func() error { return s.Delete(ctx, nil) },
		"List":               func() error { _, err := s.List(ctx, nil); return err },
		"Versions":           func() error { _, err := s.Versions(ctx, nil); return err },
		"GetArtifactVersion": func() error { _, err := s.GetArtifactVersion(ctx, nil); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s(nil) succeeded, want an error", name)
		}
	}
}

func TestCanceledContext(t *testing.T) {
	s := newStore(t)
	saveText(t, s, sess1, "a", "x")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, f := range map[string]func() error{
		"Save": func() error {
			_, err := s.Save(ctx, &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a", Part: txt("y")})
			return err
		},
		"Load": func() error {
			_, err := s.Load(ctx, &artifact.LoadRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
			return err
		},
		"Delete": func() error {
			return s.Delete(ctx, &artifact.DeleteRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
		},
		"List": func() error {
			_, err := s.List(ctx, &artifact.ListRequest{AppName: app, UserID: user, SessionID: sess1})
			return err
		},
		"Versions": func() error {
			_, err := s.Versions(ctx, &artifact.VersionsRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
			return err
		},
		"GetArtifactVersion": func() error {
			_, err := s.GetArtifactVersion(ctx, &artifact.GetArtifactVersionRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
			return err
		},
	} {
		if err := f(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context = %v, want context.Canceled", name, err)
		}
	}
	if got := loadText(t, s, sess1, "a", 0); got != "x" {
		t.Errorf("after canceled calls Load = %q, want %q", got, "x")
	}
}

// TestVersionConflict: when every claim loses, Save gives up with
// ErrVersionConflict and leaves nothing behind.
func TestVersionConflict(t *testing.T) {
	s := newStore(t)
	calls := 0
	s.rename = func(*os.Root, string, string) error {
		calls++
		return &os.LinkError{Op: "renameat", Err: fs.ErrExist}
	}
	_, err := s.Save(t.Context(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a", Part: txt("x")})
	if !errors.Is(err, ErrVersionConflict) || calls != maxClaimAttempts {
		t.Fatalf("Save = %v after %d claims, want ErrVersionConflict after %d", err, calls, maxClaimAttempts)
	}
	assertNoLeftovers(t, s)
}

// TestSaveFailureLeavesNothing: a Save that fails after staging (here the
// claim fails with an I/O error) leaves no version and no temporary files.
func TestSaveFailureLeavesNothing(t *testing.T) {
	s := newStore(t)
	saveText(t, s, sess1, "a", "kept")
	s.rename = func(*os.Root, string, string) error { return fs.ErrPermission }
	if _, err := s.Save(t.Context(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a", Part: txt("x")}); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Save = %v, want fs.ErrPermission", err)
	}
	assertNoLeftovers(t, s)
	r, err := s.Versions(t.Context(), &artifact.VersionsRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
	if err != nil || !slices.Equal(r.Versions, []int64{1}) {
		t.Fatalf("Versions = %v, %v; want [1]", r, err)
	}
}

// TestUnencodablePart: a part whose extra fields JSON cannot encode is
// rejected before anything is written.
func TestUnencodablePart(t *testing.T) {
	s := newStore(t)
	p := &genai.Part{Text: "x", PartMetadata: map[string]any{"f": func() {}}}
	if _, err := s.Save(t.Context(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a", Part: p}); err == nil {
		t.Fatal("Save succeeded, want an error")
	}
	if entries, _ := os.ReadDir(s.dir); len(entries) != 0 {
		t.Errorf("store holds %v, want nothing", entries)
	}
}

// isLeftover reports whether name is a save's or delete's directory.
func isLeftover(name string) bool {
	return strings.HasPrefix(name, tmpPrefix) || strings.HasPrefix(name, trashPrefix) || strings.HasPrefix(name, lockPrefix)
}

// assertNoLeftovers checks that no temporary or trash entry remains.
func assertNoLeftovers(t testing.TB, s *Service) {
	t.Helper()
	_ = filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if isLeftover(d.Name()) {
			t.Errorf("leftover %s", p)
		}
		return err
	})
}

// TestDeleteTidiesUp: deleting leaves no version and no trash behind.
func TestDeleteTidiesUp(t *testing.T) {
	s := newStore(t)
	saveText(t, s, sess1, "a", "1")
	saveText(t, s, sess1, "a", "2")
	saveText(t, s, sess1, "b", "1")
	del := func(name string, v int64) {
		if err := s.Delete(t.Context(), &artifact.DeleteRequest{AppName: app, UserID: user, SessionID: sess1, FileName: name, Version: v}); err != nil {
			t.Fatal(err)
		}
	}
	del("a", 1)
	del("a", 0)
	del("b", 1)
	assertNoLeftovers(t, s)
	for _, name := range []string{"a", "b"} {
		adir := filepath.Join(s.dir, app, user, sessionsDir, sess1, name)
		if entries, err := os.ReadDir(adir); err != nil || len(entries) != 0 {
			t.Errorf("%s holds %v, %v; want nothing", adir, entries, err)
		}
	}
}

// TestStrayEntriesAreIgnored: what this package did not write, or has not
// finished writing, is invisible: a crash's leftovers, a hand-made file.
func TestStrayEntriesAreIgnored(t *testing.T) {
	s := newStore(t)
	saveText(t, s, sess1, "a", "v1")
	adir := filepath.Join(s.dir, app, user, sessionsDir, sess1, "a")
	scope := filepath.Dir(adir)
	for _, p := range []string{
		filepath.Join(adir, tmpPrefix+"crashed", dataFile), // a save that crashed before its rename
		filepath.Join(adir, trashPrefix+"crashed", dataFile),
		filepath.Join(adir, "07", dataFile), // not canonical version numbers
		filepath.Join(adir, "+8", dataFile),
		filepath.Join(adir, "0", dataFile),
		filepath.Join(adir, "-2", dataFile),
		filepath.Join(adir, "notes", dataFile),
		filepath.Join(scope, "Upper", "1", dataFile),      // not an escaped name
		filepath.Join(scope, ".hidden", "1", dataFile),    // nor this
		filepath.Join(scope, "x~abc", "1", dataFile),      // nor a shortened one
		filepath.Join(scope, "empty", "notaversion", "f"), // an artifact without versions
		filepath.Join(scope, "%2", "1", dataFile),         // a broken escape
		filepath.Join(scope, "a!", "1", dataFile),         // a broken escape
		filepath.Join(scope, "!5", "1", dataFile),         // a broken escape
		filepath.Join(scope, "%zz", "1", dataFile),        // a broken escape
		filepath.Join(scope, "%2e", "1", dataFile),        // a real one: the name "."
		filepath.Join(s.dir, app, user, userDir, "user%3aghost", "x", dataFile),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.List(t.Context(), &artifact.ListRequest{AppName: app, UserID: user, SessionID: sess1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{".", "a"}, r.FileNames); diff != "" {
		t.Errorf("List (-want +got)\n%s", diff)
	}
	vr, err := s.Versions(t.Context(), &artifact.VersionsRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
	if err != nil || !slices.Equal(vr.Versions, []int64{1}) {
		t.Errorf("Versions = %v, %v; want [1]", vr, err)
	}
	if got := saveText(t, s, sess1, "a", "v2"); got != 2 {
		t.Errorf("Save after a crash = version %d, want 2", got)
	}
	if got := loadText(t, s, sess1, "a", 0); got != "v2" {
		t.Errorf("Load = %q, want v2", got)
	}
}

// TestSaveSweepsStaleLeftovers: a save removes what crashed saves and
// deletes left in its artifact's directory an hour or more ago, and leaves
// younger ones (a save or delete in progress) alone. These are unlocked,
// with data in them, as a version of this package from before locks leaves
// them (see TestOpenSweepsByLockAndAge for the others).
func TestSaveSweepsStaleLeftovers(t *testing.T) {
	s := newStore(t)
	saveText(t, s, sess1, "a", "v1")
	adir := filepath.Join(s.dir, app, user, sessionsDir, sess1, "a")
	old := time.Now().Add(-staleAfter - time.Minute)
	young := time.Now().Add(-staleAfter + time.Minute)
	entries := map[string]time.Time{
		tmpPrefix + "old":   old,
		trashPrefix + "old": old,
		tmpPrefix + "young": young,
		"notes":             old, // not a leftover
	}
	for name, mtime := range entries {
		p := filepath.Join(adir, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, dataFile), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	saveText(t, s, sess1, "a", "v2")
	for name := range entries {
		_, err := os.Stat(filepath.Join(adir, name))
		wantGone := strings.HasSuffix(name, "old")
		if gone := errors.Is(err, fs.ErrNotExist); gone != wantGone {
			t.Errorf("%s: gone = %v, want %v", name, gone, wantGone)
		}
	}
}

// TestOpenSweepsByLockAndAge: New removes, in every session and user
// scope, a locked leftover whose lock is free (its process died) whatever
// its age, keeps one whose lock is held whatever its age, and removes an
// unlocked one (from before locks, or a save that died before it locked)
// only once it is stale. Versions and other entries stay.
func TestOpenSweepsByLockAndAge(t *testing.T) {
	old := time.Now().Add(-staleAfter - time.Minute)
	young := time.Now().Add(-staleAfter + time.Minute)
	entries := []struct {
		name   string
		mtime  time.Time
		locked bool
		gone   bool
	}{
		{lockPrefix + "dead", young, false, true},
		{lockPrefix + "dead-old", old, false, true},
		{lockPrefix + "live", young, true, false},
		{lockPrefix + "live-old", old, true, false},
		{tmpPrefix + "young", young, false, false},
		{tmpPrefix + "young-empty", young, false, true},
		{tmpPrefix + "old", old, false, true},
		{trashPrefix + "young", young, false, false},
		{trashPrefix + "old", old, false, true},
		{"1", old, false, false},
		{"notes", old, false, false},
	}
	s := newStore(t)
	saveText(t, s, sess1, "a", "v1")
	saveText(t, s, sess1, "user:u", "v1")
	dirs := []string{
		filepath.Join(s.dir, app, user, sessionsDir, sess1, "a"),
		filepath.Join(s.dir, app, user, userDir, component("user:u")),
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, dir := range dirs {
		for _, e := range entries {
			p := filepath.Join(dir, e.name)
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if e.name != "1" && !strings.HasSuffix(e.name, "-empty") { // a stored version: keep its data
				if err := os.WriteFile(filepath.Join(p, dataFile), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chtimes(p, e.mtime, e.mtime); err != nil {
				t.Fatal(err)
			}
			if e.locked {
				rel, _ := filepath.Rel(s.dir, p)
				lock, err := lockDir(root, filepath.ToSlash(rel), tryExclusive)
				if err != nil {
					t.Fatal(err)
				}
				defer unlock(lock)
			}
		}
	}
	if _, err := New(s.dir); err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		for _, e := range entries {
			_, err := os.Stat(filepath.Join(dir, e.name))
			if gone := errors.Is(err, fs.ErrNotExist); gone != e.gone {
				t.Errorf("%s: gone = %v, want %v", filepath.Join(filepath.Base(dir), e.name), gone, e.gone)
			}
		}
	}
	if got := loadText(t, s, sess1, "a", 1); got != "v1" {
		t.Errorf("version 1 = %q", got)
	}
}

// TestSweepSparesSavesBeingBorn: an empty unlocked folder is a save
// between creating its folder and locking it while the artifact
// directory's shared lock is held, and a dead one's once it is not.
func TestSweepSparesSavesBeingBorn(t *testing.T) {
	s := newStore(t)
	saveText(t, s, sess1, "a", "v1")
	rel := path.Join(app, user, sessionsDir, sess1, "a")
	born := filepath.Join(s.dir, filepath.FromSlash(rel), tmpPrefix+"born")
	if err := os.Mkdir(born, 0o700); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	guard, err := lockDir(root, rel, waitShared)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(s.dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(born); err != nil {
		t.Fatalf("a save being born was swept: %v", err)
	}
	unlock(guard)
	if _, err := New(s.dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(born); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a dead save's empty folder stays: %v", err)
	}
}

// TestCorruptMetadata: a damaged meta.json is an error, not "not found".
func TestCorruptMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, meta string
	}{
		{"not json", "{"},
		{"unknown payload", `{"name":"a","payload":"video"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			saveText(t, s, sess1, "a", "x")
			mf := filepath.Join(s.dir, app, user, sessionsDir, sess1, "a", "1", metaFile)
			if err := os.WriteFile(mf, []byte(tc.meta), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := s.Load(t.Context(), &artifact.LoadRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "a"})
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Load = %v, want an error other than not-exist", err)
			}
		})
	}
	t.Run("shortened name with foreign metadata", func(t *testing.T) {
		s := newStore(t)
		long := strings.Repeat("n", 500)
		saveText(t, s, sess1, long, "x")
		mf := filepath.Join(s.dir, app, user, sessionsDir, sess1, component(long), "1", metaFile)
		if err := os.WriteFile(mf, []byte(`{"name":"other"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if r, err := s.List(t.Context(), &artifact.ListRequest{AppName: app, UserID: user, SessionID: sess1}); err == nil {
			t.Errorf("List = %v, want an error", r.FileNames)
		}
	})
}

// assertVersions checks that name has versions 1..n, newest first, each
// holding content[v].
func assertVersions(t testing.TB, s *Service, name string, content map[int64]string, n int) {
	t.Helper()
	r, err := s.Versions(context.Background(), &artifact.VersionsRequest{AppName: app, UserID: user, SessionID: sess1, FileName: name})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(n - i)
	}
	if diff := cmp.Diff(want, r.Versions); diff != "" {
		t.Fatalf("Versions (-want +got)\n%s", diff)
	}
	if len(content) != n {
		t.Fatalf("writers reported %d versions, want %d", len(content), n)
	}
	for v, body := range content {
		if got := loadText(t, s, sess1, name, v); got != body {
			t.Errorf("version %d = %q, want %q", v, got, body)
		}
	}
}

// TestConcurrentDeleteAndSave: deletes racing saves of the same artifact
// leave no temporary or trash entry behind. (The suite's DeleteDuringSaves
// checks what the calls return.)
func TestConcurrentDeleteAndSave(t *testing.T) {
	s := newStore(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 15 {
				if w%2 == 0 {
					if _, err := s.Save(context.Background(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "churn",
						Part: genai.NewPartFromBytes(fmt.Appendf(nil, "%d-%d", w, i), "text/plain")}); err != nil {
						t.Error(err)
					}
					continue
				}
				if err := s.Delete(context.Background(), &artifact.DeleteRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "churn"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	assertNoLeftovers(t, s)
}
