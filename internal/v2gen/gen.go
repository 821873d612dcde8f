package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The ADK import path of the root, and the suffix both module paths take in
// v2.
const (
	adkPath     = "google.golang.org/adk"
	majorSuffix = "/v2"
)

// Config says what to generate.
type Config struct {
	// Module is the root module's path, github.com/adkskills/adkskills.
	Module string
	// ADKVersion is the google.golang.org/adk/v2 version v2 requires
	// (v2.2.0).
	ADKVersion string
	// Out is the output directory, slash-separated and relative to the root
	// (v2).
	Out string
	// Exclude lists directories, slash-separated and relative to the root,
	// left out of v2 with everything in them.
	Exclude []string
	// Shared are the directories of the nested modules (slash-separated,
	// relative to the root): modules of their own that touch no ADK, which
	// both majors use at the same import paths. Plan fills it.
	Shared []string
}

// File is one file of the generated tree.
type File struct {
	// Data is the file's content.
	Data []byte
	// Mode is 0o644 or, for a file the root has executable, 0o755.
	Mode fs.FileMode
	// Link, when set, makes the file a symbolic link to Link; Data and Mode
	// are unused.
	Link string
}

// errADK2Constraint is the error of a per-major ADK v2 file that the root
// build would compile.
var errADK2Constraint = errors.New(`an _adk2 file must start with the constraint "//go:build ignore" (and no other), so that the root module never builds it`)

// Plan computes the tree v2 must hold, keyed by slash-separated path
// relative to the output directory, and the nested modules it shares: the
// directories (slash-separated, relative to the root, in path order) that
// hold a go.mod of their own. They are not mirrored, and imports of their
// packages are kept as they are.
func Plan(root string, cfg Config) (map[string]File, []string, error) {
	if cfg.Module == "" || cfg.Out == "" {
		return nil, nil, fmt.Errorf("plan: Module and Out are required")
	}
	skip := map[string]bool{cfg.Out: true}
	for _, d := range cfg.Exclude {
		skip[path.Clean(d)] = true
	}
	modules, err := nestedModules(root, skip)
	if err != nil {
		return nil, nil, fmt.Errorf("plan: %w", err)
	}
	cfg.Shared = modules
	files := make(map[string]File)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		name := d.Name()
		hidden := strings.HasPrefix(name, ".") && !inTestdata(rel)
		if d.IsDir() {
			if hidden || skip[rel] || slices.Contains(modules, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if hidden || (!strings.Contains(rel, "/") && !topLevel(name)) {
			return nil
		}
		f, ok, err := planFile(p, rel, d, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if ok {
			files[rel] = f
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("plan: %w", err)
	}
	files["README.md"] = File{Data: readme(cfg, modules), Mode: 0o644}
	return files, modules, nil
}

// nestedModules lists the directories below root, outside test data and
// skip, that hold a go.mod of their own, in path order.
func nestedModules(root string, skip map[string]bool) ([]string, error) {
	var modules []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), ".") || skip[rel] || d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if _, err := os.Lstat(filepath.Join(p, "go.mod")); err == nil {
			modules = append(modules, rel)
		}
		return nil
	})
	return modules, err
}

// topLevel reports whether a file at the root's top level is mirrored: Go
// files and licenses are; go.mod, go.sum, README.md and the rest belong to
// the root module.
func topLevel(name string) bool {
	return strings.HasSuffix(name, ".go") || strings.HasPrefix(name, "LICENSE") || strings.HasPrefix(name, "COPYING")
}

// inTestdata reports whether rel is inside a testdata directory, where
// every file is test input, hidden ones included.
func inTestdata(rel string) bool {
	dir, _ := path.Split(rel)
	return slices.Contains(strings.Split(dir, "/"), "testdata")
}

// planFile computes the generated form of one root file; ok is false for a
// file v2 leaves out.
func planFile(p, rel string, d fs.DirEntry, cfg Config) (File, bool, error) {
	info, err := d.Info()
	if err != nil {
		return File{}, false, err
	}
	switch mode := info.Mode(); {
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		return File{Link: target}, err == nil, err
	case !mode.IsRegular():
		return File{}, false, fmt.Errorf("not a regular file (%v)", mode.Type())
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return File{}, false, err
	}
	if !strings.HasSuffix(rel, ".go") || inTestdata(rel) {
		m := fs.FileMode(0o644)
		if info.Mode()&0o111 != 0 {
			m = 0o755
		}
		return File{Data: data, Mode: m}, true, nil
	}
	maj := Major(path.Base(rel))
	if maj == 1 {
		return File{}, false, nil
	}
	if maj == 0 && !strings.HasSuffix(rel, "_test.go") {
		if err := checkShared(rel, data); err != nil {
			return File{}, false, err
		}
	}
	out, err := Transform(rel, data, cfg.Module, cfg.Shared, maj == 2)
	if err != nil {
		return File{}, false, err
	}
	return File{Data: out, Mode: 0o644}, true, nil
}

// Major is the ADK major a Go file's name ties it to: 1 for name_adk1.go, 2
// for name_adk2.go (an _adkN element may be followed by the GOOS, GOARCH
// and _test elements: name_adk2_linux_test.go), 0 for a file both share.
func Major(name string) int {
	elems := strings.Split(strings.TrimSuffix(name, ".go"), "_")
	for _, e := range elems[1:] {
		switch e {
		case "adk1":
			return 1
		case "adk2":
			return 2
		}
	}
	return 0
}

// Transform rewrites one Go file for v2: import paths of the root module
// and of ADK move under /v2, the root module's path moves in comments and
// other strings too (a path into a shared nested module, whose directory
// shared names, stays), the generated-code header names the root file, and
// the result is gofmt-formatted. An ADK v2 file (adk2) loses its
// "//go:build ignore" constraint, which it must have.
func Transform(rel string, src []byte, module string, shared []string, adk2 bool) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var edits []edit
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	imports := make(map[*ast.BasicLit]bool)
	for _, imp := range f.Imports {
		imports[imp.Path] = true
		lit := rewritePath(rewritePath(imp.Path.Value, module, shared...), adkPath)
		edits = append(edits, edit{off(imp.Path.Pos()), off(imp.Path.End()), lit})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && !imports[lit] {
			edits = append(edits, edit{off(lit.Pos()), off(lit.End()), rewritePath(lit.Value, module, shared...)})
		}
		return true
	})
	constraint := false
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if adk2 && c.Pos() < f.Package && strings.HasPrefix(c.Text, "//go:build") {
				if strings.TrimSpace(c.Text) != "//go:build ignore" {
					return nil, errADK2Constraint
				}
				constraint = true
				edits = append(edits, edit{off(c.Pos()), off(c.End()), ""})
				continue
			}
			edits = append(edits, edit{off(c.Pos()), off(c.End()), rewritePath(c.Text, module, shared...)})
		}
	}
	if adk2 && !constraint {
		return nil, errADK2Constraint
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/v2gen from %s in the root module. DO NOT EDIT.\n\n", rel)
	b.Write(apply(src, edits))
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format: %w", err)
	}
	if err := checkImports(rel, out, module, shared); err != nil {
		return nil, err
	}
	return out, nil
}

// errArtifactsCall is the error of shared code that asks a context for its
// artifacts directly.
var errArtifactsCall = errors.New("calls Artifacts() on a context: call adkglue.Artifacts(ctx) instead (in ADK v2 a tool context's Artifacts() is never nil, and without an artifact service its methods panic)")

// checkShared fails when shared, non-test code does what only one place
// may: ask a context for Artifacts(). That place is a function named
// Artifacts (adkglue.Artifacts), which knows how each major says "no
// artifact service".
func checkShared(rel string, src []byte) error {
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	var found error
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			return n.Name.Name != "Artifacts"
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Artifacts" && len(n.Args) == 0 {
				found = errArtifactsCall
			}
		}
		return found == nil
	})
	return found
}

// checkImports fails when a generated file still imports the root module
// (but a shared nested module) or ADK v1: the two majors cannot share a
// build.
func checkImports(rel string, src []byte, module string, shared []string) error {
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.ImportsOnly)
	if err != nil {
		return err
	}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return err
		}
		for _, old := range []string{module, adkPath} {
			if rewritePath(p, old, shared...) != p {
				return fmt.Errorf("generated file still imports %s", p)
			}
		}
	}
	return nil
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// apply applies non-overlapping edits to src.
func apply(src []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var b bytes.Buffer
	last := 0
	for _, e := range edits {
		b.Write(src[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(src[last:])
	return b.Bytes()
}

// rewritePath moves every mention of the module path old (old itself, or
// old/sub/pkg) in s under old/v2; a mention already under old/v2, of a
// longer path (old-python, oldx/...), or of old/D/... for a directory D in
// shared (a nested module both majors use) is left alone.
func rewritePath(s, old string, shared ...string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(old)
		b.WriteString(s[:j])
		rest := s[j:]
		whole := (i == 0 || !isPathByte(s[i-1]) && s[i-1] != '/') && endsElement(rest)
		done := strings.HasPrefix(rest, majorSuffix) && endsElement(rest[len(majorSuffix):])
		for _, d := range shared {
			if sub := "/" + d; strings.HasPrefix(rest, sub) && endsElement(rest[len(sub):]) {
				done = true
			}
		}
		if whole && !done {
			b.WriteString(majorSuffix)
		}
		s = rest
	}
}

// endsElement reports whether a path element ends where rest starts: at the
// end, at a slash, or before a character no path has (a full stop that ends
// a sentence included).
func endsElement(rest string) bool {
	switch {
	case rest == "" || rest[0] == '/':
		return true
	case rest[0] == '.':
		return len(rest) == 1 || !isPathByte(rest[1])
	default:
		return !isPathByte(rest[0])
	}
}

func isPathByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0
}

// readme is v2/README.md.
func readme(cfg Config, modules []string) []byte {
	b := fmt.Appendf(nil, "# adkskills for ADK Go v2\n\n"+
		"`%[1]s%[2]s` is adkskills for agents built on ADK Go v2 (`%[3]s%[2]s` %[4]s):\n"+
		"the same packages and names as the root module `%[1]s` (for ADK v1), under `%[2]s`.\n\n"+
		"    go get %[1]s%[2]s\n\n",
		cfg.Module, majorSuffix, adkPath, cfg.ADKVersion)
	if len(modules) > 0 {
		b = append(b, "The modules that touch no ADK are shared by both majors, at the same import paths:\n\n"...)
		for _, m := range modules {
			if !slices.Contains(strings.Split(m, "/"), "internal") {
				b = fmt.Appendf(b, "- `%s/%s` (in `../%s/`)\n", cfg.Module, m, m)
			}
		}
		b = append(b, '\n')
	}
	return append(b, "Documentation: the repository's [README](../README.md).\n\n"+
		"Every file in this directory is generated from the root module by `internal/v2gen`.\n"+
		"Do not edit it here: change the root, run `go generate ./...` there, and commit both.\n"...)
}

// Stats counts what Sync changed.
type Stats struct {
	Written, Removed int
}

// Sync makes the directory out hold exactly files: it writes what differs
// and removes every other file (and the directories left empty), except the
// files keep reports, which something else maintains.
func Sync(out string, files map[string]File, keep func(rel string) bool) (Stats, error) {
	var st Stats
	if err := os.MkdirAll(out, 0o755); err != nil {
		return st, err
	}
	var dirs []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case d.IsDir():
			dirs = append(dirs, p)
		default:
			if _, ok := files[rel]; !ok && !keep(rel) {
				st.Removed++
				return os.Remove(p)
			}
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("sync: %w", err)
	}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		changed, err := writeFile(filepath.Join(out, filepath.FromSlash(rel)), files[rel])
		if err != nil {
			return st, fmt.Errorf("sync: %w", err)
		}
		if changed {
			st.Written++
		}
	}
	// Deepest first, so a parent empties after its children.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Compare(b, a) })
	for _, d := range dirs {
		if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 {
			if err := os.Remove(d); err != nil {
				return st, fmt.Errorf("sync: %w", err)
			}
		}
	}
	return st, nil
}

// writeFile makes p hold f, and reports whether it had to change anything.
func writeFile(p string, f File) (bool, error) {
	info, err := os.Lstat(p)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, err
	case err == nil && f.Link != "":
		if target, _ := os.Readlink(p); info.Mode()&fs.ModeSymlink != 0 && target == f.Link {
			return false, nil
		}
	case err == nil && info.Mode().IsRegular() && info.Mode().Perm() == f.Mode:
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, f.Data) {
			return false, nil
		}
	}
	if err == nil && (f.Link != "" || !info.Mode().IsRegular()) {
		if err := os.RemoveAll(p); err != nil {
			return false, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, err
	}
	if f.Link != "" {
		return true, os.Symlink(f.Link, p)
	}
	if err := os.WriteFile(p, f.Data, f.Mode); err != nil {
		return false, err
	}
	return true, os.Chmod(p, f.Mode) // WriteFile keeps an existing file's mode
}
