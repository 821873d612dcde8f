package mcpskills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"

	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/internal/encoding"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/internal/valid"
)

// ErrOverLimits is a skill beyond the interoperability limits (MaxSkillFiles
// files, MaxSkillBytes bytes): the server leaves it out of the catalogue and
// refuses skills/get of it, so that every manifest it serves is complete
// and any conforming host can read it whole.
var ErrOverLimits = errors.New("the skill is over the interoperability limits of SEP-2640")

// catalog reads the skills of a skill.Source as the extension describes
// them.
type catalog struct {
	src    skill.Source
	logger *slog.Logger
	warned sync.Map // skill + problem -> struct{}
}

// warnOnce logs a problem of a skill once per server.
func (c *catalog) warnOnce(name, msg string, err error) {
	if _, dup := c.warned.LoadOrStore(name+"\x00"+msg+"\x00"+err.Error(), struct{}{}); !dup {
		c.logger.Warn("adkskills: "+msg, "skill", name, "error", err)
	}
}

// names lists the skills of the source, sorted, without duplicates.
func (c *catalog) names(ctx context.Context) ([]string, error) {
	fms, err := c.src.ListFrontmatters(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(fms))
	for _, fm := range fms {
		if fm != nil && validName(fm.Name) {
			names = append(names, fm.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// exists reports whether name is a skill the source loads.
func (c *catalog) exists(ctx context.Context, name string) error {
	if !validName(name) {
		return fmt.Errorf("%w: %q", skill.ErrInvalidSkillName, name)
	}
	_, err := c.src.LoadFrontmatter(ctx, name)
	return err
}

// files lists the files of a skill: what the source's ListResources gives
// for the whole folder, and SKILL.md, sorted. Paths that are not clean and
// relative are dropped.
func (c *catalog) files(ctx context.Context, name string) ([]string, error) {
	listed, err := c.src.ListResources(ctx, name, "")
	if err != nil && !errors.Is(err, skill.ErrResourceNotFound) {
		return nil, err
	}
	out := []string{skillFile}
	for _, p := range listed {
		if cl, err := valid.Path(p); err == nil && cl == p && p != "." {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// open opens a file of a skill. SKILL.md comes from the source when it
// serves it (this module's does), else it is built from the frontmatter and
// the instructions (skill.Build): the text a client reads is then the one
// its entry describes.
func (c *catalog) open(ctx context.Context, name, p string) (io.ReadCloser, error) {
	rc, err := c.src.LoadResource(ctx, name, p)
	if err == nil || p != skillFile {
		return rc, err
	}
	fm, err := c.src.LoadFrontmatter(ctx, name)
	if err != nil {
		return nil, err
	}
	body, err := c.src.LoadInstructions(ctx, name)
	if err != nil {
		return nil, err
	}
	data, err := skill.Build(fm, body)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// read reads a file of a skill whole, refusing one of more than limit
// bytes.
func (c *catalog) read(ctx context.Context, name, p string, limit int64) ([]byte, error) {
	rc, err := c.open(ctx, name, p)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %q is over %d bytes", ErrOverLimits, p, limit)
	}
	return data, nil
}

// entry describes a skill: its frontmatter, as SKILL.md declares it, and its
// manifest, each file hashed as it is read (nothing is held but SKILL.md). A
// skill over the limits is ErrOverLimits, found without reading more than
// MaxSkillBytes.
func (c *catalog) entry(ctx context.Context, name string) (*Entry, error) {
	if err := c.exists(ctx, name); err != nil {
		return nil, err
	}
	files, err := c.files(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(files) > MaxSkillFiles {
		return nil, fmt.Errorf("%w: %d files, at most %d", ErrOverLimits, len(files), MaxSkillFiles)
	}
	md, err := c.read(ctx, name, skillFile, MaxSkillBytes)
	if err != nil {
		return nil, err
	}
	fields, err := skillfs.Fields(md)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", skillFile, skill.ErrInvalidFrontmatter, err)
	}
	e := &Entry{URI: SkillURI(name), Frontmatter: fields, Resources: make([]*FileEntry, 0, len(files))}
	var total int64
	for _, p := range files {
		var d string
		var n int64
		if p == skillFile {
			d, n = digest(md), int64(len(md))
		} else if d, n, err = c.hash(ctx, name, p, MaxSkillBytes-total); err != nil {
			return nil, err
		}
		if total += n; total > MaxSkillBytes {
			return nil, fmt.Errorf("%w: over %d bytes", ErrOverLimits, MaxSkillBytes)
		}
		e.Resources = append(e.Resources, &FileEntry{URI: FileURI(name, p), Digest: d, Size: n})
	}
	return e, nil
}

// hash reads a file of a skill through SHA-256: its digest and size,
// reading at most limit+1 bytes (the caller tells a file over the limit by
// its size).
func (c *catalog) hash(ctx context.Context, name, p string, limit int64) (string, int64, error) {
	rc, err := c.open(ctx, name, p)
	if err != nil {
		return "", 0, fmt.Errorf("%q: %w", p, err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(rc, limit+1))
	if err != nil {
		return "", 0, fmt.Errorf("%q: %w", p, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// digest is the manifest's digest of data.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// children lists the direct children of the folder dir of a skill, files
// and folders, sorted by name; ok is false when dir is not a folder of it.
func (c *catalog) children(ctx context.Context, name, dir string) (kids []child, ok bool, err error) {
	files, err := c.files(ctx, name)
	if err != nil {
		return nil, false, err
	}
	seen := map[string]bool{}
	ok = dir == "."
	for _, p := range files {
		rel := p
		if dir != "." {
			var found bool
			if rel, found = strings.CutPrefix(p, dir+"/"); !found {
				continue
			}
		}
		ok = true
		first, _, isDir := strings.Cut(rel, "/")
		if seen[first] {
			continue
		}
		seen[first] = true
		kids = append(kids, child{name: first, path: path.Join(dir, first), dir: isDir})
	}
	slices.SortFunc(kids, func(a, b child) int { return strings.Compare(a.name, b.name) })
	return kids, ok, nil
}

// child is an entry of a folder listing.
type child struct {
	name, path string
	dir        bool
}

// mimeType is a file's MIME type: by its name, else by its first bytes, as
// resources/read reports it.
func (c *catalog) mimeType(ctx context.Context, name, p string) string {
	var head []byte
	if rc, err := c.open(ctx, name, p); err == nil {
		head, _ = io.ReadAll(io.LimitReader(rc, sniffBytes))
		rc.Close()
	}
	return encoding.MIMEType(p, head)
}

// sniffBytes is what http.DetectContentType reads of a file.
const sniffBytes = 512

// size is a file's size when the source can tell it without reading it
// (this module's Source can), else -1.
func (c *catalog) size(name, p string) int64 {
	src, ok := c.src.(*skillfs.Source)
	if !ok {
		return -1
	}
	fsys, err := src.FS(name)
	if err != nil {
		return -1
	}
	fi, err := fs.Stat(fsys, p)
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}
