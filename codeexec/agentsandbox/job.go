package agentsandbox

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/valid"
)

// job is one run: the request, validated, with its limits resolved.
type job struct {
	req       *codeexec.Request
	skillName string // the staged folder's name: the script's cwd
	setsid    string // setsid's path in the pod, as staging found it
	interp    codeexec.Interpreter
	limits    codeexec.Limits // with defaults
	staged    []entry         // what staging writes, sorted by path
	snap      snapshot        // what staging wrote, filled as it streams
}

// newJob validates req and lists what staging will write.
func newJob(req *codeexec.Request) (*job, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	j := &job{req: req, skillName: req.SkillName, limits: req.Limits.WithDefaults()}
	if j.skillName == "" {
		j.skillName = codeexec.DefaultSkillName
	}
	var err error
	if j.staged, err = entries(req); err != nil {
		return nil, err
	}
	return j, nil
}

// entry is one directory or file to stage.
type entry struct {
	path string
	dir  bool
	size int64
	mode fs.FileMode
	data []byte // an extra file's content; nil: read path from the skill
}

// entries lists what staging writes, sorted by path: the skill folder's
// directories and regular files (links and other types are skipped), then
// the extra files. It checks what Request.Validate cannot: every path of
// the skill folder, that no extra file replaces a file or a folder of the
// skill, and that the script is among the files. It reads no file.
func entries(req *codeexec.Request) ([]entry, error) {
	var out []entry
	kinds := map[string]bool{} // path -> is a directory
	if req.Skill != nil {
		err := fs.WalkDir(req.Skill, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("%w: reading the skill folder: %w", codeexec.ErrWorkspace, err)
			}
			if p == "." {
				return nil
			}
			if err := checkPath(p); err != nil {
				return fmt.Errorf("%w: skill folder: %w", codeexec.ErrInvalidRequest, err)
			}
			switch t := d.Type(); {
			case t.IsDir():
				kinds[p] = true
				out = append(out, entry{path: p, dir: true, mode: 0o755})
				return nil
			case !t.IsRegular():
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return fmt.Errorf("%w: reading the skill folder: %w", codeexec.ErrWorkspace, err)
			}
			kinds[p] = false
			out = append(out, entry{path: p, size: info.Size(), mode: info.Mode().Perm()})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, f := range req.Files {
		if isDir, ok := kinds[f.Path]; ok {
			what := map[bool]string{false: "file", true: "folder"}[isDir]
			return nil, fmt.Errorf("%w: file %q would replace the skill's own %s", codeexec.ErrInvalidRequest, f.Path, what)
		}
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if isDir, ok := kinds[d]; ok && !isDir {
				return nil, fmt.Errorf("%w: file %q: %q is a file of the skill, not a folder", codeexec.ErrInvalidRequest, f.Path, d)
			}
		}
		kinds[f.Path] = false
		data := f.Data
		if data == nil {
			data = []byte{} // an empty file, not one of the skill's
		}
		out = append(out, entry{path: f.Path, size: int64(len(data)), mode: f.Mode.Perm(), data: data})
	}
	if isDir, ok := kinds[req.Script]; !ok || isDir {
		return nil, fmt.Errorf("%w: script %q is not among the request's files", codeexec.ErrInvalidRequest, req.Script)
	}
	for i := range out {
		if !out[i].dir && out[i].mode == 0 {
			out[i].mode = 0o644
			if out[i].path == req.Script {
				out[i].mode = 0o755
			}
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

// checkPath reports why p cannot name an entry of the skill folder.
func checkPath(p string) error {
	c, err := valid.Path(p)
	switch {
	case err != nil:
		return err
	case c != p:
		return fmt.Errorf("path %q is not clean (want %q)", p, c)
	}
	return nil
}

// checkSize refuses, before a sandbox is claimed, a folder whose listed
// sizes are over the staging limit. Staging enforces it again on the bytes
// it reads (a lazily read skill may change in between).
func (j *job) checkSize() error {
	var total int64
	for _, e := range j.staged {
		total += e.size
	}
	if total > j.limits.MaxSkillBytes {
		return fmt.Errorf("%w: %w: the files to stage hold %d bytes, over the %d-byte limit", codeexec.ErrInvalidRequest, codeexec.ErrTooLarge, total, j.limits.MaxSkillBytes)
	}
	return nil
}

// Workspace layout under sandboxd's root, as the host executors lay it out
// under theirs: the skill folder (the script's cwd) beside HOME and TMPDIR.
const (
	homeDir = ".home"
	tmpDir  = ".tmp"
)

// writeTar writes the staging archive to w: HOME, TMPDIR and every entry
// under the skill folder's name, each file read as it is written. It
// records the snapshot collection compares against and enforces the
// staging limit on the bytes it reads.
func (j *job) writeTar(w io.Writer) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	var mkdir func(d string, mode fs.FileMode) error
	mkdir = func(d string, mode fs.FileMode) error {
		if d == "." || dirs[d] {
			return nil
		}
		if err := mkdir(path.Dir(d), 0o755); err != nil {
			return err
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: int64(mode), Format: tar.FormatPAX})
	}
	for _, d := range []string{homeDir, tmpDir, j.skillName} {
		if err := mkdir(d, 0o700); err != nil {
			return err
		}
	}
	j.snap = make(snapshot, len(j.staged))
	budget := j.limits.MaxSkillBytes
	for _, e := range j.staged {
		name := j.skillName + "/" + e.path
		if e.dir {
			if err := mkdir(name, e.mode); err != nil {
				return err
			}
			continue
		}
		if err := mkdir(path.Dir(name), 0o755); err != nil {
			return err
		}
		if budget -= e.size; budget < 0 {
			return fmt.Errorf("%w: %w: the files to stage are over the %d-byte limit", codeexec.ErrInvalidRequest, codeexec.ErrTooLarge, j.limits.MaxSkillBytes)
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: e.size, Mode: int64(e.mode), Format: tar.FormatPAX}); err != nil {
			return err
		}
		sum, err := j.copyEntry(tw, e)
		if err != nil {
			return err
		}
		j.snap[e.path] = staged{size: e.size, sum: sum}
	}
	return tw.Close()
}

// copyEntry writes exactly e.size bytes of e's content and returns their
// digest. A skill file that changed size since it was listed is an error.
func (j *job) copyEntry(w io.Writer, e entry) ([sha256.Size]byte, error) {
	h := sha256.New()
	var src io.Reader = bytes.NewReader(e.data)
	if e.data == nil {
		f, err := j.req.Skill.Open(e.path)
		if err != nil {
			return [sha256.Size]byte{}, fmt.Errorf("%w: reading the skill folder: %w", codeexec.ErrWorkspace, err)
		}
		defer f.Close()
		src = f
	}
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(src, e.size+1))
	switch {
	case err != nil:
		return [sha256.Size]byte{}, err
	case n != e.size:
		// tar.Writer refuses the extra byte, or the member is short.
		return [sha256.Size]byte{}, fmt.Errorf("%w: %s changed size while being staged", codeexec.ErrWorkspace, e.path)
	}
	return [sha256.Size]byte(h.Sum(nil)), nil
}

// staged is what staging wrote at one path.
type staged struct {
	size int64
	sum  [sha256.Size]byte
	// stamp is the file's inode and times in the pod right after
	// staging (see stageScript), or "" when staging did not report it.
	stamp string
}

// snapshot is what staging wrote, by path under the skill root.
type snapshot map[string]staged

// errWorkspace marks an error as the pod's staging failing, unless it
// already carries a sentinel.
func errWorkspace(err error) error {
	for _, s := range []error{codeexec.ErrInvalidRequest, codeexec.ErrWorkspace, codeexec.ErrStart, codeexec.ErrSandboxUnavailable, ErrConnectionLost} {
		if errors.Is(err, s) {
			return err
		}
	}
	return fmt.Errorf("%w: staging: %w", codeexec.ErrWorkspace, err)
}
