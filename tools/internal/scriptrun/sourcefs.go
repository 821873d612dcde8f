package scriptrun

import (
	"context"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"google.golang.org/adk/tool/skilltoolset/skill"
)

// sourceFS shows one skill of any skill.Source as a read-only file system:
// the files its ListResources(ctx, name, "") lists, each opened with
// LoadResource when read. It is what an executor stages from when the
// source is not this module's own (whose Source.FS keeps file modes and
// times). Files it shows have mode 0 (the executor's default) and no time.
type sourceFS struct {
	ctx   context.Context
	src   skill.Source
	skill string
	dirs  map[string][]fs.DirEntry // folder -> entries, sorted by name
}

// newSourceFS builds the tree of paths, which ListResources returned.
func newSourceFS(ctx context.Context, src skill.Source, name string, paths []string) *sourceFS {
	f := &sourceFS{ctx: ctx, src: src, skill: name, dirs: map[string][]fs.DirEntry{".": nil}}
	for _, p := range paths {
		if !fs.ValidPath(p) || p == "." {
			continue
		}
		f.add(p, false)
	}
	for d, es := range f.dirs {
		slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		f.dirs[d] = slices.CompactFunc(es, func(a, b fs.DirEntry) bool { return a.Name() == b.Name() })
	}
	return f
}

// add enters p (a file, or a folder holding one) in its parent's listing.
func (f *sourceFS) add(p string, dir bool) {
	parent := path.Dir(p)
	if _, ok := f.dirs[parent]; !ok {
		f.add(parent, true)
	}
	if _, seen := f.dirs[p]; dir && !seen {
		f.dirs[p] = nil
	}
	f.dirs[parent] = append(f.dirs[parent], fs.FileInfoToDirEntry(sourceInfo{name: path.Base(p), dir: dir}))
}

// Open implements fs.FS: a folder of the tree, or a file through
// LoadResource.
func (f *sourceFS) Open(p string) (fs.File, error) {
	if !fs.ValidPath(p) {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid}
	}
	if _, ok := f.dirs[p]; ok {
		return &sourceDir{info: sourceInfo{name: path.Base(p), dir: true}}, nil
	}
	rc, err := f.src.LoadResource(f.ctx, f.skill, p)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return &sourceFile{rc: rc, info: sourceInfo{name: path.Base(p)}}, nil
}

// ReadDir implements fs.ReadDirFS.
func (f *sourceFS) ReadDir(p string) ([]fs.DirEntry, error) {
	es, ok := f.dirs[p]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: fs.ErrNotExist}
	}
	return slices.Clone(es), nil
}

// sourceInfo describes an entry of a sourceFS.
type sourceInfo struct {
	name string
	dir  bool
}

func (i sourceInfo) Name() string       { return i.name }
func (i sourceInfo) Size() int64        { return 0 }
func (i sourceInfo) ModTime() time.Time { return time.Time{} }
func (i sourceInfo) IsDir() bool        { return i.dir }
func (i sourceInfo) Sys() any           { return nil }
func (i sourceInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0
}

// sourceFile is a file of a sourceFS, read from LoadResource.
type sourceFile struct {
	rc   io.ReadCloser
	info sourceInfo
}

func (f *sourceFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *sourceFile) Read(b []byte) (int, error) { return f.rc.Read(b) }
func (f *sourceFile) Close() error               { return f.rc.Close() }

// sourceDir is a folder of a sourceFS.
type sourceDir struct{ info sourceInfo }

func (d *sourceDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *sourceDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fs.ErrInvalid}
}
func (d *sourceDir) Close() error { return nil }
