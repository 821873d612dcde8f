package host

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/valid"
)

// fileID identifies a file on the host: its device and inode (zero where
// the platform does not tell them).
type fileID struct{ dev, ino uint64 }

// record is what staging wrote at one path: enough to tell, after the run,
// whether the file there is still the one staged without reading it.
type record struct {
	size  int64
	mtime time.Time // as the file system stored it
	ctime time.Time // the inode change time after staging, where known
	id    fileID    // device and inode, where the platform has them
	sum   [sha256.Size]byte
	// data is the staged content when the request holds it in memory (an
	// extra file): compared as is, it needs no digest.
	data []byte
	// shared marks a hard link into a snapshot (see cache.go): other runs
	// link the same inode, which moves its change time, so only its
	// identity, size and modification time tell it is unchanged.
	shared bool
	// writable marks a shared link the run could write through (Local):
	// src is the snapshot's file and mode its permission bits, which the
	// run must leave as staged (see snapshotUse.check). Its change time is
	// compared too, and a moved one means reading it.
	writable bool
	src      string
	mode     fs.FileMode
}

// snapshot is the skill root as staged: one record per staged file.
//
// A file is an output when it is not in the snapshot or differs from its
// record. Staging sets every file's modification time to at most
// stagedMtimeMargin before the run (a skill file keeps its own, older,
// time), so any write by the script moves it forward, even on a file system
// whose clock ticks coarsely; and a write, a chmod or setting the time back
// moves the inode change time, which no script can set. A file whose
// identity, size and both times are those staged is therefore unchanged. A
// file whose times moved but whose size did not is read and compared with
// the staged content's digest, so rewriting the same bytes does not make an
// output.
type snapshot map[string]record

// stagedMtimeMargin is how far before the start of staging a staged file's
// modification time lies at the latest.
const stagedMtimeMargin = 2 * time.Second

// unchanged reports whether the file at p, as the walk saw it (identity, size,
// times), is the one staging wrote, reading it (through read) only when a
// time moved and its size did not. The content read, if any, is returned
// so that an output is not read twice.
func (s snapshot) unchanged(p string, info fs.FileInfo, read func() ([]byte, error)) (bool, []byte) {
	rec, ok := s[p]
	if !ok || rec.size != info.Size() {
		return false, nil
	}
	if rec.id == idOf(info) && rec.mtime.Equal(info.ModTime()) && ((rec.shared && !rec.writable) || rec.ctime.Equal(changeTime(info))) {
		return true, nil
	}
	data, err := read()
	if err != nil {
		return false, nil // read again when collected, which reports it
	}
	if rec.data != nil {
		return bytes.Equal(data, rec.data), data
	}
	return sha256.Sum256(data) == rec.sum, data
}

// copier creates files under an os.Root within a byte budget: the one way
// staging and the snapshot cache's builder write a file.
type copier struct {
	root   *os.Root
	limit  int64     // the staging limit in bytes
	budget int64     // bytes left to stage
	mtime  time.Time // the latest modification time a copied file gets
	hash   hash.Hash
}

// copyFile creates p with src's content, mode (the umask does not apply)
// and modification time mtime, within the budget, leaving the content's
// digest in c.hash when digest is set, and returns the file's info. Over
// the budget is ErrInvalidRequest; other errors are the file system's.
func (c *copier) copyFile(p string, src io.Reader, mode fs.FileMode, mtime time.Time, digest bool) (fs.FileInfo, error) {
	f, err := c.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	var w io.Writer = f
	if digest {
		c.hash.Reset()
		w = io.MultiWriter(f, c.hash)
	}
	n, err := io.Copy(w, io.LimitReader(src, c.budget+1))
	if err == nil && n > c.budget {
		err = fmt.Errorf("%w: %w: the files to stage are over the %d-byte limit", codeexec.ErrInvalidRequest, codeexec.ErrTooLarge, c.limit)
	}
	c.budget -= n
	if err == nil {
		err = f.Chmod(mode)
	}
	var info fs.FileInfo
	if err == nil {
		if err = c.root.Chtimes(p, mtime, mtime); err == nil {
			info, err = statFile(f)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return info, err
}

// walkSkill walks the skill folder fsys: dir gets each folder, file each
// regular file, open, with its permission bits and its modification time
// (at most latest); anything else (a symbolic link, a device) is skipped. A
// path no skill may hold is ErrInvalidRequest.
func walkSkill(fsys fs.FS, latest time.Time, dir func(p string) error, file func(p string, src io.Reader, perm fs.FileMode, mtime time.Time) error) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%w: reading the skill folder: %w", codeexec.ErrWorkspace, err)
		}
		if p == "." {
			return nil
		}
		if err := valid.FilePath(p); err != nil {
			return fmt.Errorf("%w: skill folder: %w", codeexec.ErrInvalidRequest, err)
		}
		switch t := d.Type(); {
		case t.IsDir():
			return dir(p)
		case !t.IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("%w: reading the skill folder: %w", codeexec.ErrWorkspace, err)
		}
		src, err := fsys.Open(p)
		if err != nil {
			return fmt.Errorf("%w: reading the skill folder: %w", codeexec.ErrWorkspace, err)
		}
		defer src.Close()
		mtime := info.ModTime()
		if mtime.IsZero() || mtime.After(latest) {
			mtime = latest
		}
		return file(p, src, info.Mode().Perm(), mtime)
	})
}

// stager writes a request's files into the skill root through an os.Root.
type stager struct {
	copier
	rootPath string // the skill root's host path
	script   string
	snap     snapshot
	use      *snapshotUse // the snapshot the run links files of, if it can write them

	copiedFiles int   // the snapshot files copied up (see copyUp)
	copiedBytes int64 // and their bytes
}

// stage writes req's skill folder and then its extra files into the skill
// root, byte for byte, with their modes, and returns what it wrote. The
// skill folder comes from a snapshot of the cache (see cache.go) as mode
// says, or is streamed file by file when mode is StageCopy, there is no
// cache (c returns nil) or the folder has no fingerprint. It checks what Request.Validate cannot: every
// path of the skill folder, the staging limit, that no extra file replaces a
// skill file, and that the script is among the staged files.
//
// A run that links files it could write through (Local) also gets a
// snapshotUse, which must be checked after the run and released.
func (ws *Workspace) stage(req *codeexec.Request, maxBytes int64, mode StageMode, c func() *cache) (snapshot, *snapshotUse, error) {
	root, err := os.OpenRoot(ws.Skill)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", codeexec.ErrWorkspace, err)
	}
	defer root.Close()
	st := &stager{
		copier: copier{
			root:   root,
			limit:  maxBytes,
			budget: maxBytes,
			mtime:  time.Now().Add(-stagedMtimeMargin).Truncate(time.Second),
			hash:   sha256.New(),
		},
		rootPath: ws.Skill,
		script:   req.Script,
		snap:     snapshot{},
	}
	err = nil
	if req.Skill != nil {
		err = st.skill(req.Skill, mode, c)
	}
	for _, f := range req.Files {
		if err == nil {
			err = st.extra(f)
		}
	}
	if _, ok := st.snap[req.Script]; !ok && err == nil {
		err = fmt.Errorf("%w: script %q is not among the request's files", codeexec.ErrInvalidRequest, req.Script)
	}
	if err != nil {
		st.use.release()
		return nil, nil, err
	}
	return st.snap, st.use, nil
}

// skill stages the skill folder fsys: from its snapshot in the cache
// cacheOf returns (nil: none), or file by file.
func (st *stager) skill(fsys fs.FS, mode StageMode, cacheOf func() *cache) error {
	if mode != StageCopy && cacheOf != nil {
		fp, newest, ok := fingerprint(fsys, st.limit)
		var c *cache
		if ok {
			c = cacheOf()
		}
		if c != nil {
			if key, m, err := c.snapshotFor(fsys, fp, newest, st.limit, st.mtime); err == nil {
				st.budget -= m.bytes()
				return st.stageSnapshot(c, key, m, mode)
			} else if errors.Is(err, codeexec.ErrInvalidRequest) {
				return err
			}
			// The cache could not serve this folder: copy it.
		}
	}
	return walkSkill(fsys, st.mtime, func(p string) error {
		if err := st.root.Mkdir(p, 0o755); err != nil {
			return fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, p, err)
		}
		return nil
	}, func(p string, src io.Reader, perm fs.FileMode, mtime time.Time) error {
		return st.write(p, src, perm, mtime, true)
	})
}

// extra stages one of the request's extra files, which must not replace a
// file or directory of the skill.
func (st *stager) extra(f codeexec.File) error {
	if _, ok := st.snap[f.Path]; ok {
		return fmt.Errorf("%w: file %q would replace the skill's own file", codeexec.ErrInvalidRequest, f.Path)
	}
	if d := path.Dir(f.Path); d != "." {
		if err := st.root.MkdirAll(d, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
				return fmt.Errorf("%w: file %q: %q is a file of the skill, not a folder", codeexec.ErrInvalidRequest, f.Path, d)
			}
			return fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, f.Path, err)
		}
	}
	if fi, err := st.root.Lstat(f.Path); err == nil && fi.IsDir() {
		return fmt.Errorf("%w: file %q would replace a folder of the skill", codeexec.ErrInvalidRequest, f.Path)
	}
	if err := st.write(f.Path, bytes.NewReader(f.Data), f.Mode.Perm(), st.mtime, false); err != nil {
		return err
	}
	rec := st.snap[f.Path]
	rec.data = f.Data
	if rec.data == nil {
		rec.data = []byte{} // compared like any other, not digested
	}
	st.snap[f.Path] = rec
	return nil
}

// write creates p with src's content, mode (zero: 0o644, or 0o755 for the
// script; the umask does not apply) and modification time, within the
// staging budget, and records it, with the content's digest when digest is
// set.
func (st *stager) write(p string, src io.Reader, mode fs.FileMode, mtime time.Time, digest bool) error {
	if mode == 0 {
		mode = 0o644
		if p == st.script {
			mode = 0o755
		}
	}
	info, err := st.copyFile(p, src, mode, mtime, digest)
	if err != nil {
		if errors.Is(err, codeexec.ErrInvalidRequest) {
			return err
		}
		return fmt.Errorf("%w: stage %q: %w", codeexec.ErrWorkspace, p, err)
	}
	rec := record{size: info.Size(), mtime: info.ModTime(), ctime: changeTime(info), id: idOf(info)}
	if digest {
		st.hash.Sum(rec.sum[:0])
	}
	st.snap[p] = rec
	return nil
}
