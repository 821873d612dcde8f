package host

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adkskills/adkskills/codeexec"
)

// The snapshot cache: a run's cost and memory do not grow with the size of
// the skill it stages.
//
// Staging a skill folder byte by byte into every run's workspace costs time
// in proportion to the folder. Instead, the first run of a folder copies it
// once into a snapshot, kept in a cache directory beside the workspaces
// (same file system); later runs of the same files take the snapshot's
// files into their workspace without copying bytes, in one of three ways:
//
//   - hard links to a snapshot owned by root and writable by root alone,
//     which the sandbox user can read but never change (Sandbox, when the
//     agent is root);
//   - a copy-on-write clone where the file system makes one (FICLONE,
//     clonefile), else a hard link, the snapshot verified before each use
//     (Local: trusted code, which could write through a link; a snapshot
//     whose files no longer match its manifest is dropped and rebuilt);
//   - a clone, else a copy in the kernel (copy_file_range) from the snapshot
//     (Sandbox, when the agent is not root: the script runs as the
//     snapshot's owner and could change a shared file).
//
// A snapshot is found again by the skill folder's fingerprint: every
// entry's path, type, mode, size, modification time and identity, as the
// file system reports them, without reading a byte. A file changed without
// its size, time or inode changing is not noticed (as make and rsync do
// not notice it). A folder whose file system reports no modification times
// (an embed.FS, a skill.Source that is not a file system) is copied for
// every run.
//
// Snapshots are keyed by their content (see manifest.key), kept
// within a byte limit (the least recently used go first), built in a
// temporary directory renamed into place (a run never sees half of one; two
// processes building the same snapshot both succeed, one wins), and read
// without following a link. Leftovers of builders that died are removed when
// a process first uses the cache.

// StageMode is how a run takes the skill folder's files.
type StageMode int

const (
	// StageCopy streams every file from the skill folder (no cache).
	StageCopy StageMode = iota
	// StageLink hard-links from a root-owned snapshot only root may write.
	StageLink
	// StageCloneOrLink clones from a snapshot, else hard-links.
	StageCloneOrLink
	// StageCloneOrCopy clones from a snapshot, else copies.
	StageCloneOrCopy
)

// DefaultCacheBytes bounds the snapshots one cache directory keeps.
const DefaultCacheBytes = 4 * codeexec.DefaultMaxSkillBytes

// cachePrefix starts the name of every cache directory.
const cachePrefix = "adkskills-cache-"

// Names inside a cache directory.
const (
	cacheIndexDir = "index" // fingerprint digest -> snapshot key
	cacheTmpInfix = ".tmp-" // a snapshot being built: .tmp-<pid>-<random>
	cacheTrash    = ".trash-"
	SnapTree      = "tree"          // a snapshot's files
	snapManifest  = "manifest.json" // what they are
	snapUsed      = "used"          // its modification time is the last use
)

// cacheLeftoverAge is how old a temporary snapshot of a live process must
// be before the sweep removes it anyway.
const cacheLeftoverAge = time.Hour

// manifest describes one snapshot.
type manifest struct {
	// Dirs are the snapshot's folders, each after its parent.
	Dirs []string `json:"dirs"`
	// Files are its regular files, in walk order.
	Files []manifestFile `json:"files"`
}

// manifestFile is one file of a snapshot, as stored in the cache.
type manifestFile struct {
	Path string      `json:"path"`
	Mode fs.FileMode `json:"mode"` // permission bits
	// Orig is the skill's own permission bits where the snapshot's differ
	// (the root-owned cache: no group or other write bit, readable by all),
	// which a run's own copy of the file gets.
	Orig  fs.FileMode `json:"orig,omitempty"`
	Size  int64       `json:"size"`
	MTime int64       `json:"mtime"` // nanoseconds
	Dev   uint64      `json:"dev"`
	Ino   uint64      `json:"ino"`
	Sum   string      `json:"sha256"`
}

// key is the snapshot's content key: the digest of its folders and of its
// files' paths, modes, sizes and digests (not of where the cache keeps
// them, so that every builder of the same content finds the same key).
func (m *manifest) key() string {
	h := sha256.New()
	for _, d := range m.Dirs {
		fmt.Fprintf(h, "d %q\n", d)
	}
	for _, f := range m.Files {
		fmt.Fprintf(h, "f %q %o %d %s", f.Path, f.Mode, f.Size, f.Sum)
		if f.Orig != 0 {
			fmt.Fprintf(h, " %o", f.Orig)
		}
		fmt.Fprintln(h)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// bytes is the snapshot's total size.
func (m *manifest) bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// cache is one cache directory, shared by every executor of the process
// that uses it.
type cache struct {
	dir      string
	readOnly bool // files root-owned, writable by root alone (StageLink)
	limit    int64
	noClone  atomic.Bool // the file system cannot clone: do not try again

	mu       sync.Mutex
	keys     map[string]string      // fingerprint -> snapshot key
	builders map[string]*sync.Mutex // fingerprint -> its one builder
	// manifests are the snapshots' manifests as this process last read or
	// wrote them, so a run checks its snapshot's files without reading and
	// parsing the manifest again. Read only, once stored.
	manifests map[string]*manifest
}

// caches are the cache directories in use, by path.
var caches sync.Map

// cacheFor returns the cache for workspaces under parent, creating its
// directory (0700, this user's) on first use and sweeping it. readOnly
// selects the root-owned read-only cache.
func cacheFor(parent string, readOnly bool, limit int64) (*cache, error) {
	name := cachePrefix + strconv.Itoa(os.Geteuid())
	if readOnly {
		name += "-ro"
	}
	dir := filepath.Join(parent, name)
	if c, ok := caches.Load(dir); ok {
		return c.(*cache), nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if !OwnDir(dir, 0o077) {
		return nil, fmt.Errorf("cache directory %s is not a directory of this user closed to others", dir)
	}
	if err := os.Mkdir(filepath.Join(dir, cacheIndexDir), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	c := &cache{dir: dir, readOnly: readOnly, limit: limit, keys: map[string]string{}, builders: map[string]*sync.Mutex{}, manifests: map[string]*manifest{}}
	actual, loaded := caches.LoadOrStore(dir, c)
	if !loaded {
		c.sweep()
	}
	return actual.(*cache), nil
}

// sweep removes the temporary snapshots of builders that are gone (or
// older than cacheLeftoverAge), the trash of evictions, and evicts past the
// limit.
func (c *cache) sweep() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case validKey(name) && c.leftLeases(name):
			c.drop(name)
		case strings.HasPrefix(name, cacheTrash):
			removeTree(filepath.Join(c.dir, name))
		case strings.HasPrefix(name, cacheTmpInfix):
			pid, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(name, cacheTmpInfix), "-", 2)[0])
			info, err := e.Info()
			if err == nil && (!processAlive(pid) || time.Since(info.ModTime()) > cacheLeftoverAge) {
				removeTree(filepath.Join(c.dir, name))
			}
		}
	}
	c.evict("")
}

// leftLeases reports whether snapshot key holds the lease of a run that is
// gone (see snapshotLeases).
func (c *cache) leftLeases(key string) bool {
	leases, _ := os.ReadDir(filepath.Join(c.dir, key, snapshotLeases))
	for _, l := range leases {
		ws := filepath.Join(filepath.Dir(c.dir), l.Name())
		if _, err := os.Lstat(ws); err != nil || deadWorkspace(ws) {
			return true
		}
	}
	return false
}

// builder returns the lock that lets one run of this process build the
// snapshot of fp while the others wait for it.
func (c *cache) builder(fp string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.builders[fp]
	if m == nil {
		m = &sync.Mutex{}
		c.builders[fp] = m
	}
	return m
}

// snapshotFor returns the verified snapshot of the skill folder whose
// fingerprint is fp, building it from fsys when there is none (or the one
// there no longer matches its manifest). It returns the snapshot's key and
// manifest. The fingerprint is remembered for the next runs only when the
// folder's newest change is older than racyMargin when the build starts.
func (c *cache) snapshotFor(fsys fs.FS, fp string, newest time.Time, maxBytes int64, mtime time.Time) (string, *manifest, error) {
	if key, m, ok := c.lookup(fp); ok {
		return key, m, nil
	}
	b := c.builder(fp)
	b.Lock()
	defer b.Unlock()
	if key, m, ok := c.lookup(fp); ok { // built while this run waited
		return key, m, nil
	}
	stable := newest.Before(time.Now().Add(-racyMargin))
	key, m, err := c.build(fsys, maxBytes, mtime)
	if err != nil {
		return "", nil, err
	}
	if stable {
		c.remember(fp, key)
	}
	c.evict(key)
	return key, m, nil
}

// lookup finds the snapshot of fp, in this process's memory or in the
// cache's index, and verifies it.
func (c *cache) lookup(fp string) (string, *manifest, bool) {
	c.mu.Lock()
	key, ok := c.keys[fp]
	c.mu.Unlock()
	if !ok {
		b, err := os.ReadFile(filepath.Join(c.dir, cacheIndexDir, fpName(fp)))
		if err != nil {
			return "", nil, false
		}
		key = strings.TrimSpace(string(b))
	}
	if !validKey(key) {
		return "", nil, false
	}
	m, err := c.verify(key)
	if err != nil {
		c.drop(key)
		return "", nil, false
	}
	c.mu.Lock()
	c.keys[fp] = key
	c.mu.Unlock()
	now := time.Now()
	_ = os.Chtimes(filepath.Join(c.dir, key, snapUsed), now, now)
	return key, m, true
}

// remember records fp -> key in memory and in the index, for the next
// process.
func (c *cache) remember(fp, key string) {
	c.mu.Lock()
	c.keys[fp] = key
	c.mu.Unlock()
	tmp := filepath.Join(c.dir, cacheIndexDir, cacheTmpInfix+randomName())
	if os.WriteFile(tmp, []byte(key+"\n"), 0o600) == nil {
		if os.Rename(tmp, filepath.Join(c.dir, cacheIndexDir, fpName(fp))) != nil {
			_ = os.Remove(tmp)
		}
	}
}

// verify reads the manifest of snapshot key and checks, without following a
// link, that every folder and file of it is still what the manifest says:
// a folder, a regular file of the same inode, size, time and mode (and in
// the read-only cache, root's and without write bits).
//
// The manifest comes from this process's memory when it has it; one whose
// files no longer match (another process rebuilt the snapshot) is read
// again from the cache.
func (c *cache) verify(key string) (*manifest, error) {
	c.mu.Lock()
	known := c.manifests[key]
	c.mu.Unlock()
	if known != nil && c.check(key, known) == nil {
		return known, nil
	}
	b, err := os.ReadFile(filepath.Join(c.dir, key, snapManifest))
	if err != nil {
		return nil, err
	}
	m := &manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, err
	}
	if err := c.check(key, m); err != nil {
		return nil, err
	}
	c.know(key, m)
	return m, nil
}

// verifyContent reads every file of snapshot key and checks its digest
// against m.
func (c *cache) verifyContent(key string, m *manifest) error {
	tree := filepath.Join(c.dir, key, SnapTree)
	for _, f := range m.Files {
		if err := sameContent(filepath.Join(tree, filepath.FromSlash(f.Path)), f.Sum); err != nil {
			return fmt.Errorf("snapshot %s: file %q: %w", key, f.Path, err)
		}
	}
	return nil
}

// sameContent checks that the file at p, opened without following a link,
// has the sha256 digest sum (hex).
func sameContent(p, sum string) error {
	f, err := os.OpenFile(p, os.O_RDONLY|NoFollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != sum {
		return errors.New("content changed")
	}
	return nil
}

// know records m as snapshot key's manifest.
func (c *cache) know(key string, m *manifest) {
	c.mu.Lock()
	c.manifests[key] = m
	c.mu.Unlock()
}

// check reports whether snapshot key's files are still what m says,
// looking at each from its folder's handle (one call a file, no path
// resolved twice), never through a link.
func (c *cache) check(key string, m *manifest) error {
	root, err := openDirHandle(filepath.Join(c.dir, key, SnapTree))
	if err != nil {
		return err
	}
	cur := &dirCursor{handles: []dirHandle{root}}
	defer cur.close()
	for _, d := range m.Dirs {
		if _, err := cur.at(d); err != nil {
			return fmt.Errorf("snapshot %s: folder %q changed", key, d)
		}
	}
	for _, f := range m.Files {
		dir, err := cur.at(path.Dir(f.Path))
		var fi fs.FileInfo
		if err == nil {
			fi, err = dir.lstat(path.Base(f.Path))
		}
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.Size || fi.ModTime().UnixNano() != f.MTime ||
			fi.Mode().Perm() != f.Mode || idOf(fi) != (fileID{dev: f.Dev, ino: f.Ino}) || (c.readOnly && !RootWritableOnly(fi)) {
			return fmt.Errorf("snapshot %s: file %q changed", key, f.Path)
		}
	}
	return nil
}

// dirCursor opens the folders of a tree as they are asked for, keeping open
// only the chain from the tree's root to the folder last asked for: a walk
// in the tree's order opens each folder once and holds at most its depth
// in descriptors.
type dirCursor struct {
	names   []string    // the open chain below the root
	handles []dirHandle // the root's, then one per name
}

// at returns the handle of dir ("." or a slash-separated path below the
// root), opened without following a link.
func (c *dirCursor) at(dir string) (dirHandle, error) {
	var parts []string
	if dir != "." {
		parts = strings.Split(dir, "/")
	}
	n := 0
	for n < len(c.names) && n < len(parts) && c.names[n] == parts[n] {
		n++
	}
	for len(c.names) > n {
		c.handles[len(c.handles)-1].close()
		c.names, c.handles = c.names[:len(c.names)-1], c.handles[:len(c.handles)-1]
	}
	for _, p := range parts[n:] {
		h, err := c.handles[len(c.handles)-1].openDir(p)
		if err != nil {
			return dirHandle{}, err
		}
		c.names, c.handles = append(c.names, p), append(c.handles, h)
	}
	return c.handles[len(c.handles)-1], nil
}

// close closes every handle the cursor holds.
func (c *dirCursor) close() {
	for _, h := range c.handles {
		h.close()
	}
}

// build copies the skill folder into a new snapshot and moves it into place
// under its content key. When another builder put the
// same snapshot there first, that one is used.
func (c *cache) build(fsys fs.FS, maxBytes int64, mtime time.Time) (string, *manifest, error) {
	tmp := filepath.Join(c.dir, cacheTmpInfix+strconv.Itoa(os.Getpid())+"-"+randomName())
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", nil, err
	}
	defer removeTree(tmp)
	tree := filepath.Join(tmp, SnapTree)
	if err := os.Mkdir(tree, 0o700); err != nil {
		return "", nil, err
	}
	root, err := os.OpenRoot(tree)
	if err != nil {
		return "", nil, err
	}
	defer root.Close()
	b := &snapshotBuilder{c: c, copier: copier{root: root, budget: maxBytes, limit: maxBytes, mtime: mtime, hash: sha256.New()}}
	if err := walkSkill(fsys, mtime, b.dir, b.file); err != nil {
		return "", nil, err
	}
	body, err := json.Marshal(&b.m)
	if err != nil {
		return "", nil, err
	}
	key := b.m.key()
	if err := os.WriteFile(filepath.Join(tmp, snapManifest), body, 0o600); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, snapUsed), nil, 0o600); err != nil {
		return "", nil, err
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, key)); err != nil {
		// Another builder won, or another source has the same content: use
		// that snapshot only once its bytes are verified to be these.
		m, verr := c.verify(key)
		if verr == nil {
			verr = c.verifyContent(key, m)
		}
		if verr == nil {
			return key, m, nil
		}
		c.drop(key)
		if err := os.Rename(tmp, filepath.Join(c.dir, key)); err != nil {
			return "", nil, err
		}
	}
	c.know(key, &b.m)
	return key, &b.m, nil
}

// snapshotBuilder copies a skill folder into a snapshot's tree.
type snapshotBuilder struct {
	copier
	c *cache
	m manifest
}

// dir makes a folder of the skill in the snapshot.
func (b *snapshotBuilder) dir(p string) error {
	b.m.Dirs = append(b.m.Dirs, p)
	return b.root.Mkdir(p, 0o700)
}

// file copies a regular file of the skill into the snapshot, with its mode
// (group and other write bits dropped in the root-owned cache) and time,
// and records it.
func (b *snapshotBuilder) file(p string, src io.Reader, mode fs.FileMode, mtime time.Time) error {
	if mode == 0 {
		mode = 0o644
	}
	orig := mode
	if b.c.readOnly {
		// The sandbox user reads it through a hard link and must not
		// write it: root's, and writable by root alone, its modes kept.
		mode &^= 0o022
		mode |= 0o444
	}
	fi, err := b.copyFile(p, src, mode, mtime, true)
	if err != nil {
		return err
	}
	id := idOf(fi)
	mf := manifestFile{
		Path: p, Mode: fi.Mode().Perm(), Size: fi.Size(), MTime: fi.ModTime().UnixNano(),
		Dev: id.dev, Ino: id.ino, Sum: hex.EncodeToString(b.hash.Sum(nil)),
	}
	if orig.Perm() != mf.Mode {
		mf.Orig = orig.Perm()
	}
	b.m.Files = append(b.m.Files, mf)
	return nil
}

// drop moves a snapshot out of the way (to the trash, then removed).
func (c *cache) drop(key string) {
	trash := filepath.Join(c.dir, cacheTrash+randomName())
	if os.Rename(filepath.Join(c.dir, key), trash) == nil {
		removeTree(trash)
	}
	c.mu.Lock()
	for fp, k := range c.keys {
		if k == key {
			delete(c.keys, fp)
		}
	}
	delete(c.manifests, key)
	c.mu.Unlock()
}

// evict drops the least recently used snapshots, never keep, until the
// cache is within its limit. Dropping one that a run is taking files from
// is harmless: a run's hard links keep their files, and a run that had not
// taken them yet falls back to copying.
func (c *cache) evict(keep string) {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type snap struct {
		key   string
		bytes int64
		used  time.Time
	}
	var snaps []snap
	var total int64
	for _, e := range entries {
		if !e.IsDir() || !validKey(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.dir, e.Name(), snapManifest))
		var m manifest
		if err != nil || json.Unmarshal(b, &m) != nil {
			continue
		}
		s := snap{key: e.Name(), bytes: m.bytes()}
		if fi, err := os.Stat(filepath.Join(c.dir, e.Name(), snapUsed)); err == nil {
			s.used = fi.ModTime()
		}
		snaps = append(snaps, s)
		total += s.bytes
	}
	slices.SortFunc(snaps, func(a, b snap) int { return a.used.Compare(b.used) })
	for _, s := range snaps {
		if total <= c.limit {
			break
		}
		if s.key == keep {
			continue
		}
		c.drop(s.key)
		total -= s.bytes
	}
	c.pruneIndex()
}

// pruneIndex removes the index entries of snapshots that are gone (each
// change of a skill file's time makes a new fingerprint, so entries would
// otherwise only accumulate) and the leftovers of entries being written.
func (c *cache) pruneIndex() {
	index := filepath.Join(c.dir, cacheIndexDir)
	entries, err := os.ReadDir(index)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(index, e.Name())
		if strings.HasPrefix(e.Name(), cacheTmpInfix) {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > cacheLeftoverAge {
				_ = os.Remove(p)
			}
			continue
		}
		b, err := os.ReadFile(p)
		key := strings.TrimSpace(string(b))
		if err != nil || !validKey(key) {
			_ = os.Remove(p)
			continue
		}
		if _, err := os.Lstat(filepath.Join(c.dir, key)); errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(p)
		}
	}
}

// fingerprint describes the skill folder fsys as its file system reports
// it, without reading a file: every entry's path, type, mode, size,
// modification and change times and identity. The change time moves on
// every write, chmod and utime, and no file owner can set it back, so a
// same-size edit with its modification time restored changes the
// fingerprint too. newest is the latest of those times: a fingerprint taken
// too soon after it may not see a change made within the same clock tick
// (git's "racy" entries), and is not remembered (see snapshotFor). ok is
// false when the file system reports no modification time for a file (the
// folder is then copied every time), or when the folder is over maxBytes
// (staging then reports it).
func fingerprint(fsys fs.FS, maxBytes int64) (fp string, newest time.Time, ok bool) {
	h := sha256.New()
	var total int64
	ok = true
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		t := d.Type()
		if !t.IsDir() && !t.IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if t.IsRegular() {
			if info.ModTime().IsZero() {
				ok = false
				return fs.SkipAll
			}
			if total += info.Size(); total > maxBytes {
				ok = false
				return fs.SkipAll
			}
		}
		id, ctime := idOf(info), changeTime(info)
		for _, tm := range []time.Time{info.ModTime(), ctime} {
			if tm.After(newest) {
				newest = tm
			}
		}
		fmt.Fprintf(h, "%q %v %o %d %d %d %d %d\n", p, t, info.Mode().Perm(), info.Size(), info.ModTime().UnixNano(), ctime.UnixNano(), id.dev, id.ino)
		return nil
	})
	if err != nil || !ok {
		return "", time.Time{}, false
	}
	return hex.EncodeToString(h.Sum(nil)), newest, true
}

// racyMargin is how long after a skill file's last change its folder's
// fingerprint is trusted to name its content (far more than any file
// system's timestamp granularity). Tests of what the index keeps set it to
// zero.
var racyMargin = 2 * time.Second

// fpName is the index file of fingerprint fp.
func fpName(fp string) string { return "fp-" + fp }

// validKey reports whether key can name a snapshot (a hex digest).
func validKey(key string) bool {
	if len(key) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(key)
	return err == nil
}

// randomName is a fresh random file-name part.
func randomName() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// stageSnapshot takes the files of snapshot key (manifest m) into the skill
// root as mode says, and records them.
func (st *stager) stageSnapshot(c *cache, key string, m *manifest, mode StageMode) error {
	tree := filepath.Join(c.dir, key, SnapTree)
	for _, d := range m.Dirs {
		if err := st.root.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, d, err)
		}
	}
	for _, f := range m.Files {
		rec, err := st.take(c, key, filepath.Join(tree, filepath.FromSlash(f.Path)), f, mode)
		if err != nil {
			return err
		}
		st.snap[f.Path] = rec
	}
	return nil
}

// take puts one snapshot file at f.Path in the skill root and returns its
// record: a hard link (shared: the record is the snapshot's inode), or a
// clone or copy of its own.
func (st *stager) take(c *cache, key, src string, f manifestFile, mode StageMode) (record, error) {
	dst := filepath.Join(st.rootPath, filepath.FromSlash(f.Path))
	sum, _ := hex.DecodeString(f.Sum)
	var rec record
	copy(rec.sum[:], sum)
	if mode == StageLink && !st.copyUp(f) {
		if err := os.Link(src, dst); err != nil {
			return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
		}
		rec.size, rec.mtime, rec.id, rec.shared = f.Size, time.Unix(0, f.MTime), fileID{dev: f.Dev, ino: f.Ino}, true
		return rec, nil
	}
	if !c.noClone.Load() {
		err := cloneFile(src, dst)
		switch {
		case err == nil:
			return st.recordCopy(f, dst, rec)
		case errors.Is(err, errNoClone):
			c.noClone.Store(true)
		default:
			return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
		}
	}
	switch {
	case mode == StageLink, mode == StageCloneOrLink && st.copyUp(f):
		// A small file, copied up for the run (see copyUp).
		if err := copyContent(src, dst); err != nil {
			return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
		}
		return st.recordCopy(f, dst, rec)
	case mode == StageCloneOrLink:
		if err := st.lease(c, key); err != nil {
			return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
		}
		if err := os.Link(src, dst); err != nil {
			return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
		}
		fi, err := lstatFile(dst)
		if err != nil {
			return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
		}
		rec.size, rec.mtime, rec.id, rec.shared = f.Size, time.Unix(0, f.MTime), fileID{dev: f.Dev, ino: f.Ino}, true
		rec.writable, rec.src, rec.mode, rec.ctime = true, src, f.Mode, changeTime(fi)
		return rec, nil
	case mode == StageCloneOrCopy:
		if err := copyContent(src, dst); err != nil {
			return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
		}
		return st.recordCopy(f, dst, rec)
	}
	return rec, fmt.Errorf("%w: stage %q: staging mode %d takes no snapshot", codeexec.ErrWorkspace, f.Path, mode)
}

// snapshotLeases is the folder of a snapshot that holds a lease for every
// run linking files of it that it could write through (Local), named after
// the run's workspace: a lease a dead run left means the snapshot may have
// been changed without anyone checking, and the sweep drops it.
const snapshotLeases = "leases"

// snapshotUse is a run's use of a snapshot whose files it links and could
// write through (Local), held by a lease until check and release.
type snapshotUse struct {
	c     *cache
	key   string
	lease string
}

// lease takes the run's lease on snapshot key, once.
func (st *stager) lease(c *cache, key string) error {
	if st.use != nil {
		return nil
	}
	dir := filepath.Join(c.dir, key, snapshotLeases)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// The skill root is <workspace>/w/<name>: the lease names <workspace>.
	lease := filepath.Join(dir, filepath.Base(filepath.Dir(filepath.Dir(st.rootPath))))
	if err := os.WriteFile(lease, nil, 0o600); err != nil {
		return err
	}
	st.use = &snapshotUse{c: c, key: key, lease: lease}
	return nil
}

// check tells whether the run changed a file it linked from the snapshot
// (through the link: a write, a chmod, a utime, even with the time set
// back), looking at the snapshot's own files, and drops the snapshot if it
// did, so that no later run is given it. A file whose change time moved
// (the run's, or another run's link) is read and compared with its digest.
func (u *snapshotUse) check(snap snapshot) {
	if u == nil {
		return
	}
	for _, rec := range snap {
		if !rec.writable {
			continue
		}
		fi, err := lstatFile(rec.src)
		changed := err != nil || idOf(fi) != rec.id || fi.Size() != rec.size || !fi.ModTime().Equal(rec.mtime) || fi.Mode().Perm() != rec.mode
		if !changed && !changeTime(fi).Equal(rec.ctime) {
			changed = sameContent(rec.src, hex.EncodeToString(rec.sum[:])) != nil
		}
		if changed {
			u.c.drop(u.key)
			return
		}
	}
}

// release gives the lease back.
func (u *snapshotUse) release() {
	if u != nil {
		_ = os.Remove(u.lease)
	}
}

// Copy-up bounds. A run that would link a snapshot's files (the sandbox of
// a root agent, StageLink, whose script can read them but never write
// them; Local on a file system that cannot clone, StageCloneOrLink, whose
// script could write through the link) gets its own copies of the small
// ones instead, with the skill's own modes, within these bounds: the
// templates, configurations and scripts a script may rewrite or chmod in
// place, which no other run then sees, at the cost of a copy each. Larger
// files stay shared: read-only under the sandbox, checked after the run
// under Local.
const (
	copyUpFileBytes = 1 << 20  // the largest file copied
	copyUpRunBytes  = 16 << 20 // the bytes copied for one run
	copyUpRunFiles  = 256      // the files copied for one run
)

// copyUp reports whether the run gets its own copy of the snapshot file f
// (see copyUpFileBytes), and counts it.
func (st *stager) copyUp(f manifestFile) bool {
	if f.Size > copyUpFileBytes || st.copiedFiles >= copyUpRunFiles || st.copiedBytes+f.Size > copyUpRunBytes {
		return false
	}
	st.copiedFiles++
	st.copiedBytes += f.Size
	return true
}

// recordCopy gives the run's own copy of f at dst the skill's mode and
// f's time, and records it.
func (st *stager) recordCopy(f manifestFile, dst string, rec record) (record, error) {
	mode := cmp.Or(f.Orig, f.Mode, 0o644)
	if err := os.Chmod(dst, mode); err != nil {
		return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
	}
	mt := time.Unix(0, f.MTime)
	if err := os.Chtimes(dst, mt, mt); err != nil {
		return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
	}
	fi, err := lstatFile(dst)
	if err != nil {
		return rec, fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
	}
	rec.size, rec.mtime, rec.ctime, rec.id = fi.Size(), fi.ModTime(), changeTime(fi), idOf(fi)
	return rec, nil
}

// copyContent copies src to a new file dst (in the kernel where it can:
// copy_file_range).
func copyContent(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|NoFollow, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// errNoClone is what cloneFile returns where the file system cannot clone.
var errNoClone = errors.New("the file system cannot clone files")

// sharedPaths lists the files of snap that are hard links into a snapshot.
func (s snapshot) sharedPaths() map[string]bool {
	out := map[string]bool{}
	for p, r := range s {
		if r.shared {
			out[path.Clean(p)] = true
		}
	}
	return out
}
