package mcpskills

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/internal/encoding"
	"github.com/adkskills/adkskills/tools/runinline"
)

// list answers skills/list: a page of the catalogue, each entry with its
// manifest. A skill that cannot be described (unreadable, over the limits)
// is left out, with a warning in the log once.
func (s *Server) list(ctx context.Context, _ *mcp.ServerSession, p *ListParams) (*ListResult, error) {
	names, err := s.cat.names(ctx)
	if err != nil {
		return nil, s.internalError(MethodList, err)
	}
	if len(names) > MaxCatalogSkills {
		s.cat.warnOnce("", "the catalogue is over the interoperability limit of skills; clients may read only the first ones",
			fmt.Errorf("%d skills, at most %d", len(names), MaxCatalogSkills))
	}
	start, end, next, err := s.page(names, p.Cursor)
	if err != nil {
		return nil, err
	}
	res := &ListResult{Skills: make([]*Entry, 0, end-start), NextCursor: next, Cacheable: cacheable(p.Meta, "public")}
	for _, name := range names[start:end] {
		e, err := s.cat.entry(ctx, name)
		if err != nil {
			s.cat.warnOnce(name, "leaving a skill out of skills/list", err)
			continue
		}
		res.Skills = append(res.Skills, e)
	}
	return res, nil
}

// get answers skills/get: the entry of the skill whose SKILL.md URI is
// given, in its envelope.
func (s *Server) get(ctx context.Context, _ *mcp.ServerSession, p *GetParams) (*GetResult, error) {
	name, path, _, err := parseSkillURI(p.URI)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	if path != skillFile {
		return nil, invalidParams("%q is not a skill's SKILL.md: skills/get takes an entry's URI, skill://NAME/SKILL.md", p.URI)
	}
	e, err := s.cat.entry(ctx, name)
	if err != nil {
		return nil, s.skillError(p.URI, name, err)
	}
	return &GetResult{Skill: e, Cacheable: cacheable(p.Meta, "public")}, nil
}

// skillError answers a request about a skill that failed: not found, over
// the limits, or broken.
func (s *Server) skillError(uri, name string, err error) error {
	switch {
	case errors.Is(err, skill.ErrSkillNotFound), errors.Is(err, skill.ErrInvalidSkillName):
		return notFound(uri, fmt.Sprintf("no skill %q", name))
	case errors.Is(err, ErrOverLimits):
		return invalidParams("skill %q is not served: %v (at most %d files and %d bytes)", name, err, MaxSkillFiles, MaxSkillBytes)
	case errors.Is(err, skill.ErrInvalidFrontmatter):
		s.cat.warnOnce(name, "a skill that cannot be loaded was asked for", err)
		return notFound(uri, fmt.Sprintf("skill %q cannot be served: its SKILL.md is invalid", name))
	}
	return s.internalError("reading skill "+name, err)
}

// readSkillFile answers resources/read of a skill:// URI: one file listed
// in the skill's manifest, as text when it is UTF-8, else as a blob.
func (s *Server) readSkillFile(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, p, dir, err := parseSkillURI(uri)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	if err := s.cat.exists(ctx, name); err != nil {
		return nil, s.skillError(uri, name, err)
	}
	files, err := s.cat.files(ctx, name)
	if err != nil {
		return nil, s.skillError(uri, name, err)
	}
	if dir || !slices.Contains(files, p) {
		return nil, notFound(uri, fmt.Sprintf("skill %q has no file %q (resources/directory/read lists its folders)", name, p))
	}
	data, err := s.cat.read(ctx, name, p, MaxSkillBytes)
	if err != nil {
		return nil, s.skillError(uri, name, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{contents(uri, encoding.MIMEType(p, data), data)}}, nil
}

// contents is a file's bytes as a resource's contents: text when the file
// is non-empty UTF-8 (the bytes a client encodes back are the file's), else
// a blob (an empty one for an empty file: contents carry text or a blob).
func contents(uri, mimeType string, data []byte) *mcp.ResourceContents {
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType}
	if len(data) > 0 && utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = append([]byte{}, data...)
	}
	return c
}

// readDirectory answers resources/directory/read: the direct children of
// a skill's folder, files with their MIME type and size, folders with
// DirectoryMIMEType, a page at a time.
func (s *Server) readDirectory(ctx context.Context, _ *mcp.ServerSession, p *DirectoryReadParams) (*DirectoryReadResult, error) {
	name, dir, _, err := parseSkillURI(p.URI)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	if err := s.cat.exists(ctx, name); err != nil {
		return nil, s.skillError(p.URI, name, err)
	}
	kids, ok, err := s.cat.children(ctx, name, dir)
	if err != nil {
		return nil, s.skillError(p.URI, name, err)
	}
	if !ok {
		return nil, notFound(p.URI, fmt.Sprintf("skill %q has no folder %q", name, dir))
	}
	names := make([]string, len(kids))
	for i, k := range kids {
		names[i] = k.name
	}
	start, end, next, err := s.page(names, p.Cursor)
	if err != nil {
		return nil, err
	}
	res := &DirectoryReadResult{Resources: make([]*mcp.Resource, 0, end-start), NextCursor: next, Cacheable: cacheable(p.Meta, "public")}
	for _, k := range kids[start:end] {
		r := &mcp.Resource{Name: k.name, URI: dirURI(name, k.path), MIMEType: DirectoryMIMEType}
		if !k.dir {
			r.URI, r.MIMEType = FileURI(name, k.path), s.cat.mimeType(ctx, name, k.path)
			if n := s.cat.size(name, k.path); n >= 0 {
				r.Size = n
			}
		}
		res.Resources = append(res.Resources, r)
	}
	return res, nil
}

// middleware hides run_skill_inline_script from a client that cannot
// approve scripts, and answers resources/list with every skill's SKILL.md,
// for clients that know resources but not the Skills extension.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "resources/list":
			p, _ := req.GetParams().(*mcp.ListResourcesParams)
			return s.listResources(ctx, p)
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && !canElicit(req) {
				lr.Tools = slices.DeleteFunc(lr.Tools, func(t *mcp.Tool) bool { return t.Name == runinline.Name })
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// listResources lists each skill's SKILL.md as a resource, a page at a
// time.
func (s *Server) listResources(ctx context.Context, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	names, err := s.cat.names(ctx)
	if err != nil {
		return nil, s.internalError("resources/list", err)
	}
	cursor := ""
	if p != nil {
		cursor = p.Cursor
	}
	start, end, next, err := s.page(names, cursor)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourcesResult{Resources: make([]*mcp.Resource, 0, end-start), NextCursor: next, Cacheable: mcp.Cacheable{CacheScope: "public"}}
	for _, name := range names[start:end] {
		fm, err := s.cat.src.LoadFrontmatter(ctx, name)
		if err != nil {
			continue
		}
		res.Resources = append(res.Resources, &mcp.Resource{URI: SkillURI(name), Name: name,
			Title: "Skill " + name, Description: fm.Description, MIMEType: "text/markdown"})
	}
	return res, nil
}
