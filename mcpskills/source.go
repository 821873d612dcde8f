package mcpskills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/internal/valid"
	"github.com/adkskills/adkskills/tools/runscript"
)

// ErrNoExtension is a server that does not declare the Skills extension.
var ErrNoExtension = errors.New("the server does not declare the Skills extension (" + ExtensionKey + ")")

// maxPages bounds the pages of one skills/list walk.
const maxPages = 1000

// NewClient returns an MCP client that speaks the Skills extension: it
// declares ExtensionKey at initialize and can send skills/list, skills/get
// and resources/directory/read, so NewSource can use its sessions. opts may
// be nil; it is not changed.
func NewClient(impl *mcp.Implementation, opts *mcp.ClientOptions) *mcp.Client {
	var o mcp.ClientOptions
	if opts != nil {
		o = *opts
	}
	caps := &mcp.ClientCapabilities{}
	if o.Capabilities != nil {
		c := *o.Capabilities
		caps = &c
	}
	ext := map[string]any{}
	for k, v := range caps.Extensions {
		ext[k] = v
	}
	ext[ExtensionKey] = map[string]any{}
	caps.Extensions, o.Capabilities = ext, caps
	c := mcp.NewClient(impl, &o)
	// The methods are not standard ones: registering them cannot fail.
	_ = mcp.AddSendingCustomMethod[*ListParams, *ListResult](c, MethodList)
	_ = mcp.AddSendingCustomMethod[*GetParams, *GetResult](c, MethodGet)
	_ = mcp.AddSendingCustomMethod[*DirectoryReadParams, *DirectoryReadResult](c, MethodDirectoryRead)
	return c
}

// SourceOption configures NewSource.
type SourceOption func(*Source) error

// WithSkillLimits raises (or lowers) the size of a skill the source accepts:
// at most files files and bytes bytes (default MaxSkillFiles and
// MaxSkillBytes). A larger skill is refused before any file is read.
func WithSkillLimits(files int, bytes int64) SourceOption {
	return func(s *Source) error {
		if files < 1 || bytes < 1 {
			return fmt.Errorf("WithSkillLimits: %d files, %d bytes: both must be positive", files, bytes)
		}
		s.maxFiles, s.maxBytes = files, bytes
		return nil
	}
}

// WithSourceLogger sets where skills left out of the catalogue are
// reported (default slog.Default()).
func WithSourceLogger(l *slog.Logger) SourceOption {
	return func(s *Source) error {
		if l == nil {
			return errors.New("WithSourceLogger: the logger is nil")
		}
		s.logger = l
		return nil
	}
}

// Source is a skill.Source over the skills a remote MCP server serves with
// the Skills extension, so an ADK agent lists and loads them
// (skilltoolset.New) and runs their scripts in its own executor.
//
// Nothing of a skill is used before all of it is checked: the first time a
// skill's files are needed (its instructions, a file, its listing, which a
// script run stages from), the source fetches its current entry with
// skills/get and every file of its manifest with resources/read, and checks
// each file's size and SHA-256 digest against the manifest. A skill that
// advertises no digests ("dynamic"), a file that does not match, or a
// manifest that leaves the skill's root is refused with an error wrapping
// runscript.ErrIntegrity: the script tools answer EXECUTION_ERROR and run
// nothing. Checked files are kept in memory and fetched again only when
// their digest changes.
type Source struct {
	cs       *mcp.ClientSession
	maxFiles int
	maxBytes int64
	logger   *slog.Logger

	mu      sync.Mutex
	uris    map[string]string   // skill name -> its entry's URI, from the last listing
	checked map[string]*checked // skill name -> its checked files
	warned  sync.Map
}

// checked is a skill whose every file matched its digest.
type checked struct {
	digests map[string]string // path -> digest
	files   map[string][]byte // path -> bytes
}

// NewSource returns a Source over the skills of the server at the other end
// of cs, a session of a client NewClient made. It refuses a server that did
// not declare the extension (ErrNoExtension).
func NewSource(cs *mcp.ClientSession, opts ...SourceOption) (*Source, error) {
	if cs == nil {
		return nil, errors.New("mcpskills: the client session is nil")
	}
	s := &Source{cs: cs, maxFiles: MaxSkillFiles, maxBytes: MaxSkillBytes, logger: slog.Default(),
		uris: map[string]string{}, checked: map[string]*checked{}}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, fmt.Errorf("mcpskills: %w", err)
		}
	}
	if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Extensions[ExtensionKey] == nil {
		return nil, fmt.Errorf("mcpskills: %w", ErrNoExtension)
	}
	return s, nil
}

// call sends one of the extension's requests.
func call[P interface {
	*T
	mcp.Params
}, R mcp.Result, T any](ctx context.Context, s *Source, method string, p P) (R, error) {
	r, err := mcp.CallCustomMethod[P, R](ctx, s.cs, method, p)
	if err != nil {
		return r, fmt.Errorf("mcpskills: %s: %w (the client must come from mcpskills.NewClient)", method, err)
	}
	return r, nil
}

// ListFrontmatters lists the server's skills, walking every page of
// skills/list, up to MaxCatalogSkills skills. An entry whose frontmatter
// is not a valid skill's, or whose URI does not end in its name's
// /SKILL.md, is left out with a logged warning.
func (s *Source) ListFrontmatters(ctx context.Context) ([]*skill.Frontmatter, error) {
	var out []*skill.Frontmatter
	uris := map[string]string{}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("mcpskills: skills/list did not end within %d pages", maxPages)
		}
		res, err := call[*ListParams, *ListResult](ctx, s, MethodList, &ListParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		for _, e := range res.Skills {
			if len(out) == MaxCatalogSkills {
				s.warnOnce("", "the server lists more skills than a catalogue holds; the rest are left out", fmt.Errorf("at most %d", MaxCatalogSkills))
				break
			}
			fm, err := entryFrontmatter(e)
			if err != nil {
				s.warnOnce(e.URI, "leaving out a skill the server lists", err)
				continue
			}
			if uris[fm.Name] != "" {
				s.warnOnce(e.URI, "leaving out a skill the server lists", fmt.Errorf("%w: %q", skill.ErrDuplicateSkill, fm.Name))
				continue
			}
			uris[fm.Name] = e.URI
			out = append(out, fm)
		}
		if res.NextCursor == "" || len(out) == MaxCatalogSkills {
			break
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("mcpskills: skills/list repeated a cursor")
		}
		seen[res.NextCursor], cursor = true, res.NextCursor
	}
	s.mu.Lock()
	s.uris = uris
	s.mu.Unlock()
	return out, nil
}

func (s *Source) warnOnce(key, msg string, err error) {
	if _, dup := s.warned.LoadOrStore(key+"\x00"+err.Error(), struct{}{}); !dup {
		s.logger.Warn("adkskills: "+msg, "skill", key, "error", err)
	}
}

// entryFrontmatter reads an entry's frontmatter as this module reads a
// SKILL.md's (JSON is YAML): extra keys are tolerated, the specification's
// are validated by ADK. The entry's URI must end in NAME/SKILL.md.
func entryFrontmatter(e *Entry) (*skill.Frontmatter, error) {
	if e == nil {
		return nil, errors.New("an empty entry")
	}
	fields, err := json.Marshal(e.Frontmatter)
	if err != nil {
		return nil, err
	}
	p, err := skillfs.Parse(slices.Concat([]byte("---\n"), fields, []byte("\n---\n")))
	if err != nil {
		return nil, err
	}
	if name, ok := entryName(e.URI); !ok || name != p.Frontmatter.Name {
		return nil, fmt.Errorf("%w: the entry's URI %q does not end in /%s/%s", skill.ErrInvalidSkillName, e.URI, p.Frontmatter.Name, skillFile)
	}
	return p.Frontmatter, nil
}

// entryName is the path segment before /SKILL.md in an entry's URI.
func entryName(uri string) (string, bool) {
	rest, ok := strings.CutSuffix(uri, "/"+skillFile)
	if !ok {
		return "", false
	}
	return rest[strings.LastIndex(rest, "/")+1:], true
}

// entryURI is the entry URI of the skill name: the listing's, else the
// skill:// convention's.
func (s *Source) entryURI(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.uris[name]; u != "" {
		return u
	}
	return SkillURI(name)
}

// get fetches a skill's current entry.
func (s *Source) get(ctx context.Context, name string) (*Entry, error) {
	if !validName(name) {
		return nil, fmt.Errorf("%w: %q", skill.ErrInvalidSkillName, name)
	}
	res, err := call[*GetParams, *GetResult](ctx, s, MethodGet, &GetParams{URI: s.entryURI(name)})
	// A resource that is not found is, by the SDK's convention
	// (mcp.ResourceNotFoundError), an error whose data names its URI.
	if rpcErr := (*jsonrpc.Error)(nil); errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams && bytes.Contains(rpcErr.Data, []byte(`"uri"`)) {
		return nil, fmt.Errorf("%w: %q: %v", skill.ErrSkillNotFound, name, err)
	}
	if err != nil {
		return nil, err
	}
	if res.Skill == nil {
		return nil, fmt.Errorf("mcpskills: skills/get of %q answered no skill", name)
	}
	return res.Skill, nil
}

// LoadFrontmatter fetches one skill's entry and reads its frontmatter.
func (s *Source) LoadFrontmatter(ctx context.Context, name string) (*skill.Frontmatter, error) {
	e, err := s.get(ctx, name)
	if err != nil {
		return nil, err
	}
	fm, err := entryFrontmatter(e)
	if err != nil {
		return nil, err
	}
	if fm.Name != name {
		return nil, fmt.Errorf("%w: skills/get of %q answered skill %q", skill.ErrInvalidSkillName, name, fm.Name)
	}
	return fm, nil
}

// LoadInstructions returns the body of the skill's checked SKILL.md.
func (s *Source) LoadInstructions(ctx context.Context, name string) (string, error) {
	c, err := s.check(ctx, name)
	if err != nil {
		return "", err
	}
	p, err := skillfs.Parse(c.files[skillFile])
	if err != nil {
		return "", fmt.Errorf("%s of skill %q: %w", skillFile, name, err)
	}
	return p.Body, nil
}

// ListResources lists the skill's files (all of them for "" or ".", else
// those under the folder subpath), relative to the skill root, sorted,
// after checking every one.
func (s *Source) ListResources(ctx context.Context, name, subpath string) ([]string, error) {
	c, err := s.check(ctx, name)
	if err != nil {
		return nil, err
	}
	dir := "."
	if subpath != "" {
		if dir, err = valid.Path(subpath); err != nil {
			return nil, fmt.Errorf("%w: %q", skill.ErrInvalidResourcePath, subpath)
		}
	}
	var out []string
	for p := range c.files {
		if dir == "." || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q", skill.ErrResourceNotFound, subpath)
	}
	slices.Sort(out)
	return out, nil
}

// LoadResource returns a checked file of the skill.
func (s *Source) LoadResource(ctx context.Context, name, resourcePath string) (io.ReadCloser, error) {
	p, err := valid.Path(resourcePath)
	if err != nil || p == "." {
		return nil, fmt.Errorf("%w: %q", skill.ErrInvalidResourcePath, resourcePath)
	}
	s.mu.Lock()
	c := s.checked[name]
	s.mu.Unlock()
	if c == nil {
		if c, err = s.check(ctx, name); err != nil {
			return nil, err
		}
	}
	data, ok := c.files[p]
	if !ok {
		return nil, fmt.Errorf("%w: %q", skill.ErrResourceNotFound, resourcePath)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// digestRe is a manifest digest.
var digestRe = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// check fetches the skill's current entry and every file its manifest
// lists that is not already checked at the same digest, and checks them.
func (s *Source) check(ctx context.Context, name string) (*checked, error) {
	e, err := s.get(ctx, name)
	if err != nil {
		return nil, err
	}
	manifest, err := s.manifest(name, e)
	if err != nil {
		return nil, fmt.Errorf("mcpskills: skill %q: %w", name, err)
	}
	s.mu.Lock()
	prev := s.checked[name]
	s.mu.Unlock()
	c := &checked{digests: map[string]string{}, files: map[string][]byte{}}
	for p, f := range manifest {
		c.digests[p] = f.Digest
		if prev != nil && prev.digests[p] == f.Digest {
			c.files[p] = prev.files[p]
			continue
		}
		data, err := s.fetch(ctx, f.URI)
		if err != nil {
			return nil, fmt.Errorf("mcpskills: skill %q: %q: %w", name, p, err)
		}
		if int64(len(data)) != f.Size || digest(data) != f.Digest {
			return nil, fmt.Errorf("mcpskills: skill %q: %w: %q was served as %d bytes of %s; its manifest says %d bytes of %s",
				name, runscript.ErrIntegrity, p, len(data), digest(data), f.Size, f.Digest)
		}
		c.files[p] = data
	}
	s.mu.Lock()
	s.checked[name] = c
	s.evict(name)
	s.mu.Unlock()
	return c, nil
}

// evict forgets other skills' checked files while all of them together are
// over MaxCatalogBytes: they are fetched again when next used. s.mu is held.
func (s *Source) evict(keep string) {
	var total int64
	for _, c := range s.checked {
		total += c.size()
	}
	for name, c := range s.checked {
		if total <= MaxCatalogBytes {
			return
		}
		if name != keep {
			total -= c.size()
			delete(s.checked, name)
		}
	}
}

// size is the bytes of a skill's checked files.
func (c *checked) size() int64 {
	var n int64
	for _, f := range c.files {
		n += int64(len(f))
	}
	return n
}

// manifest checks an entry's manifest before any file is fetched: digests
// advertised, within the limits, every file inside the skill's root, once,
// SKILL.md among them. It maps each file's path to its entry.
func (s *Source) manifest(name string, e *Entry) (map[string]*FileEntry, error) {
	if e.Dynamic {
		return nil, fmt.Errorf("%w: the server advertises no digests for its files (resources: %q), so they cannot be checked", runscript.ErrIntegrity, DynamicResources)
	}
	root, ok := strings.CutSuffix(e.URI, skillFile)
	if n, _ := entryName(e.URI); !ok || n != name {
		return nil, fmt.Errorf("%w: its entry's URI %q does not end in /%s/%s", runscript.ErrIntegrity, e.URI, name, skillFile)
	}
	if len(e.Resources) > s.maxFiles {
		return nil, fmt.Errorf("%w: %d files, over the limit of %d", ErrOverLimits, len(e.Resources), s.maxFiles)
	}
	out := make(map[string]*FileEntry, len(e.Resources))
	var total int64
	for _, f := range e.Resources {
		if f == nil || !digestRe.MatchString(f.Digest) || f.Size < 0 {
			return nil, fmt.Errorf("%w: a manifest entry without a sha256 digest and a size", runscript.ErrIntegrity)
		}
		if total += f.Size; total > s.maxBytes {
			return nil, fmt.Errorf("%w: over %d bytes", ErrOverLimits, s.maxBytes)
		}
		p, err := relPath(root, f.URI)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", runscript.ErrIntegrity, err)
		}
		if out[p] != nil {
			return nil, fmt.Errorf("%w: the manifest lists %q twice", runscript.ErrIntegrity, p)
		}
		out[p] = f
	}
	if out[skillFile] == nil {
		return nil, fmt.Errorf("%w: the manifest does not list %s", runscript.ErrIntegrity, skillFile)
	}
	return out, nil
}

// relPath is the path of uri inside the skill root (a URI ending in "/").
func relPath(root, uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, root)
	if !ok {
		return "", fmt.Errorf("%q is not inside the skill's root %q", uri, root)
	}
	p, err := unescapePath(rest)
	if err != nil {
		return "", fmt.Errorf("%q is not a file inside the skill's root %q: %v", uri, root, err)
	}
	return p, nil
}

// fetch reads a resource's bytes: its text, UTF-8 encoded, or its blob.
func (s *Source) fetch(ctx context.Context, uri string) ([]byte, error) {
	res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	for _, c := range res.Contents {
		if c != nil && c.URI == uri {
			if c.Blob != nil {
				return c.Blob, nil
			}
			return []byte(c.Text), nil
		}
	}
	return nil, fmt.Errorf("resources/read returned no contents for %q", uri)
}
