package skillfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/internal/valid"
)

// MaxListedScripts bounds the runnable files a message names (the
// SCRIPT_NOT_FOUND answer, adkskills list): entry points first, and the
// message says how many more there are.
const MaxListedScripts = 10

// MaxGuardScanBytes bounds how much of a file is searched for a
// `if __name__ == "__main__":` guard.
const MaxGuardScanBytes = 1 << 20

// Script is a file of a skill folder that an interpreter of the table runs.
type Script struct {
	// Path is relative to the skill root, with "/" separators.
	Path string
	// Entry reports an entry point: a file directly in scripts/ (but a
	// package's __init__.py), an executable file, or one with a #! line or
	// a __main__ guard. The others are helper modules and templates.
	Entry bool
}

// Table is what skillfs needs of an executor's interpreter table:
// codeexec.Interpreters implements it.
type Table interface {
	// Runs reports why the table cannot run the file p whose first bytes
	// are head (nil: it runs it); with a nil head only the extension counts.
	Runs(p string, head []byte) error
	// Supported says, for messages, which files the table runs.
	Supported() string
}

// Head returns the start of a skill's file, enough for its #! line.
func Head(ctx context.Context, src skill.Source, name, p string) ([]byte, error) {
	rc, err := src.LoadResource(ctx, name, p)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return valid.ReadHead(rc)
}

// Scripts lists the files of the skill name that the table runs (by
// extension, or by #! line), entry points first, each
// group in path order. Every file is opened: its head is read for a #!
// line, and a runnable file that is not yet known to be an entry point is
// searched for a __main__ guard (at most MaxGuardScanBytes of it).
func Scripts(ctx context.Context, src skill.Source, name string, table Table) ([]Script, error) {
	paths, err := src.ListResources(ctx, name, "")
	if err != nil {
		return nil, err
	}
	var out []Script
	for _, p := range paths {
		if p == SkillFile {
			continue
		}
		s, ok, err := classify(ctx, src, name, p, table)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if ok {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Script) int {
		switch {
		case a.Entry == b.Entry:
			return strings.Compare(a.Path, b.Path)
		case a.Entry:
			return -1
		}
		return 1
	})
	return out, nil
}

// classify opens one file and says whether the table runs it and whether
// it is an entry point.
func classify(ctx context.Context, src skill.Source, name, p string, table Table) (Script, bool, error) {
	rc, err := src.LoadResource(ctx, name, p)
	if err != nil {
		return Script{}, false, err
	}
	defer rc.Close()
	head, err := valid.ReadHead(rc)
	if err != nil {
		return Script{}, false, err
	}
	if table.Runs(p, head) != nil {
		return Script{}, false, nil
	}
	s := Script{Path: p}
	_, shebang := valid.Shebang(head)
	s.Entry = shebang || inScripts(p) || executable(rc)
	if !s.Entry {
		s.Entry, err = hasMainGuard(io.MultiReader(bytes.NewReader(head), io.LimitReader(rc, MaxGuardScanBytes-int64(len(head)))))
	}
	return s, true, err
}

// inScripts reports a file directly in scripts/, but a package's
// __init__.py, which is a module.
func inScripts(p string) bool {
	return path.Dir(p) == "scripts" && path.Base(p) != "__init__.py"
}

// executable reports a file with an execute bit, when the source can tell.
func executable(rc io.ReadCloser) bool {
	st, ok := rc.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := st.Stat()
	return err == nil && fi.Mode().Perm()&0o111 != 0
}

// hasMainGuard reports a line that starts `if __name__` and names
// "__main__": a Python module written to be run.
func hasMainGuard(r io.Reader) (bool, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if bytes.HasPrefix(line, []byte("if __name__")) && bytes.Contains(line, []byte("__main__")) {
			return true, nil
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return false, nil // a minified or binary file: no guard
	}
	return false, sc.Err()
}

// AnyScript reports whether the skill name has a file the table runs,
// looking at extensions first and opening files for their #! line only
// when no extension answers.
func AnyScript(ctx context.Context, src skill.Source, name string, table Table) (bool, error) {
	paths, err := src.ListResources(ctx, name, "")
	if err != nil {
		return false, err
	}
	for _, p := range paths {
		if table.Runs(p, nil) == nil {
			return true, nil
		}
	}
	for _, p := range paths {
		if p == SkillFile {
			continue
		}
		head, err := Head(ctx, src, name, p)
		if err != nil {
			continue // a file that cannot be read is not a script
		}
		if table.Runs(p, head) == nil {
			return true, nil
		}
	}
	return false, nil
}

// ListScripts names at most MaxListedScripts of scripts (as Scripts orders
// them: entry points first) and says what it leaves out: "scripts/a.py,
// scripts/b.py and 4 more not listed (helper modules and templates)".
func ListScripts(scripts []Script) string {
	n := min(len(scripts), MaxListedScripts)
	names := make([]string, 0, n)
	for _, s := range scripts[:n] {
		names = append(names, s.Path)
	}
	text := strings.Join(names, ", ")
	cut := scripts[n:]
	if len(cut) == 0 {
		return text
	}
	entries := 0
	for _, s := range cut {
		if s.Entry {
			entries++
		}
	}
	var what string
	switch helpers := len(cut) - entries; {
	case helpers == 0:
		what = "entry points"
	case entries == 0:
		what = "helper modules and templates"
	default:
		what = fmt.Sprintf("%s, %s", plural(entries, "entry point"), plural(helpers, "helper module or template", "helper modules and templates"))
	}
	return fmt.Sprintf("%s and %d more not listed (%s)", text, len(cut), what)
}

// plural formats "1 entry point", "2 entry points"; many defaults to one+"s".
func plural(n int, one string, many ...string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}
