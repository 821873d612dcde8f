// Package fileartifact is an ADK Go artifact service that keeps artifacts in
// a directory on the local file system. ADK Go ships only an in-memory and a
// Google Cloud Storage service; this one is for runs whose files must outlive
// the process, such as the adkskills command line and local development.
//
// A [Service] behaves like ADK's artifact.InMemoryService: versions start at
// 1, Load returns the latest or a given version, names with the "user:"
// prefix are shared by every session of a user, missing artifacts are errors
// that match fs.ErrNotExist; both services pass the behaviour suite in
// package artifacttest, which also compares them call by call. On top of
// that it is durable and safe to share: each version is written to a
// temporary directory, synced, and renamed into place, so a crash never
// leaves part of a version visible, and several goroutines or processes
// saving the same artifact each claim a distinct version without any lock
// file.
//
// Plug it into a runner like any other artifact service:
//
//	store, err := fileartifact.New(filepath.Join(stateDir, "artifacts"))
//	if err != nil {
//		return err
//	}
//	r, err := runner.New(runner.Config{
//		AppName:         "reports",
//		Agent:           agent,
//		SessionService:  session.InMemoryService(),
//		ArtifactService: store,
//	})
//
// # On disk
//
// Under the directory given to [New]:
//
//	APP/USER/sessions/SESSION/NAME/VERSION/data       a session's artifact
//	APP/USER/user/NAME/VERSION/data                   a "user:" artifact
//	                          .../VERSION/meta.json   its metadata
//
// data holds the payload as raw bytes (the InlineData bytes, or the Text),
// so it can be read with any tool; [Service.Path] returns its path. meta.json
// records the name, the MIME type, the creation time and the rest of the
// genai.Part. APP, USER, SESSION and NAME are escaped so that any string is a
// safe, distinct file name: a-z, 0-9, '-', '_' and inner dots stay as they
// are, an upper-case letter becomes '!' and its lower-case form, and every
// other byte becomes '%' and two hex digits ("user:Report.txt" is stored as
// "user%3a!report.txt"). Components longer than 160 bytes once escaped are
// shortened and end with '~' and a SHA-256. Entries starting with '.' are
// saves or deletes in progress, or leftovers of a crash, and are ignored.
// Directories are created 0700 and files 0600: artifacts are private to the
// user running the agent.
//
// # After a crash
//
// A process killed while it saves or deletes (SIGKILL, the OOM killer, a
// power loss) leaves that version's directory behind, invisible. [New]
// removes such leftovers from the whole store, and every Save from its
// artifact's directory. A save or delete holds an flock(2) lock on its
// directory for as long as it works on it, and the kernel drops the lock
// when its process dies, however it dies: a leftover whose lock can be taken
// is dead and removed at once, and one whose lock is held belongs to a live
// save or delete, in this or another process on the machine, and is never
// touched. (A save killed after creating its folder and before locking it
// leaves it empty; it is removed when no save of that artifact is between
// those two steps, which they take under the artifact directory's shared
// lock.) This holds across PID namespaces (containers sharing the store)
// and whatever PIDs the kernel reuses. Where a directory cannot be locked
// (Windows; an NFS mount that maps flock to fcntl locks), leftovers are
// removed once they are an hour old, as are those of versions of this
// package from before locks (whose saves running at the same time may
// fail, never leave a half version, if a sweep takes their folder while it
// is still empty).
package fileartifact

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// ErrVersionConflict is returned (wrapped) by Save when it could not claim a
// new version because other writers kept claiming the one it picked. Each
// lost attempt means another save succeeded, so this takes extraordinary
// contention; the save can simply be retried.
var ErrVersionConflict = errors.New("fileartifact: version conflict")

const (
	dirPerm  = 0o700
	filePerm = 0o600
	// maxClaimAttempts bounds Save's attempts to claim a version.
	maxClaimAttempts = 1000
	// textMIMEType is what GetArtifactVersion reports for a Text part, as
	// ADK's in-memory service does.
	textMIMEType = "text/plain"
)

// Service is an [artifact.Service] that stores artifacts under one
// directory. Make one with [New]; the zero Service is not usable. It is safe
// for concurrent use by multiple goroutines, and by multiple processes that
// share the directory.
//
// It differs from ADK's in-memory service in three deliberate ways: Save
// stores a copy of the part (later changes to the caller's part are not
// seen), a session whose ID is "user" is an ordinary session (ADK's
// in-memory List shows its artifacts in every session of the user), and the
// non-payload fields of a part go through JSON (numbers in maps come back as
// float64). The artifacttest suite leaves all three to each service.
type Service struct {
	dir string // absolute
	// rename claims a version; a field so tests can make every claim lose.
	rename func(r *os.Root, oldname, newname string) error
}

var _ artifact.Service = (*Service)(nil)

// New returns a Service that stores artifacts under dir, creating dir (mode
// 0700) if it does not exist. dir may be relative; the Service keeps its
// absolute form. Several Services, in one process or many, may share dir.
//
// New removes what saves and deletes left in the store when their process
// died, and leaves alone what live ones work on (see "After a crash").
func New(dir string) (*Service, error) {
	if dir == "" {
		return nil, errors.New("fileartifact: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("fileartifact: %w", err)
	}
	if err := os.MkdirAll(abs, dirPerm); err != nil {
		return nil, fmt.Errorf("fileartifact: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("fileartifact: %w", err)
	}
	sweepStore(root, time.Now().Add(-staleAfter))
	_ = root.Close()
	return &Service{dir: abs, rename: (*os.Root).Rename}, nil
}

// Path returns the absolute path of the file that holds the raw bytes of a
// stored version: the InlineData bytes, or the Text of a text part. A
// version of 0 or less means the latest, as in Load. The arguments are
// validated as Load validates them. Path returns an error matching
// fs.ErrNotExist when there is no such version.
//
// The file is read-only by convention: change an artifact by saving a new
// version. It disappears when the version is deleted.
func (s *Service) Path(appName, userID, sessionID, fileName string, version int64) (string, error) {
	req := &artifact.LoadRequest{AppName: appName, UserID: userID, SessionID: sessionID, FileName: fileName, Version: version}
	root, err := begin(context.Background(), s, req)
	if err != nil {
		return "", err
	}
	defer root.Close()
	loc := locate(appName, userID, sessionID, fileName)
	v, err := resolve(root, loc, fileName, version)
	if err != nil {
		return "", err
	}
	rel := path.Join(loc.version(v), dataFile)
	if _, err := root.Stat(rel); err != nil {
		return "", notFound(fileName, v, err)
	}
	return filepath.Join(s.dir, filepath.FromSlash(rel)), nil
}

// Save implements [artifact.Service]. It stores req.Part as a new version,
// one more than the latest stored version (1 for a new artifact), and
// returns that version. Like ADK's in-memory service it ignores req.Version.
//
// The version appears complete or not at all. Concurrent saves of the same
// artifact, from this or another process, get distinct versions; a save
// that keeps losing the race for one fails with [ErrVersionConflict].
func (s *Service) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	root, err := begin(ctx, s, req)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	payload, m, err := split(req.FileName, req.Part)
	if err != nil {
		return nil, err
	}

	loc := locate(req.AppName, req.UserID, req.SessionID, req.FileName)
	tmp, lock, err := stage(root, loc, payload, m)
	if err != nil {
		return nil, fmt.Errorf("fileartifact: save %q: %w", req.FileName, err)
	}
	claimed := false
	defer func() {
		if !claimed {
			_ = root.RemoveAll(tmp)
		}
		unlock(lock)
	}()
	for range maxClaimAttempts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		names, err := readDirNames(root, loc.dir())
		if err != nil {
			return nil, fmt.Errorf("fileartifact: save %q: %w", req.FileName, err)
		}
		versions := parseVersions(names)
		next := int64(1)
		if len(versions) > 0 {
			next = versions[0] + 1
		}
		// A rename never replaces a directory that has entries, and every
		// version directory has them, so this claims next or fails.
		err = s.rename(root, tmp, loc.version(next))
		if err == nil {
			claimed = true
			syncDir(root, loc.dir())
			sweep(root, loc.dir(), names, time.Now().Add(-staleAfter))
			return &artifact.SaveResponse{Version: next}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("fileartifact: save %q: %w", req.FileName, err)
		}
	}
	return nil, fmt.Errorf("save %q: %d attempts lost: %w", req.FileName, maxClaimAttempts, ErrVersionConflict)
}

// Load implements [artifact.Service]. A req.Version of 0 or less loads the
// latest version. A missing artifact or version is an error matching
// fs.ErrNotExist; so is a latest version deleted while Load reads it.
func (s *Service) Load(ctx context.Context, req *artifact.LoadRequest) (*artifact.LoadResponse, error) {
	root, err := begin(ctx, s, req)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	loc := locate(req.AppName, req.UserID, req.SessionID, req.FileName)
	v, err := resolve(root, loc, req.FileName, req.Version)
	if err != nil {
		return nil, err
	}
	part, err := readVersion(root, loc.version(v))
	if err != nil {
		return nil, notFound(req.FileName, v, err)
	}
	return &artifact.LoadResponse{Part: part}, nil
}

// Delete implements [artifact.Service]. A req.Version of 0 deletes every
// version; any other value deletes that version only. Deleting what does not
// exist is not an error.
func (s *Service) Delete(ctx context.Context, req *artifact.DeleteRequest) error {
	root, err := begin(ctx, s, req)
	if err != nil {
		return err
	}
	defer root.Close()
	loc := locate(req.AppName, req.UserID, req.SessionID, req.FileName)
	versions := []int64{req.Version}
	if req.Version == 0 {
		if versions, err = versionsOf(root, loc.dir()); err != nil {
			return fmt.Errorf("fileartifact: delete %q: %w", req.FileName, err)
		}
		// Oldest first, so a concurrent Load of the latest sees it or nothing.
		slices.Reverse(versions)
	}
	for _, v := range versions {
		if err := removeVersion(root, loc, v); err != nil {
			return fmt.Errorf("fileartifact: delete %q version %d: %w", req.FileName, v, err)
		}
	}
	// The artifact's directory stays, empty, for concurrent saves to use;
	// List skips artifacts without versions.
	return nil
}

// List implements [artifact.Service]. It returns, sorted, the names of the
// session's artifacts and of the user's "user:" artifacts, and nil when
// there are none.
func (s *Service) List(ctx context.Context, req *artifact.ListRequest) (*artifact.ListResponse, error) {
	root, err := begin(ctx, s, req)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var names []string
	for _, scope := range scopeDirs(req.AppName, req.UserID, req.SessionID) {
		entries, err := readDirNames(root, scope)
		if err != nil {
			return nil, fmt.Errorf("fileartifact: list: %w", err)
		}
		for _, e := range entries {
			name, ok, err := artifactName(root, path.Join(scope, e))
			if err != nil {
				return nil, fmt.Errorf("fileartifact: list: %w", err)
			}
			if ok {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return &artifact.ListResponse{FileNames: slices.Compact(names)}, nil
}

// Versions implements [artifact.Service]. It returns the stored versions
// newest first, as ADK's in-memory service does, and an error matching
// fs.ErrNotExist when there are none.
func (s *Service) Versions(ctx context.Context, req *artifact.VersionsRequest) (*artifact.VersionsResponse, error) {
	root, err := begin(ctx, s, req)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	versions, err := versionsOf(root, locate(req.AppName, req.UserID, req.SessionID, req.FileName).dir())
	if err != nil {
		return nil, fmt.Errorf("fileartifact: versions of %q: %w", req.FileName, err)
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("artifact %q not found: %w", req.FileName, fs.ErrNotExist)
	}
	return &artifact.VersionsResponse{Versions: versions}, nil
}

// GetArtifactVersion implements [artifact.Service]. A req.Version of 0 or
// less means the latest version. MimeType is the part's InlineData MIME type,
// or "text/plain" for a text part, as in ADK's in-memory service; CreateTime
// is when the version was saved, in seconds since the Unix epoch; and
// CanonicalURI is the file:// URL of the version's data file.
func (s *Service) GetArtifactVersion(ctx context.Context, req *artifact.GetArtifactVersionRequest) (*artifact.GetArtifactVersionResponse, error) {
	root, err := begin(ctx, s, req)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	loc := locate(req.AppName, req.UserID, req.SessionID, req.FileName)
	v, err := resolve(root, loc, req.FileName, req.Version)
	if err != nil {
		return nil, err
	}
	m, err := readMeta(root, loc.version(v))
	if err != nil {
		return nil, notFound(req.FileName, v, err)
	}
	data := filepath.Join(s.dir, filepath.FromSlash(path.Join(loc.version(v), dataFile)))
	return &artifact.GetArtifactVersionResponse{ArtifactVersion: &artifact.ArtifactVersion{
		Version:      v,
		CanonicalURI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(data)}).String(),
		CreateTime:   versionTime(m.CreateTime),
		MimeType:     m.MIMEType,
	}}, nil
}

var errNilRequest = errors.New("request validation failed: nil request")

// begin is how every operation starts: it refuses a nil or invalid request
// (validated as ADK validates it) and a context already done, then opens the
// store's root, which the caller closes.
func begin[T any, R interface {
	*T
	Validate() error
}](ctx context.Context, s *Service, req R) (*os.Root, error) {
	if req == nil {
		return nil, errNilRequest
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("request validation failed: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.open()
}

// open opens the store's directory. Every file operation goes through the
// returned root, so no name can reach outside it, whatever the escaping.
func (s *Service) open() (*os.Root, error) {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, fmt.Errorf("fileartifact: %w", err)
	}
	return root, nil
}

// meta is the content of a version's meta.json.
type meta struct {
	// Name is the artifact name, escaped like a path component but never
	// shortened (JSON would mangle invalid UTF-8).
	Name string `json:"name"`
	// MIMEType is what GetArtifactVersion reports.
	MIMEType string `json:"mime_type"`
	// CreateTime is when the version was saved, in seconds since the epoch.
	CreateTime float64 `json:"create_time"`
	// Payload says which field of Part the data file holds.
	Payload string `json:"payload"`
	// NilData records that InlineData.Data was nil rather than empty.
	NilData bool `json:"nil_data,omitempty"`
	// Part is the saved part with its payload moved out to the data file.
	Part *genai.Part `json:"part"`
}

// Values of meta.Payload.
const (
	payloadInline = "inline_data"
	payloadText   = "text"
)

// split separates a part into its payload and the metadata of a version.
// The payload is InlineData.Data when InlineData is set, else Text.
func split(fileName string, part *genai.Part) ([]byte, []byte, error) {
	rest := *part
	m := meta{Name: escape(fileName), CreateTime: float64(time.Now().UnixNano()) / 1e9, Part: &rest}
	var payload []byte
	if part.InlineData != nil {
		blob := *part.InlineData
		payload, m.NilData = blob.Data, blob.Data == nil
		blob.Data = nil
		rest.InlineData = &blob
		m.Payload, m.MIMEType = payloadInline, blob.MIMEType
	} else {
		payload = []byte(part.Text)
		rest.Text = ""
		m.Payload, m.MIMEType = payloadText, textMIMEType
	}
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, nil, fmt.Errorf("fileartifact: encode part of %q: %w", fileName, err)
	}
	return payload, b, nil
}

// staleAfter is how old a leftover that is not locked (see sweep) must be
// before a sweep removes it: far longer than any save or delete in progress
// takes.
const staleAfter = time.Hour

// errNoLocks is flock's error where directories cannot be locked.
var errNoLocks = errors.New("fileartifact: directories cannot be locked here")

// lockMode is how lockDir locks a directory.
type lockMode int

const (
	tryExclusive  lockMode = iota // or fail with errBusy
	waitExclusive                 // waiting for other locks to go
	waitShared                    // waiting for an exclusive lock to go
)

// lockDir opens dir and takes its lock in mode m (see flock); closing the
// returned file (unlock) releases it.
func lockDir(root *os.Root, dir string, m lockMode) (*os.File, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := flock(f, m); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// unlock releases a lock lockDir took; nil is no lock.
func unlock(f *os.File) {
	if f != nil {
		_ = f.Close()
	}
}

// sweep removes, best effort, what dead saves and deletes left among an
// artifact directory's entries names:
//   - a locked leftover (lockPrefix) as soon as its lock can be taken: the
//     process that held it is gone. One whose lock is held is live, and
//     stays, whatever its age;
//   - an empty unlocked one (tmpPrefix: a save that died between creating
//     its folder and locking it) when the artifact directory's exclusive
//     lock can be taken: no save is then between those two steps (stage
//     holds the shared lock across them);
//   - any other unlocked one (tmpPrefix: a save on a system without
//     directory locks, or one of a version of this package from before
//     locks; trashPrefix: likewise a delete) once it was last changed
//     before cutoff.
func sweep(root *os.Root, dir string, names []string, cutoff time.Time) {
	var guard *os.File // the artifact directory's exclusive lock, once taken
	defer func() { unlock(guard) }()
	tried := false
	for _, n := range names {
		p := path.Join(dir, n)
		switch {
		case strings.HasPrefix(n, lockPrefix):
			lock, err := lockDir(root, p, tryExclusive)
			if err == nil {
				_ = root.RemoveAll(p)
				unlock(lock)
				continue
			}
			if !errors.Is(err, errNoLocks) {
				continue // live, or gone
			}
		case strings.HasPrefix(n, tmpPrefix):
			if !tried {
				guard, _ = lockDir(root, dir, tryExclusive)
				tried = true
			}
			if guard != nil && root.Remove(p) == nil {
				continue // empty: removed
			}
		case strings.HasPrefix(n, trashPrefix):
		default:
			continue
		}
		if fi, err := root.Lstat(p); err == nil && fi.ModTime().Before(cutoff) {
			_ = root.RemoveAll(p)
		}
	}
}

// sweepStore sweeps every artifact directory of the store, in every
// session and user scope (see sweep). Each scope is opened once and its
// artifact directories are read relative to it.
func sweepStore(root *os.Root, cutoff time.Time) {
	for _, app := range visibleNames(root, ".") {
		for _, user := range visibleNames(root, app) {
			sessions := path.Join(app, user, sessionsDir)
			for _, sess := range visibleNames(root, sessions) {
				sweepScope(root, path.Join(sessions, sess), cutoff)
			}
			sweepScope(root, path.Join(app, user, userDir), cutoff)
		}
	}
}

// sweepScope sweeps the artifact directories of one scope.
func sweepScope(root *os.Root, scope string, cutoff time.Time) {
	sr, err := root.OpenRoot(scope)
	if err != nil {
		return
	}
	defer sr.Close()
	for _, name := range visibleNames(sr, ".") {
		if names, err := readDirNames(sr, name); err == nil {
			sweep(sr, name, names, cutoff)
		}
	}
}

// visibleNames lists the entries of dir that do not start with '.', and
// none when it cannot be read.
func visibleNames(root *os.Root, dir string) []string {
	names, _ := readDirNames(root, dir)
	return slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, ".") })
}

// stage writes a version into a fresh directory inside the artifact's
// directory, synced, and returns its name with the lock that marks it live
// (nil where directories cannot be locked); the caller renames or removes
// the directory, then unlocks it. The directory is locked before it takes
// its locked name (lockPrefix), so a sweep never finds it unlocked there
// while this process lives; until then it holds the artifact directory's
// shared lock, so a sweep does not take it for a dead save's (see sweep).
func stage(root *os.Root, loc location, payload, metaJSON []byte) (string, *os.File, error) {
	if err := mkdirs(root, loc.parts); err != nil {
		return "", nil, err
	}
	tmp, lock, err := newLocked(root, loc.dir())
	if err != nil {
		return "", nil, err
	}
	err = writeFile(root, path.Join(tmp, dataFile), payload)
	if err == nil {
		err = writeFile(root, path.Join(tmp, metaFile), metaJSON)
	}
	if err != nil {
		_ = root.RemoveAll(tmp)
		unlock(lock)
		return "", nil, err
	}
	syncDir(root, tmp)
	return tmp, lock, nil
}

// newLocked creates a folder for a version in the artifact directory dir
// and returns its name and its lock: a locked folder (lockPrefix), or an
// unlocked one (tmpPrefix, nil lock) where directories cannot be locked.
func newLocked(root *os.Root, dir string) (string, *os.File, error) {
	guard, _ := lockDir(root, dir, waitShared)
	defer unlock(guard)
	tmp := path.Join(dir, tmpPrefix+rand.Text())
	if err := root.Mkdir(tmp, dirPerm); err != nil {
		return "", nil, err
	}
	lock, err := lockDir(root, tmp, tryExclusive)
	if errors.Is(err, errNoLocks) {
		return tmp, nil, nil
	}
	if err != nil {
		_ = root.Remove(tmp)
		return "", nil, err
	}
	locked := path.Join(dir, lockPrefix+rand.Text())
	if err := root.Rename(tmp, locked); err != nil {
		_ = root.RemoveAll(tmp)
		unlock(lock)
		return "", nil, err
	}
	return locked, lock, nil
}

// mkdirs creates the directories of parts, each in its parent, syncing the
// parent of each directory it creates.
func mkdirs(root *os.Root, parts []string) error {
	dir := "."
	for _, p := range parts {
		child := path.Join(dir, p)
		err := root.Mkdir(child, dirPerm)
		if err == nil {
			syncDir(root, dir)
		} else if !errors.Is(err, fs.ErrExist) {
			return err
		}
		dir = child
	}
	return nil
}

// writeFile creates name, which must not exist, with data, and syncs it.
func writeFile(root *os.Root, name string, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Sync(), f.Close())
}

// syncDir makes the entries of a directory durable. It is best effort: some
// file systems cannot sync a directory, and the rename it follows has
// already made the change visible.
func syncDir(root *os.Root, dir string) {
	if f, err := root.Open(dir); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
}

// removeVersion deletes one version: it first renames the version out of
// sight, so no reader ever sees it half removed. It locks the version
// before, so a sweep leaves the trash alone while this process lives.
func removeVersion(root *os.Root, loc location, v int64) error {
	if v < 1 {
		return nil // not a version: nothing to delete
	}
	prefix := lockPrefix
	lock, err := lockDir(root, loc.version(v), waitExclusive)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		prefix = trashPrefix // unlocked: the age rule sweeps it
	}
	defer unlock(lock)
	trash := path.Join(loc.dir(), prefix+rand.Text())
	if err := root.Rename(loc.version(v), trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	syncDir(root, loc.dir())
	return root.RemoveAll(trash)
}

// readDirNames returns the entries of dir, or none when it does not exist.
func readDirNames(root *os.Root, dir string) ([]string, error) {
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // removed while being read
	}
	return names, err
}

// versionsOf returns the versions stored in an artifact directory, newest
// first.
func versionsOf(root *os.Root, dir string) ([]int64, error) {
	names, err := readDirNames(root, dir)
	if err != nil {
		return nil, err
	}
	return parseVersions(names), nil
}

// parseVersions picks the version numbers out of an artifact directory's
// entries, newest first.
func parseVersions(names []string) []int64 {
	var versions []int64
	for _, n := range names {
		if v, ok := parseVersion(n); ok {
			versions = append(versions, v)
		}
	}
	slices.Sort(versions)
	slices.Reverse(versions)
	return versions
}

// resolve turns a requested version into a stored one: version itself when
// positive, else the latest.
func resolve(root *os.Root, loc location, fileName string, version int64) (int64, error) {
	if version > 0 {
		return version, nil
	}
	versions, err := versionsOf(root, loc.dir())
	if err != nil {
		return 0, fmt.Errorf("fileartifact: versions of %q: %w", fileName, err)
	}
	if len(versions) == 0 {
		return 0, fmt.Errorf("artifact %q not found: %w", fileName, fs.ErrNotExist)
	}
	return versions[0], nil
}

// artifactName returns the name of the artifact stored in dir, and false
// when dir holds no version (emptied by Delete, or not ours).
func artifactName(root *os.Root, dir string) (string, bool, error) {
	base := path.Base(dir)
	name, plain := unescape(base)
	if !plain && !shortened(base) {
		return "", false, nil // not ours
	}
	versions, err := versionsOf(root, dir)
	if err != nil || len(versions) == 0 {
		return "", false, err
	}
	if plain {
		return name, true, nil
	}
	// A shortened name: the full one is in the metadata.
	m, err := readMeta(root, path.Join(dir, strconv.FormatInt(versions[0], 10)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil // deleted meanwhile
	}
	if err != nil {
		return "", false, err
	}
	name, ok := unescape(m.Name)
	if !ok || component(name) != base {
		return "", false, fmt.Errorf("%s: %s does not name this artifact", dir, metaFile)
	}
	return name, true, nil
}

// readMeta reads the metadata of the version in dir.
func readMeta(root *os.Root, dir string) (*meta, error) {
	b, err := root.ReadFile(path.Join(dir, metaFile))
	if err != nil {
		return nil, err
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path.Join(dir, metaFile), err)
	}
	return &m, nil
}

// readVersion reads the version in dir back into the part that was saved.
// Both files are read through one handle on dir, so they belong to the same
// version even if it is deleted meanwhile.
func readVersion(root *os.Root, dir string) (*genai.Part, error) {
	vr, err := root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer vr.Close()
	m, err := readMeta(vr, ".")
	if err != nil {
		return nil, err
	}
	data, err := vr.ReadFile(dataFile)
	if err != nil {
		return nil, err
	}
	part := m.Part
	if part == nil {
		part = &genai.Part{}
	}
	switch m.Payload {
	case payloadInline:
		if part.InlineData == nil {
			part.InlineData = &genai.Blob{MIMEType: m.MIMEType}
		}
		if len(data) > 0 || !m.NilData {
			part.InlineData.Data = data
		}
	case payloadText:
		part.Text = string(data)
	default:
		return nil, fmt.Errorf("%s: unknown payload %q", path.Join(dir, metaFile), m.Payload)
	}
	return part, nil
}

// notFound wraps a failure to read a stored version; a missing one matches
// fs.ErrNotExist, like ADK's "artifact not found".
func notFound(fileName string, v int64, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("artifact %q version %d not found: %w", fileName, v, fs.ErrNotExist)
	}
	return fmt.Errorf("fileartifact: read %q version %d: %w", fileName, v, err)
}
