package skillfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/internal/valid"
)

// SkillFile is the file that makes a folder a skill.
const SkillFile = "SKILL.md"

// skipDirs are never part of a skill's files: version-control data and
// bytecode caches.
var skipDirs = map[string]bool{".git": true, "__pycache__": true}

// Source is a skill.Source over an fs.FS whose immediate subfolders holding
// a SKILL.md are skills. Unlike ADK's skill.NewFileSystemSource it exposes a
// skill's whole folder (cards/, templates/, sibling modules: whatever the
// scripts read), reads SKILL.md leniently, and leaves a malformed skill out
// of the catalogue with one logged warning instead of failing it whole.
// Symbolic links inside a skill are never listed nor opened.
type Source struct {
	fsys   fs.FS
	dir    string // the folder's name in errors ("": unknown)
	logger *slog.Logger
	warned sync.Map // skill folder + problem -> struct{}
	// parsed remembers each skill folder's last SKILL.md frontmatter and
	// what reading it gave (a *parsedFile): the catalogue, the declared
	// tools and every call read it again, a dozen times per model turn, and
	// only the parse costs (YAML: tens of microseconds a file).
	parsed sync.Map
}

// parsedFile is a SKILL.md's frontmatter and what read made of it.
type parsedFile struct {
	data []byte // the file up to the end of its frontmatter (all of head when unreadable)
	p    *Parsed
	err  error
}

// New returns a Source over fsys. A nil logger means slog.Default().
func New(fsys fs.FS, logger *slog.Logger) *Source {
	return &Source{fsys: fsys, logger: logger}
}

func (s *Source) log() *slog.Logger {
	if s.logger == nil {
		return slog.Default()
	}
	return s.logger
}

// Skill is one skill folder as read from the file system: its parsed
// SKILL.md, or the problem that keeps it out of the catalogue.
type Skill struct {
	Dir    string
	Parsed *Parsed
	Err    error
}

// Scan reads every skill folder (see Validate: an immediate subfolder
// holding a SKILL.md, or the same name in another case; hidden folders are
// not skills), in name order, valid or not. Validate counts the same.
func (s *Source) Scan() ([]Skill, error) {
	folders, err := skillFolders(s.fsys)
	if err != nil {
		return nil, s.folderError(err)
	}
	out := make([]Skill, 0, len(folders))
	for _, f := range folders {
		if f.Problem != "" {
			out = append(out, Skill{Dir: f.Dir, Err: fmt.Errorf("%s: %w: %s", f.path(), skill.ErrInvalidFrontmatter, f.Problem)})
			continue
		}
		p, err := s.read(f.Dir)
		out = append(out, Skill{Dir: f.Dir, Parsed: p, Err: err})
	}
	return out, nil
}

// ListFrontmatters lists the skills that load. A skill that cannot be read
// is left out with a warning, logged once per problem; a skill that loads
// despite a problem (Parsed.Warnings) is listed, and the problem logged
// once.
func (s *Source) ListFrontmatters(ctx context.Context) ([]*skill.Frontmatter, error) {
	skills, err := s.Scan()
	if err != nil {
		return nil, err
	}
	var out []*skill.Frontmatter
	for _, sk := range skills {
		if sk.Err != nil {
			if _, dup := s.warned.LoadOrStore(sk.Dir+"\x00"+sk.Err.Error(), struct{}{}); !dup {
				s.log().Warn("adkskills: skipping a skill that cannot be loaded", "skill", sk.Dir, "error", sk.Err)
			}
			continue
		}
		for _, w := range sk.Parsed.Warnings {
			if _, dup := s.warned.LoadOrStore(sk.Dir+"\x00"+w, struct{}{}); !dup {
				s.log().Warn("adkskills: a skill breaks a rule of the specification; loaded anyway", "skill", sk.Dir, "problem", w)
			}
		}
		out = append(out, sk.Parsed.Frontmatter)
	}
	return out, nil
}

// LoadFrontmatter reads one skill's frontmatter.
func (s *Source) LoadFrontmatter(ctx context.Context, name string) (*skill.Frontmatter, error) {
	p, err := s.read(name)
	if err != nil {
		return nil, err
	}
	return p.Frontmatter, nil
}

// LoadInstructions returns the Markdown body of a skill's SKILL.md, whole;
// Instructions streams it.
func (s *Source) LoadInstructions(ctx context.Context, name string) (string, error) {
	body, _, err := s.Instructions(ctx, name)
	if err != nil {
		return "", err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path.Join(name, SkillFile), err)
	}
	return string(b), nil
}

// Instructions opens the Markdown body of a skill's SKILL.md as a stream,
// once its frontmatter reads as LoadFrontmatter reads it, and returns how
// many characters of the file come before the body (a byte-order mark
// counts as one, as does each invalid byte). The caller closes the body.
// Unlike LoadInstructions it never holds the body in memory.
func (s *Source) Instructions(ctx context.Context, name string) (io.ReadCloser, int64, error) {
	sf, err := s.open(name)
	if err != nil {
		return nil, 0, err
	}
	if _, err := s.parsedHead(name, sf); err != nil {
		_ = sf.f.Close()
		return nil, 0, err
	}
	body := io.MultiReader(bytes.NewReader(sf.head[sf.end:]), sf.f)
	return readCloser{Reader: body, Closer: sf.f}, int64(utf8.RuneCount(sf.head[:sf.end])), nil
}

// readCloser reads from a Reader and closes a Closer.
type readCloser struct {
	io.Reader
	io.Closer
}

// LoadResource opens any regular file of the skill's folder by its path
// relative to the skill root. Paths that leave the folder, and symbolic links
// anywhere along the path, are refused.
func (s *Source) LoadResource(ctx context.Context, name, resourcePath string) (io.ReadCloser, error) {
	// Checking that the skill exists, not re-parsing its SKILL.md, keeps
	// staging a folder of N files at one parse.
	if err := s.exists(name); err != nil {
		return nil, err
	}
	clean, err := cleanRel(resourcePath)
	if err != nil || clean == "." {
		return nil, fmt.Errorf("%w: %q must be a file path inside the skill folder", skill.ErrInvalidResourcePath, resourcePath)
	}
	full := path.Join(name, clean)
	if err := s.noLinks(full); err != nil {
		return nil, err
	}
	f, err := s.fsys.Open(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %q", skill.ErrResourceNotFound, clean)
		}
		return nil, fmt.Errorf("open %q: %w", clean, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %q is not a regular file", skill.ErrResourceNotFound, clean)
	}
	return f, nil
}

// ListResources lists the regular files under resourceDirectoryPath (empty
// or "." for the whole skill folder, SKILL.md included), relative to the
// skill root, in lexical order. Symbolic links, .git and __pycache__ are
// left out.
func (s *Source) ListResources(ctx context.Context, name, resourceDirectoryPath string) ([]string, error) {
	if _, err := s.read(name); err != nil {
		return nil, err
	}
	clean, err := cleanRel(resourceDirectoryPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %q must be a folder inside the skill folder", skill.ErrInvalidResourcePath, resourceDirectoryPath)
	}
	root := path.Join(name, clean)
	if err := s.noLinks(root); err != nil {
		return nil, err
	}
	if _, err := fs.Stat(s.fsys, root); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %q", skill.ErrResourceNotFound, clean)
		}
		return nil, err
	}
	var out []string
	err = fs.WalkDir(s.fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			out = append(out, strings.TrimPrefix(p, name+"/"))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list files of skill %q: %w", name, err)
	}
	return out, nil
}

// exists checks that name is a skill folder with a SKILL.md, reached
// without symbolic links.
func (s *Source) exists(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("%w: %q", skill.ErrInvalidSkillName, name)
	}
	file := path.Join(name, SkillFile)
	if err := s.noLinks(file); err != nil {
		return fmt.Errorf("%w: %q", skill.ErrSkillNotFound, name)
	}
	if fi, err := fs.Stat(s.fsys, file); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %q", skill.ErrSkillNotFound, name)
	}
	return nil
}

// skillFile is an open SKILL.md with its first bytes read: the frontmatter
// and perhaps the start of the body.
type skillFile struct {
	f    fs.File
	head []byte
	end  int // where the frontmatter ends in head; 0 when it cannot be read
	err  error
}

// open opens the SKILL.md of the skill folder name and reads no more of it
// than a frontmatter within MaxFrontmatterBytes takes (readHead). The
// caller closes sf.f.
func (s *Source) open(name string) (*skillFile, error) {
	if err := s.exists(name); err != nil {
		return nil, err
	}
	file := path.Join(name, SkillFile)
	f, err := s.fsys.Open(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %q", skill.ErrSkillNotFound, name)
		}
		return nil, fmt.Errorf("open %s: %w", file, err)
	}
	head, err := readHead(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	sf := &skillFile{f: f, head: head}
	sf.end, sf.err = frontmatterEnd(head)
	return sf, nil
}

// read parses the frontmatter of one skill's SKILL.md; the folder name must
// be the skill's name. Only the frontmatter is read, so a huge body costs
// nothing here.
func (s *Source) read(name string) (*Parsed, error) {
	sf, err := s.open(name)
	if err != nil {
		return nil, err
	}
	_ = sf.f.Close()
	return s.parsedHead(name, sf)
}

// parsedHead parses sf's frontmatter, or answers what the last parse of the
// same frontmatter bytes gave. The Parsed has an empty Body.
func (s *Source) parsedHead(name string, sf *skillFile) (*Parsed, error) {
	data := sf.head
	if sf.err == nil {
		data = sf.head[:sf.end]
	}
	if v, ok := s.parsed.Load(name); ok {
		if c := v.(*parsedFile); bytes.Equal(c.data, data) {
			return c.p.clone(), c.err
		}
	}
	data = bytes.Clone(data)
	p, err := parse(name, data)
	s.parsed.Store(name, &parsedFile{data: data, p: p, err: err})
	return p.clone(), err
}

// parse reads the SKILL.md of the skill folder name, whose content is data.
func parse(name string, data []byte) (*Parsed, error) {
	file := path.Join(name, SkillFile)
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if p.Frontmatter.Name != name {
		return nil, fmt.Errorf("%s: %w: the name %q does not match the folder name %q", file, skill.ErrInvalidSkillName, p.Frontmatter.Name, name)
	}
	return p, nil
}

// noLinks refuses a path with a symbolic link in any of its components, when
// the file system can tell (os.DirFS and os.Root.FS can).
func (s *Source) noLinks(p string) error {
	if _, ok := s.fsys.(fs.ReadLinkFS); !ok {
		return nil
	}
	cur := ""
	for _, seg := range strings.Split(p, "/") {
		cur = path.Join(cur, seg)
		fi, err := fs.Lstat(s.fsys, cur)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // the caller reports it missing
			}
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %q is a symbolic link", skill.ErrInvalidResourcePath, cur)
		}
	}
	return nil
}

// cleanRel cleans a path inside a skill folder ("" is the folder itself).
func cleanRel(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	return valid.Path(p)
}

// WithLogger returns a Source over the same files that logs to l.
func (s *Source) WithLogger(l *slog.Logger) *Source {
	return New(s.fsys, l).WithDir(s.dir)
}

// WithDir returns a Source over the same files whose errors name the skills
// folder dir.
func (s *Source) WithDir(dir string) *Source {
	n := New(s.fsys, s.logger)
	n.dir = dir
	return n
}

// Check reports a skills folder that cannot be read at all, or that is
// itself a skill: a Source that could list no skill. A folder with no
// skills yet, or with some that do not load, passes: those are the
// catalogue's to leave out, one by one.
func (s *Source) Check() error {
	folders, err := skillFolders(s.fsys)
	if err != nil {
		return s.folderError(err)
	}
	if fi, err := fs.Stat(s.fsys, SkillFile); err == nil && !fi.IsDir() && len(folders) == 0 {
		return fmt.Errorf("the skills folder%s is itself a skill (it holds a %s): give the folder that contains it", s.named(), SkillFile)
	}
	return nil
}

// named is " NAME" for a Source that knows its folder's name, else "".
func (s *Source) named() string {
	if s.dir == "" {
		return ""
	}
	return " " + s.dir
}

// folderError says that the skills folder cannot be read, naming it where
// the error of an os.DirFS says only ".".
func (s *Source) folderError(err error) error {
	var pe *fs.PathError
	if s.dir != "" && errors.As(err, &pe) && pe.Path == "." {
		err = &fs.PathError{Op: pe.Op, Path: s.dir, Err: pe.Err}
	}
	return fmt.Errorf("the skills folder%s cannot be read: %w", s.named(), err)
}

// FS returns the skill folder name as a read-only file system: exactly the
// files ListResources lists (regular files, no symbolic links, no .git or
// __pycache__), read lazily from the underlying file system, with its file
// information (modes, times, identities) passed through. An executor stages
// a skill from it without the folder ever being held in memory.
func (s *Source) FS(name string) (fs.FS, error) {
	if err := s.exists(name); err != nil {
		return nil, err
	}
	return &skillFS{s: s, name: name}, nil
}

// skillFS is one skill folder of a Source (see Source.FS).
type skillFS struct {
	s    *Source
	name string
}

// full is the path of p, a path inside the skill, in the Source's file
// system; symbolic links anywhere along it are refused.
func (f *skillFS) full(op, p string) (string, error) {
	if !fs.ValidPath(p) {
		return "", &fs.PathError{Op: op, Path: p, Err: fs.ErrInvalid}
	}
	full := path.Join(f.name, p)
	if err := f.s.noLinks(full); err != nil {
		return "", &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
	}
	return full, nil
}

// Open implements fs.FS.
func (f *skillFS) Open(p string) (fs.File, error) {
	full, err := f.full("open", p)
	if err != nil {
		return nil, err
	}
	return f.s.fsys.Open(full)
}

// Stat implements fs.StatFS.
func (f *skillFS) Stat(p string) (fs.FileInfo, error) {
	full, err := f.full("stat", p)
	if err != nil {
		return nil, err
	}
	return fs.Stat(f.s.fsys, full)
}

// ReadDir implements fs.ReadDirFS, leaving out what a skill's files never
// include: symbolic links, and .git and __pycache__ folders.
func (f *skillFS) ReadDir(p string) ([]fs.DirEntry, error) {
	full, err := f.full("readdir", p)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(f.s.fsys, full)
	if err != nil {
		return nil, err
	}
	out := entries[:0]
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 || (e.IsDir() && skipDirs[e.Name()]) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}
