package agentsandbox

import (
	"archive/tar"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/adkskills/adkskills/codeexec"
)

// The seam between codeexec.Request and this executor. A job holds a run in
// the shape codeexec.Request is moving to (the skill as an fs.FS read
// lazily, in-memory extra files staged over it, a named skill folder, all
// limits in one place): newJob is the only code that knows the request's
// current fields.

// DefaultMaxSkillBytes bounds the staged folder (the skill plus the extra
// files) when a request sets no limit: the tools' own limit.
const DefaultMaxSkillBytes = 256 << 20

// maxSkillBytes is the limit newJob applies until codeexec.Request carries
// its own (Limits.MaxSkillBytes); tests lower it.
var maxSkillBytes int64 = DefaultMaxSkillBytes

// defaultSkillName names the staged folder when a request gives none.
const defaultSkillName = "skill"

// job is one run.
type job struct {
	req       *codeexec.Request
	skill     fs.FS           // nil: an empty folder
	skillName string          // the staged folder's name: the script's cwd
	files     []codeexec.File // staged over skill, from memory
	script    string
	interp    codeexec.Interpreter
	args      []string
	stdin     []byte
	env       map[string]string
	timeout   time.Duration
	maxChars  int
	output    codeexec.OutputLimits
	maxSkill  int64
	snap      snapshot // filled while staging
}

// newJob validates req and takes the run out of it.
func newJob(req *codeexec.Request) (*job, error) {
	if err := validate(req); err != nil {
		return nil, err
	}
	j := &job{
		req:       req,
		skillName: defaultSkillName,
		files:     req.Files,
		script:    req.Script,
		args:      req.Args,
		stdin:     req.Stdin,
		env:       req.Env,
		timeout:   cmp.Or(req.Timeout, codeexec.DefaultTimeout),
		maxChars:  req.MaxOutputChars,
		output:    withDefaults(req.Limits),
		maxSkill:  maxSkillBytes,
	}
	if j.maxChars <= 0 {
		j.maxChars = codeexec.DefaultMaxOutputChars
	}
	return j, nil
}

// validate reports the first malformed part of req, wrapping
// codeexec.ErrInvalidRequest, with the rules of the host executors.
func validate(req *codeexec.Request) error {
	if req == nil {
		return fmt.Errorf("%w: nil request", codeexec.ErrInvalidRequest)
	}
	files := make(map[string]bool, len(req.Files))
	dirs := map[string]bool{}
	for _, f := range req.Files {
		if err := checkPath(f.Path); err != nil {
			return fmt.Errorf("%w: file: %w", codeexec.ErrInvalidRequest, err)
		}
		if files[f.Path] || dirs[f.Path] {
			return fmt.Errorf("%w: file %q named twice or both a file and a directory", codeexec.ErrInvalidRequest, f.Path)
		}
		files[f.Path] = true
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if files[d] {
				return fmt.Errorf("%w: %q is both a file and a directory", codeexec.ErrInvalidRequest, d)
			}
			dirs[d] = true
		}
		if f.Encoding != codeexec.EncodingRaw && f.Encoding != codeexec.EncodingUTF8 {
			return fmt.Errorf("%w: file %q: encoding %q: decode it first", codeexec.ErrInvalidRequest, f.Path, f.Encoding)
		}
		if f.Mode&^fs.ModePerm != 0 {
			return fmt.Errorf("%w: file %q: mode %v: only permission bits may be set", codeexec.ErrInvalidRequest, f.Path, f.Mode)
		}
	}
	if err := checkPath(req.Script); err != nil {
		return fmt.Errorf("%w: script: %w", codeexec.ErrInvalidRequest, err)
	}
	if !files[req.Script] {
		return fmt.Errorf("%w: script %q is not among the request's files", codeexec.ErrInvalidRequest, req.Script)
	}
	for i, a := range req.Args {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("%w: argument %d contains NUL", codeexec.ErrInvalidRequest, i)
		}
	}
	for k, v := range req.Env {
		if err := codeexec.CheckEnv(k, v); err != nil {
			return fmt.Errorf("%w: %w", codeexec.ErrInvalidRequest, err)
		}
	}
	if l := req.Limits; req.Timeout < 0 || l.MaxFiles < 0 || l.MaxFileBytes < 0 || l.MaxTotalBytes < 0 {
		return fmt.Errorf("%w: negative timeout or limit", codeexec.ErrInvalidRequest)
	}
	return nil
}

// checkPath reports why p cannot name a file of the skill folder.
func checkPath(p string) error {
	c, err := codeexec.CleanPath(p)
	switch {
	case err != nil:
		return err
	case c == ".":
		return fmt.Errorf("path %q names the skill folder, not a file", p)
	case c != p:
		return fmt.Errorf("path %q is not clean (want %q)", p, c)
	}
	return nil
}

// withDefaults replaces zero output limits by their Default constants.
func withDefaults(l codeexec.OutputLimits) codeexec.OutputLimits {
	l.MaxFiles = cmp.Or(l.MaxFiles, codeexec.DefaultMaxOutputFiles)
	l.MaxFileBytes = cmp.Or(l.MaxFileBytes, codeexec.DefaultMaxOutputFileBytes)
	l.MaxTotalBytes = cmp.Or(l.MaxTotalBytes, codeexec.DefaultMaxOutputTotalBytes)
	return l
}

// entry is one file to stage.
type entry struct {
	path string
	size int64
	mode fs.FileMode
	data []byte // an extra file's content; nil: read path from the skill
}

// entries lists what staging writes, sorted by path: the skill's regular
// files (links and other types skipped), then the extra files. A path both
// have is an invalid request.
func (j *job) entries() ([]entry, error) {
	var out []entry
	if j.skill != nil {
		err := fs.WalkDir(j.skill, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			out = append(out, entry{path: p, size: info.Size(), mode: info.Mode().Perm()})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%w: reading the skill folder: %w", codeexec.ErrWorkspace, err)
		}
	}
	seen := make(map[string]bool, len(out))
	for _, e := range out {
		seen[e.path] = true
	}
	for _, f := range j.files {
		if seen[f.Path] {
			return nil, fmt.Errorf("%w: file %q is already in the skill folder", codeexec.ErrInvalidRequest, f.Path)
		}
		out = append(out, entry{path: f.Path, size: int64(len(f.Data)), mode: f.Mode.Perm(), data: f.Data})
	}
	for i := range out {
		if out[i].mode == 0 {
			out[i].mode = 0o644
			if out[i].path == j.script {
				out[i].mode = 0o755
			}
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

// checkSize refuses, before a sandbox is claimed, a folder over the limit.
func (j *job) checkSize() error {
	es, err := j.entries()
	if err != nil {
		return err
	}
	var total int64
	for _, e := range es {
		total += e.size
	}
	if total > j.maxSkill {
		return fmt.Errorf("%w: the skill folder holds %d bytes, over the %d-byte limit", codeexec.ErrInvalidRequest, total, j.maxSkill)
	}
	return nil
}

// Workspace layout under sandboxd's root, as the host executors lay it out
// under theirs: the skill folder (the script's cwd) beside HOME and TMPDIR.
const (
	homeDir = ".home"
	tmpDir  = ".tmp"
)

// writeTar writes the staging archive to w: the directories, HOME, TMPDIR
// and every file under skillName, each read as it is written. It records
// the snapshot collection compares against and enforces the size limit on
// what it actually reads.
func (j *job) writeTar(w io.Writer) error {
	es, err := j.entries()
	if err != nil {
		return err
	}
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
	j.snap = make(snapshot, len(es))
	var total int64
	for _, e := range es {
		name := j.skillName + "/" + e.path
		if err := mkdir(path.Dir(name), 0o755); err != nil {
			return err
		}
		if total += e.size; total > j.maxSkill {
			return fmt.Errorf("%w: the skill folder grew past the %d-byte limit while being staged", codeexec.ErrInvalidRequest, j.maxSkill)
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: e.size, Mode: int64(e.mode), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if err := j.copyEntry(tw, e); err != nil {
			return err
		}
		j.snap[e.path] = e
	}
	return tw.Close()
}

// copyEntry writes e's content, exactly e.size bytes.
func (j *job) copyEntry(w io.Writer, e entry) error {
	if e.data != nil {
		_, err := w.Write(e.data)
		return err
	}
	r, err := j.open(e)
	if err != nil {
		return err
	}
	defer r.Close()
	n, err := io.Copy(w, io.LimitReader(r, e.size))
	if err == nil && n != e.size {
		err = fmt.Errorf("%w: %s shrank while being staged", codeexec.ErrWorkspace, e.path)
	}
	return err
}

// open opens a staged entry's original content.
func (j *job) open(e entry) (io.ReadCloser, error) {
	if e.data != nil {
		return io.NopCloser(bytes.NewReader(e.data)), nil
	}
	f, err := j.skill.Open(e.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", codeexec.ErrWorkspace, err)
	}
	return f, nil
}

// snapshot is what staging wrote, by path under the skill root.
type snapshot map[string]entry

// errWorkspace marks an error as the pod's staging failing, unless it
// already carries a sentinel.
func errWorkspace(err error) error {
	for _, s := range []error{codeexec.ErrInvalidRequest, codeexec.ErrWorkspace, codeexec.ErrStart, codeexec.ErrSandboxUnavailable} {
		if errors.Is(err, s) {
			return err
		}
	}
	return fmt.Errorf("%w: staging: %w", codeexec.ErrWorkspace, err)
}
