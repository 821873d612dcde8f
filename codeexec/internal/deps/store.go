package deps

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The store's directory:
//
//	<dir>/                     0711, the agent's
//	  <key>/                   a finished environment, 0555, files without write bits
//	    env.json               its metadata (size, what it holds)
//	    site/ or node_modules/ the packages
//	  .locks/<key>.use         shared by every run holding <key>, exclusive to evict it
//	  .locks/<key>.build       exclusive while <key> is built
//	  .locks/evict             exclusive while one process evicts
//	  .tmp-<pid>-<random>/     an environment being built
//	  .trash-<random>/         an environment being removed
//
// An environment appears by one rename of its finished temporary directory,
// so a directory named by a key is always complete. Leftovers of a process
// that died are removed when the next store opens the directory.

// Names inside a store.
const (
	locksDir     = ".locks"
	tmpPrefix    = ".tmp-"
	trashPrefix  = ".trash-"
	metaFile     = "env.json"
	sitePackages = "site"
	nodeModules  = "node_modules"
	evictLock    = "evict"
)

// leftoverAge is how old a temporary build of a live process must be before
// a sweep removes it anyway.
const leftoverAge = 24 * time.Hour

// lockPoll is how often a blocked lock is tried again (the wait can be
// cancelled between tries).
const lockPoll = 20 * time.Millisecond

// Store keeps dependency environments in one directory; see the package
// documentation. It is safe for concurrent use, by goroutines and by
// processes sharing the directory.
type Store struct {
	cfg   Config
	dir   string
	limit int64

	interpMu sync.Mutex
	interps  map[string]*interpEntry

	builds atomic.Int64 // environments this store built
}

// envMeta is an environment's env.json.
type envMeta struct {
	Key         string    `json:"key"`
	Language    string    `json:"language"`
	Interpreter string    `json:"interpreter"`
	Declared    []string  `json:"declared"`
	Bytes       int64     `json:"bytes"`
	Created     time.Time `json:"created"`
}

// New opens (creating it if needed) the store directory of cfg and removes
// what builders that died left there.
func New(cfg Config) (*Store, error) {
	dir := cfg.Dir
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return nil, fmt.Errorf("dependency store %s: %w", dir, err)
	}
	if err := os.Mkdir(filepath.Join(dir, locksDir), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("dependency store %s: %w", dir, err)
	}
	s := &Store{cfg: cfg, dir: dir, limit: cfg.MaxBytes, interps: map[string]*interpEntry{}}
	if s.limit <= 0 {
		s.limit = DefaultMaxBytes
	}
	s.sweep()
	return s, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// sweep removes the temporary builds of processes that are gone (or older
// than leftoverAge) and the trash of removals.
func (s *Store) sweep() {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, trashPrefix):
			removeTree(filepath.Join(s.dir, name))
		case strings.HasPrefix(name, tmpPrefix):
			pid, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(name, tmpPrefix), "-", 2)[0])
			info, err := e.Info()
			if err == nil && (!processAlive(pid) || time.Since(info.ModTime()) > leftoverAge) {
				removeTree(filepath.Join(s.dir, name))
			}
		}
	}
}

// keyOf is the key of an environment: the digest of its parts.
func keyOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// validKey reports whether name can be an environment's key.
func validKey(name string) bool {
	if len(name) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}

// lockFile is a held lock.
type lockFile struct{ f *os.File }

// unlock releases the lock.
func (l *lockFile) unlock() {
	if l != nil && l.f != nil {
		releaseLock(l.f)
		l.f.Close()
		l.f = nil
	}
}

// lock takes the lock file .locks/name (shared or exclusive), waiting
// until ctx ends when wait, else failing at once with errLocked. A file
// removed or replaced while it was being locked is opened again, so the
// lock held is always the one at the path.
func (s *Store) lock(ctx context.Context, name string, exclusive, wait bool) (*lockFile, error) {
	p := filepath.Join(s.dir, locksDir, name)
	for {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		for {
			err = tryLock(f, exclusive)
			if err == nil || !errors.Is(err, errLocked) || !wait {
				break
			}
			select {
			case <-ctx.Done():
				f.Close()
				return nil, ctx.Err()
			case <-time.After(lockPoll):
			}
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(p)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return &lockFile{f: f}, nil
		}
		(&lockFile{f: f}).unlock()
	}
}

// ready reports whether environment key exists (complete: it appears by
// rename).
func (s *Store) ready(key string) bool {
	_, err := os.Lstat(filepath.Join(s.dir, key, metaFile))
	return err == nil
}

// touch records a use of environment key (its folder's time).
func (s *Store) touch(key string) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(s.dir, key), now, now)
}

// acquire returns environment key held for a run, building it with build
// when it is missing (one builder at a time across processes; the others
// wait for it). missing, when not nil, is called before building (under
// the run's hold, not the build lock) and may return an Env that needs no
// environment, or an error. built reports whether this call built it.
func (s *Store) acquire(ctx context.Context, key string, missing func() (*Env, error), build func(tmp string) (*envMeta, error)) (*Env, error) {
	hold, err := s.lock(ctx, key+".use", false, true)
	if err != nil {
		return nil, fmt.Errorf("dependency store %s: %w", s.dir, err)
	}
	env := &Env{Key: key, Dir: filepath.Join(s.dir, key), release: hold.unlock}
	if s.ready(key) {
		s.touch(key)
		return env, nil
	}
	if missing != nil {
		if e, err := missing(); err != nil || e != nil {
			hold.unlock()
			return e, err
		}
	}
	b, err := s.lock(ctx, key+".build", true, true)
	if err != nil {
		hold.unlock()
		return nil, fmt.Errorf("dependency store %s: %w", s.dir, err)
	}
	defer b.unlock()
	if s.ready(key) { // built while this call waited
		s.touch(key)
		return env, nil
	}
	if err := s.build(key, build); err != nil {
		hold.unlock()
		return nil, err
	}
	env.Built = true
	s.evict(ctx)
	return env, nil
}

// build makes environment key in a temporary directory and renames it into
// place.
func (s *Store) build(key string, build func(tmp string) (*envMeta, error)) error {
	tmp := filepath.Join(s.dir, tmpPrefix+strconv.Itoa(os.Getpid())+"-"+randomName())
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("dependency store %s: %w", s.dir, err)
	}
	defer removeTree(tmp) // nothing left once renamed
	meta, err := build(tmp)
	if err != nil {
		return err
	}
	s.builds.Add(1)
	meta.Key, meta.Created = key, time.Now().UTC()
	if meta.Bytes, err = treeBytes(tmp); err != nil {
		return fmt.Errorf("dependency store %s: %w", s.dir, err)
	}
	body, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, metaFile), append(body, '\n'), 0o444); err != nil {
		return fmt.Errorf("dependency store %s: %w", s.dir, err)
	}
	if err := readOnlyTree(tmp); err != nil {
		return fmt.Errorf("dependency store %s: %w", s.dir, err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, key)); err != nil {
		return fmt.Errorf("dependency store %s: %w", s.dir, err)
	}
	return nil
}

// evict removes the least recently used environments that no run holds
// (the one just built is held by its builder) until the store is within
// its limit.
func (s *Store) evict(ctx context.Context) {
	l, err := s.lock(ctx, evictLock, true, true)
	if err != nil {
		return
	}
	defer l.unlock()
	type entry struct {
		key   string
		bytes int64
		used  time.Time
	}
	var envs []entry
	var total int64
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if !e.IsDir() || !validKey(e.Name()) {
			continue
		}
		var m envMeta
		b, err := os.ReadFile(filepath.Join(s.dir, e.Name(), metaFile))
		if err != nil || json.Unmarshal(b, &m) != nil {
			continue
		}
		en := entry{key: e.Name(), bytes: m.Bytes}
		if fi, err := e.Info(); err == nil {
			en.used = fi.ModTime()
		}
		envs = append(envs, en)
		total += en.bytes
	}
	slices.SortFunc(envs, func(a, b entry) int { return a.used.Compare(b.used) })
	for _, en := range envs {
		if total <= s.limit {
			return
		}
		if s.drop(ctx, en.key) {
			total -= en.bytes
		}
	}
}

// drop removes environment key unless a run holds it; it reports whether
// it did.
func (s *Store) drop(ctx context.Context, key string) bool {
	l, err := s.lock(ctx, key+".use", true, false)
	if err != nil {
		return false // held by a run
	}
	defer l.unlock()
	trash := filepath.Join(s.dir, trashPrefix+randomName())
	if os.Rename(filepath.Join(s.dir, key), trash) != nil {
		return false
	}
	// The lock files go too: whoever opened them before sees, once it has
	// the lock, that the path names another file, and opens it again.
	_ = os.Remove(filepath.Join(s.dir, locksDir, key+".use"))
	_ = os.Remove(filepath.Join(s.dir, locksDir, key+".build"))
	removeTree(trash)
	return true
}

// treeBytes sums the sizes of the regular files under dir.
func treeBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// readOnlyTree takes every write bit off dir's folders and files (folders
// 0555; files keep their execute bits and become readable by all), without
// following links.
func readOnlyTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return os.Chmod(p, (fi.Mode().Perm()|0o444)&^0o222)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Folders last, deepest first, once the walk no longer needs them.
	for _, d := range slices.Backward(dirs) {
		if err := os.Chmod(d, 0o555); err != nil {
			return err
		}
	}
	return nil
}

// removeTree removes dir, giving its folders back their write bits first
// (a non-root owner cannot remove entries of a folder without them).
func removeTree(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// randomName is a fresh random file-name part.
func randomName() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
