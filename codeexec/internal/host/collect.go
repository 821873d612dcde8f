package host

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/adkskills/adkskills/codeexec"
)

// Bounds of one collection walk: however many entries and however deep a
// script nests its folders, the walk, the Result and the model's response
// stay bounded.
// (MaxOmittedListed and MaxCollectedEntries, in omitted.go, bound every
// executor's.)
const (
	// maxWalkDepth is how deep the walk descends below the skill root.
	maxWalkDepth = 64
	// maxOutputPathBytes bounds the path of an output file; a longer one is
	// omitted (its name would swamp the response), listed cut short.
	maxOutputPathBytes = 1024
)

// ReasonReplaced is the Omitted reason when the script replaced its working
// directory (renamed it away, put a link or another folder in its place):
// nothing of it is collected.
const ReasonReplaced = "the skill root was replaced: nothing from it was saved"

// collect returns the regular files under the skill root, opened as root
// before the run, that the run created or changed, sorted by path and
// within lim, and the entries it left out with the reason. Every level of
// the walk and every file is opened relative to the handle of its parent
// without following symbolic links, so a link the script planted (to
// /etc/passwd, to /proc/self, to another run's workspace), at any depth, is
// reported in the omitted list and never read. Files are taken in the
// walk's order (each folder's entries by name, depth first), so the same
// tree always gives the same files when a limit is reached. Reasons never
// name a host path.
func collect(root dirHandle, snap snapshot, lim codeexec.FileLimits) ([]codeexec.File, []codeexec.OmittedFile) {
	w := &walker{snap: snap, lim: lim}
	w.walk(root, "", 0)
	slices.SortFunc(w.files, func(a, b codeexec.File) int { return strings.Compare(a.Path, b.Path) })
	return w.files, w.om.List()
}

// walker walks one skill root, collecting as it goes.
type walker struct {
	om      Omissions
	snap    snapshot
	lim     codeexec.FileLimits
	files   []codeexec.File
	total   int64 // bytes of files
	entries int
	stopped bool
}

// walk visits dir, whose path below the skill root is rel ("" for the
// root), depth levels down.
func (w *walker) walk(dir dirHandle, rel string, depth int) {
	if w.stopped {
		return
	}
	// Entries count when they are read, not when they are visited, so the
	// names held by every folder of the walk's path together stay within
	// MaxCollectedEntries.
	names, more, err := dir.names(MaxCollectedEntries - w.entries)
	w.entries += len(names)
	if more {
		w.stopped = true
		w.om.Stopped(orDot(rel))
	}
	if err != nil {
		w.om.Add(codeexec.OmittedFile{Path: orDot(rel), Reason: "unreadable folder: " + ErrText(err)})
		return
	}
	slices.Sort(names)
	for _, name := range names {
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		info, err := dir.lstat(name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.om.Add(codeexec.OmittedFile{Path: shortPath(p), Reason: "unreadable: " + ErrText(err)})
			}
			continue
		}
		switch t := info.Mode().Type(); {
		case t.IsDir():
			if depth+1 >= maxWalkDepth {
				w.om.Add(codeexec.OmittedFile{Path: shortPath(p), Reason: fmt.Sprintf("folder nested deeper than %d levels: not looked at", maxWalkDepth)})
				continue
			}
			sub, err := dir.openDir(name)
			if err != nil {
				w.om.Add(codeexec.OmittedFile{Path: shortPath(p), Reason: "unreadable folder: " + ErrText(err)})
				continue
			}
			w.walk(sub, p, depth+1)
			sub.close()
		case t&fs.ModeSymlink != 0:
			w.om.Add(codeexec.OmittedFile{Path: shortPath(p), Reason: "symbolic link: not followed"})
		case !t.IsRegular():
			w.om.Add(codeexec.OmittedFile{Path: shortPath(p), Reason: fmt.Sprintf("not a regular file (%v)", t)})
		default:
			w.file(dir, name, p, info)
		}
	}
}

// file takes the regular file name of dir (at p, seen as info) when the run
// created or changed it and it fits the limits.
func (w *walker) file(dir dirHandle, name, p string, info fs.FileInfo) {
	size := info.Size()
	same, data := w.snap.unchanged(p, info, func() ([]byte, error) {
		return readRegular(dir, name, info, size)
	})
	lim := w.lim
	switch {
	case same:
		return
	case len(p) > maxOutputPathBytes:
		w.om.Add(codeexec.OmittedFile{Path: shortPath(p), Size: size, Reason: fmt.Sprintf("path longer than %d bytes: not saved", maxOutputPathBytes)})
		return
	}
	if why := Refusal(lim, len(w.files), w.total, size); why != "" {
		w.om.Add(codeexec.OmittedFile{Path: p, Size: size, Reason: why})
		return
	}
	if data == nil {
		var err error
		if data, err = readRegular(dir, name, info, min(lim.MaxFileBytes, lim.MaxTotalBytes-w.total)); err != nil {
			w.om.Add(codeexec.OmittedFile{Path: p, Size: size, Reason: err.Error()})
			return
		}
	}
	w.total += int64(len(data))
	w.files = append(w.files, codeexec.File{Path: p, Data: data, Mode: info.Mode().Perm()})
}

// readRegular reads the regular file name of dir, which the walk saw as
// info, reading at most max bytes. It fails when name is no longer that file
// (a symbolic link or another file swapped in) or grew past max.
func readRegular(dir dirHandle, name string, info fs.FileInfo, max int64) ([]byte, error) {
	f, err := dir.openFile(name)
	if err != nil {
		return nil, fmt.Errorf("unreadable: %s", ErrText(err))
	}
	defer f.Close()
	got, err := statFile(f)
	if err != nil {
		return nil, fmt.Errorf("unreadable: %s", ErrText(err))
	}
	if !got.Mode().IsRegular() || idOf(got) != idOf(info) {
		return nil, fmt.Errorf("replaced while being collected")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("unreadable: %s", ErrText(err))
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("grew past %d bytes while being collected", max)
	}
	return data, nil
}

// ErrText is err's message without the host path a *PathError carries.
func ErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// orDot is rel, or "." for the skill root.
func orDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// shortPath cuts p to maxOutputPathBytes at a character boundary, marking
// the cut with "…".
func shortPath(p string) string {
	if len(p) <= maxOutputPathBytes {
		return p
	}
	cut := maxOutputPathBytes
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "…"
}

// nameBatch is how many names readNames asks the directory for at a time.
const nameBatch = 1024

// readNames reads at most limit names of the open directory f in batches;
// more reports that f had names left.
func readNames(f *os.File, limit int) (names []string, more bool, err error) {
	for {
		batch, err := f.Readdirnames(min(nameBatch, limit-len(names)+1))
		names = append(names, batch...)
		if len(names) > limit {
			return names[:limit], true, nil
		}
		if err == io.EOF || (err == nil && len(batch) == 0) {
			return names, false, nil
		}
		if err != nil {
			return names, false, err
		}
	}
}

// deleted returns, sorted, the paths of the request's extra files (the
// records of snap that hold staged data) that are no longer regular files
// under root, looked at from root's handle one folder at a time without
// following a link: a path that is missing, under a folder that is gone or
// became a link or a file, or that is now a folder, a link or a special
// file is deleted. A path that cannot be looked at (an unreadable folder)
// is not: only what is known to be gone is listed.
func deleted(root dirHandle, snap snapshot) []string {
	var out []string
	for p, rec := range snap {
		if rec.data != nil && gone(root, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// gone reports whether p, below root, is known to be no longer a regular
// file. It holds one folder open at a time besides root.
func gone(root dirHandle, p string) bool {
	dir := root
	defer func() {
		if dir != root {
			dir.close()
		}
	}()
	for {
		first, rest, sub := strings.Cut(p, "/")
		info, err := dir.lstat(first)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return true
		case err != nil:
			return false
		case !sub:
			return !info.Mode().IsRegular()
		case !info.IsDir():
			return true
		}
		next, err := dir.openDir(first)
		if err != nil {
			return false
		}
		if dir != root {
			dir.close()
		}
		dir, p = next, rest
	}
}
