package codeexec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// maxOmittedListed bounds Result.Omitted: a run that writes more files than
// that gets one more entry, with an empty Path, counting the rest.
const maxOmittedListed = 1000

// snapshot is the skill root before the run: the content of every staged
// file by path. A file is an output when it is not in the snapshot or its
// content differs: comparing bytes, not size and mtime, catches a rewrite
// within the file system's timestamp granularity.
type snapshot map[string][]byte

// snapshotOf records what staging wrote for req.
func snapshotOf(req *Request) snapshot {
	s := make(snapshot, len(req.Files))
	for _, f := range req.Files {
		s[f.Path] = f.Data
	}
	return s
}

// candidate is a regular file the run created or changed.
type candidate struct {
	path string
	info fs.FileInfo // from Lstat during the walk
	data []byte      // already read (a staged file compared), or nil
}

// collect returns the regular files under skillDir that the run created or
// changed, sorted by path and within lim, and the entries it left out with
// the reason. It reads through an os.Root on skillDir and never follows a
// symbolic link: a link the script planted (to /etc/passwd, to a file or a
// directory outside) is reported in the omitted list, not read.
func collect(skillDir string, snap snapshot, lim OutputLimits) ([]File, []OmittedFile) {
	var om omissions
	root, err := os.OpenRoot(skillDir)
	if err != nil {
		om.add(OmittedFile{Path: ".", Reason: fmt.Sprintf("skill root unreadable: %v", err)})
		return nil, om.list()
	}
	defer root.Close()

	var cands []candidate
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != "." {
				om.add(OmittedFile{Path: p, Reason: fmt.Sprintf("unreadable: %v", unwrapPathError(err))})
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			om.add(OmittedFile{Path: p, Reason: "symbolic link: not followed"})
			return nil
		case !t.IsRegular():
			om.add(OmittedFile{Path: p, Reason: fmt.Sprintf("not a regular file (%v)", t.Type())})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				om.add(OmittedFile{Path: p, Reason: fmt.Sprintf("unreadable: %v", unwrapPathError(err))})
			}
			return nil
		}
		c := candidate{path: p, info: info}
		if orig, staged := snap[p]; staged && info.Size() == int64(len(orig)) {
			data, err := readRegular(root, p, info, info.Size())
			if err == nil && bytes.Equal(data, orig) {
				return nil // unchanged
			}
			c.data = data // nil on error: read again below, which reports it
		}
		cands = append(cands, c)
		return nil
	})

	slices.SortFunc(cands, func(a, b candidate) int { return strings.Compare(a.path, b.path) })
	lim = lim.withDefaults()
	var files []File
	var total int64
	for _, c := range cands {
		size := c.info.Size()
		switch {
		case size > lim.MaxFileBytes:
			om.add(OmittedFile{Path: c.path, Size: size, Reason: fmt.Sprintf("larger than the %d-byte limit per file", lim.MaxFileBytes)})
			continue
		case len(files) >= lim.MaxFiles:
			om.add(OmittedFile{Path: c.path, Size: size, Reason: fmt.Sprintf("over the limit of %d files per run", lim.MaxFiles)})
			continue
		case total+size > lim.MaxTotalBytes:
			om.add(OmittedFile{Path: c.path, Size: size, Reason: fmt.Sprintf("over the %d-byte limit for all files of a run", lim.MaxTotalBytes)})
			continue
		}
		data := c.data
		if data == nil {
			var err error
			data, err = readRegular(root, c.path, c.info, min(lim.MaxFileBytes, lim.MaxTotalBytes-total))
			if err != nil {
				om.add(OmittedFile{Path: c.path, Size: size, Reason: err.Error()})
				continue
			}
		}
		total += int64(len(data))
		files = append(files, File{Path: c.path, Data: data, Mode: c.info.Mode().Perm()})
	}
	return files, om.list()
}

// readRegular reads the regular file p of root, which the walk saw as info,
// reading at most max bytes. It fails when p is no longer that file (a
// symbolic link or another file swapped in) or grew past max.
func readRegular(root *os.Root, p string, info fs.FileInfo, max int64) ([]byte, error) {
	// O_NONBLOCK: a named pipe swapped in cannot block the open.
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("unreadable: %v", unwrapPathError(err))
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("unreadable: %v", unwrapPathError(err))
	}
	if !got.Mode().IsRegular() || !os.SameFile(got, info) {
		return nil, fmt.Errorf("replaced while being collected")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("unreadable: %v", unwrapPathError(err))
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("grew past %d bytes while being collected", max)
	}
	return data, nil
}

// unwrapPathError drops the *PathError wrapper, whose path is a host path
// inside the workspace.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// withDefaults replaces zero limits by their Default constants.
func (l OutputLimits) withDefaults() OutputLimits {
	if l.MaxFiles == 0 {
		l.MaxFiles = DefaultMaxOutputFiles
	}
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = DefaultMaxOutputFileBytes
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = DefaultMaxOutputTotalBytes
	}
	return l
}

// omissions accumulates omitted entries, listing at most maxOmittedListed.
type omissions struct {
	listed []OmittedFile
	more   int
	size   int64
}

func (o *omissions) add(f OmittedFile) {
	if len(o.listed) < maxOmittedListed {
		o.listed = append(o.listed, f)
		return
	}
	o.more++
	o.size += f.Size
}

// list returns the entries sorted by path, plus the count of the rest.
func (o *omissions) list() []OmittedFile {
	slices.SortFunc(o.listed, func(a, b OmittedFile) int { return strings.Compare(a.Path, b.Path) })
	if o.more > 0 {
		o.listed = append(o.listed, OmittedFile{Size: o.size, Reason: fmt.Sprintf("%d more omitted files not listed", o.more)})
	}
	return o.listed
}
