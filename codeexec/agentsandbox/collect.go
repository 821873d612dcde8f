package agentsandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// listFormat makes GNU find print, for every entry under the skill root
// without following links, its type letter, its size, its stamp (inode,
// modification and change times) and its path, NUL-terminated (any byte
// but NUL may be in a name).
const listFormat = `%y %s %i:%T@:%C@ %P\0`

// tarCreate makes GNU tar archive the NUL-separated paths on stdin, each as
// what it is: a link or a FIFO is stored as such, never opened.
var tarCreate = []string{"tar", "-c", "-f", "-", "--no-recursion", "--null", "--verbatim-files-from", "-T", "-"}

// listed is one entry of the skill root as find saw it.
type listed struct {
	path  string
	kind  byte // find's %y letter
	size  int64
	stamp string // inode:mtime:ctime
}

// candidate is a regular file the run created or changed.
type candidate struct {
	path string
	size int64
}

// collect returns the regular files under the skill root that the run
// created or changed, sorted by path and within j's limits, the entries it
// left out with the reason, and the request's extra files that are no
// longer regular files: the host executors' rules, applied in the pod. It
// never follows a link: find reports a link as one, tar stores it as one.
func (p *pod) collect(ctx context.Context, j *job) ([]codeexec.File, []codeexec.OmittedFile, []string) {
	var om host.Omissions
	entries, stopped, err := p.list(ctx, j)
	if err != nil {
		om.Add(codeexec.OmittedFile{Path: ".", Reason: fmt.Sprintf("skill root unreadable: %v", err)})
		return nil, om.List(), nil
	}
	if stopped {
		om.Stopped(".")
	}
	var cands []candidate
	var maybeSame []string // staged files of their staged size: compare the bytes
	regular := map[string]bool{}
	for _, e := range entries {
		if e.kind == 'f' {
			regular[e.path] = true
		}
		switch e.kind {
		case 'd':
			continue
		case 'l':
			om.Add(codeexec.OmittedFile{Path: e.path, Reason: "symbolic link: not followed"})
			continue
		case 'f':
		default:
			om.Add(codeexec.OmittedFile{Path: e.path, Reason: fmt.Sprintf("not a regular file (%v)", kindMode(e.kind))})
			continue
		}
		if orig, staged := j.snap[e.path]; staged && orig.size == e.size {
			// A write moves the change time (which no script can set)
			// and the modification time; a rename the inode.
			if orig.stamp == "" || orig.stamp != e.stamp {
				maybeSame = append(maybeSame, e.path)
			}
			continue
		}
		cands = append(cands, candidate{path: e.path, size: e.size})
	}
	if len(maybeSame) > 0 {
		changed, err := p.changed(ctx, j, maybeSame, &om)
		if err != nil {
			om.Add(codeexec.OmittedFile{Path: ".", Reason: fmt.Sprintf("staged files unreadable: %v", err)})
		}
		cands = append(cands, changed...)
	}
	slices.SortFunc(cands, func(a, b candidate) int { return strings.Compare(a.path, b.path) })
	selected := choose(cands, j.limits.Output, &om)
	files := p.fetch(ctx, j, selected, &om)
	return files, om.List(), deletedExtras(j.req.Files, regular, stopped)
}

// deletedExtras returns, sorted, the paths of extra that are not among the
// regular files find listed: find does not descend into a link, so a file
// under a folder that became one is not listed either. A listing that
// stopped early tells nothing of what it did not reach: none is returned.
func deletedExtras(extra []codeexec.File, regular map[string]bool, stopped bool) []string {
	if stopped {
		return nil
	}
	var out []string
	for _, f := range extra {
		if !regular[f.Path] {
			out = append(out, f.Path)
		}
	}
	slices.Sort(out)
	return out
}

// choose applies the output limits in path order, as the host executors do.
func choose(cands []candidate, lim codeexec.FileLimits, om *host.Omissions) []candidate {
	var out []candidate
	var total int64
	for _, c := range cands {
		if why := host.Refusal(lim, len(out), total, c.size); why != "" {
			om.Add(codeexec.OmittedFile{Path: c.path, Size: c.size, Reason: why})
			continue
		}
		total += c.size
		out = append(out, c)
	}
	return out
}

// list runs find in the skill root and returns at most
// host.MaxCollectedEntries of its entries, and whether it left some
// out.
func (p *pod) list(ctx context.Context, j *job) ([]listed, bool, error) {
	var l lister
	pr, err := p.start(ctx, proc{
		argv:   argv([]string{"PATH=" + p.helperPATH()}, "find", ".", "-mindepth", "1", "-printf", listFormat),
		cwd:    j.skillName,
		stdout: &splitWriter{sep: 0, line: l.record},
		stderr: io.Discard,
	})
	switch {
	case err != nil:
		return nil, false, err
	case l.err != nil:
		return nil, false, l.err
	case pr.exit != 0 && len(l.entries) == 0:
		return nil, false, fmt.Errorf("find exited %d", pr.exit)
	}
	return l.entries, l.stopped, nil
}

// lister keeps the first host.MaxCollectedEntries records find prints
// and notes whether there were more.
type lister struct {
	entries []listed
	stopped bool
	err     error
}

func (l *lister) record(rec []byte) {
	if len(l.entries) == host.MaxCollectedEntries {
		l.stopped = true
		return
	}
	e, err := parseListed(rec)
	if err != nil {
		l.err = err
		return
	}
	l.entries = append(l.entries, e)
}

// parseListed parses "TYPE SIZE STAMP PATH".
func parseListed(rec []byte) (listed, error) {
	kind, rest, ok1 := bytes.Cut(rec, []byte{' '})
	size, rest, ok2 := bytes.Cut(rest, []byte{' '})
	stamp, name, ok3 := bytes.Cut(rest, []byte{' '})
	n, err := strconv.ParseInt(string(size), 10, 64)
	if !ok1 || !ok2 || !ok3 || len(kind) != 1 || err != nil || len(stamp) == 0 || len(name) == 0 {
		return listed{}, fmt.Errorf("find printed %q", rec)
	}
	return listed{path: string(name), kind: kind[0], size: n, stamp: string(stamp)}, nil
}

// kindMode maps find's %y letter to the file mode type Local reports.
func kindMode(k byte) fs.FileMode {
	switch k {
	case 'p':
		return fs.ModeNamedPipe
	case 's':
		return fs.ModeSocket
	case 'b':
		return fs.ModeDevice
	case 'c':
		return fs.ModeDevice | fs.ModeCharDevice
	}
	return fs.ModeIrregular
}

// changed returns those of paths (staged files that kept their size) whose
// bytes differ from what was staged: their digest is not the staged one.
func (p *pod) changed(ctx context.Context, j *job, paths []string, om *host.Omissions) ([]candidate, error) {
	var out []candidate
	err := p.archive(ctx, j, paths, func(hdr *tar.Header, r io.Reader) {
		name := hdr.Name
		if hdr.Typeflag != tar.TypeReg {
			om.Add(codeexec.OmittedFile{Path: name, Reason: "replaced while being collected"})
			return
		}
		orig, ok := j.snap[name]
		if !ok {
			return
		}
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil || hdr.Size != orig.size || [sha256.Size]byte(h.Sum(nil)) != orig.sum {
			out = append(out, candidate{path: name, size: hdr.Size})
		}
	})
	return out, err
}

// fetch reads the selected files out of the pod.
func (p *pod) fetch(ctx context.Context, j *job, sel []candidate, om *host.Omissions) []codeexec.File {
	if len(sel) == 0 {
		return nil
	}
	want := make(map[string]bool, len(sel))
	paths := make([]string, len(sel))
	for i, c := range sel {
		want[c.path], paths[i] = true, c.path
	}
	var files []codeexec.File
	var total int64
	err := p.archive(ctx, j, paths, func(hdr *tar.Header, r io.Reader) {
		name := hdr.Name
		if !want[name] {
			return
		}
		delete(want, name)
		room := min(j.limits.Output.MaxFileBytes, j.limits.Output.MaxTotalBytes-total)
		switch {
		case hdr.Typeflag != tar.TypeReg:
			om.Add(codeexec.OmittedFile{Path: name, Reason: "replaced while being collected"})
			return
		case hdr.Size > room:
			om.Add(codeexec.OmittedFile{Path: name, Size: hdr.Size, Reason: fmt.Sprintf("grew past %d bytes while being collected", room)})
			return
		}
		data := make([]byte, hdr.Size)
		if _, err := io.ReadFull(r, data); err != nil {
			om.Add(codeexec.OmittedFile{Path: name, Size: hdr.Size, Reason: fmt.Sprintf("unreadable: %v", err)})
			return
		}
		total += hdr.Size
		files = append(files, codeexec.File{Path: name, Data: data, Mode: fs.FileMode(hdr.Mode).Perm()})
	})
	reason := "unreadable: gone while being collected"
	if err != nil {
		reason = fmt.Sprintf("unreadable: %v", err)
	}
	for _, c := range sel {
		if want[c.path] {
			om.Add(codeexec.OmittedFile{Path: c.path, Size: c.size, Reason: reason})
		}
	}
	slices.SortFunc(files, func(a, b codeexec.File) int { return strings.Compare(a.Path, b.Path) })
	return files
}

// archive runs tar in the skill root on paths and calls each for every
// member, with its content. The archive is read as it streams; each's
// reader is drained after it returns.
func (p *pod) archive(ctx context.Context, j *job, paths []string, each func(*tar.Header, io.Reader)) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		tr := tar.NewReader(pr)
		var err error
		for {
			var hdr *tar.Header
			if hdr, err = tr.Next(); err != nil {
				break
			}
			hdr.Name = strings.TrimPrefix(hdr.Name, "./")
			each(hdr, tr)
		}
		_, _ = io.Copy(io.Discard, pr) // keep the stream moving whatever happened
		if err == io.EOF {
			err = nil
		}
		done <- err
	}()
	_, err := p.start(ctx, proc{
		argv: argv([]string{"PATH=" + p.helperPATH()}, tarCreate...),
		cwd:  j.skillName,
		stdin: func(w io.Writer) error {
			for _, path := range paths {
				if _, err := io.WriteString(w, path+"\x00"); err != nil {
					return err
				}
			}
			return nil
		},
		stdout: pw,
		stderr: io.Discard,
	})
	pw.CloseWithError(err)
	if rerr := <-done; err == nil {
		err = rerr
	}
	return err
}

// splitWriter calls line for every sep-terminated record written to it.
type splitWriter struct {
	sep  byte
	buf  []byte
	line func([]byte)
}

func (w *splitWriter) Write(b []byte) (int, error) {
	n := len(b)
	for {
		i := bytes.IndexByte(b, w.sep)
		if i < 0 {
			w.buf = append(w.buf, b...)
			return n, nil
		}
		w.line(append(w.buf, b[:i]...))
		w.buf, b = w.buf[:0], b[i+1:]
	}
}
