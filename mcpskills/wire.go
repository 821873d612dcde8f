package mcpskills

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ExtensionKey is the Skills extension's key in the capabilities' extensions
// map, on both sides: the server declares it (with DirectoryRead) at
// initialize, and a client speaking it declares it too.
const ExtensionKey = "io.modelcontextprotocol/skills"

// The extension's methods.
const (
	MethodList          = "skills/list"
	MethodGet           = "skills/get"
	MethodDirectoryRead = "resources/directory/read"
)

// The interoperability limits of SEP-2640: what every host must accept. The
// server leaves a skill beyond them out of its catalogue (ErrOverLimits) and
// serves a catalogue beyond them whole, page by page; a Source refuses such
// a skill (unless raised with WithSkillLimits) and reads at most
// MaxCatalogSkills skills, holding at most MaxCatalogBytes of their files.
const (
	MaxSkillFiles    = 512      // manifest entries of one skill
	MaxSkillBytes    = 16 << 20 // bytes of one skill's files
	MaxCatalogSkills = 256      // skills of one catalogue
	MaxCatalogBytes  = 64 << 20 // bytes of one catalogue's files
)

// DynamicResources is what an entry's resources holds instead of a manifest
// when its file set is generated: no digests, nothing a client can verify.
const DynamicResources = "dynamic"

// Extension is the server's declaration of the extension.
type Extension struct {
	// DirectoryRead says the server answers resources/directory/read.
	DirectoryRead bool `json:"directoryRead,omitempty"`
}

// Entry is one skill as skills/list and skills/get describe it.
type Entry struct {
	// URI is the skill's SKILL.md: skill://NAME/SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is the SKILL.md's YAML frontmatter as JSON, every key the
	// file declares, verbatim.
	Frontmatter map[string]any `json:"frontmatter"`
	// Resources is the manifest: every file of the skill, SKILL.md
	// included, each with its digest and size. When decoding, an entry
	// whose resources is DynamicResources has Dynamic set and no manifest.
	Resources []*FileEntry `json:"-"`
	// Dynamic reports a "dynamic" file set: no manifest.
	Dynamic bool `json:"-"`
}

// FileEntry is one file of a skill's manifest.
type FileEntry struct {
	// URI is the file's skill:// URI; resources/read serves it.
	URI string `json:"uri"`
	// Digest is "sha256:" and the 64 lower-case hex digits of the SHA-256
	// of the file's bytes.
	Digest string `json:"digest"`
	// Size is the file's length in bytes.
	Size int64 `json:"size"`
}

// Cacheable carries the caching hints of the 2026-07-28 protocol era:
// results of that era must have them, earlier ones ignore them. ResultType
// is "complete" in that era, which every result of it declares, and empty
// before.
type Cacheable struct {
	TTLMs      int    `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
	ResultType string `json:"resultType,omitempty"`
}

// ListParams are the params of skills/list.
type ListParams struct {
	mcp.ParamsBase
	// Cursor is the nextCursor of the previous page; empty for the first.
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is the result of skills/list: one page of the catalogue.
type ListResult struct {
	mcp.ResultBase
	Skills     []*Entry `json:"skills"`
	NextCursor string   `json:"nextCursor,omitempty"`
	Cacheable
}

// GetParams are the params of skills/get.
type GetParams struct {
	mcp.ParamsBase
	// URI is the skill's SKILL.md URI, as its entry gives it.
	URI string `json:"uri"`
}

// GetResult is the result of skills/get: the entry in its envelope.
type GetResult struct {
	mcp.ResultBase
	Skill *Entry `json:"skill"`
	Cacheable
}

// DirectoryReadParams are the params of resources/directory/read.
type DirectoryReadParams struct {
	mcp.ParamsBase
	// URI is a folder of a skill: skill://NAME for its root,
	// skill://NAME/scripts for a subfolder.
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// DirectoryReadResult lists a folder's direct children: files, and folders
// with the MIME type DirectoryMIMEType.
type DirectoryReadResult struct {
	mcp.ResultBase
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
	Cacheable
}

// DirectoryMIMEType marks a folder among a directory's children.
const DirectoryMIMEType = "inode/directory"

// entryWire is an Entry on the wire: resources is a manifest or the string
// DynamicResources.
type entryWire struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

// MarshalJSON encodes the entry, its resources a manifest (an empty one
// when it has no files) or "dynamic".
func (e *Entry) MarshalJSON() ([]byte, error) {
	var res any = e.Resources
	switch {
	case e.Dynamic:
		res = DynamicResources
	case e.Resources == nil:
		res = []*FileEntry{}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	fm := e.Frontmatter
	if fm == nil {
		fm = map[string]any{}
	}
	return json.Marshal(entryWire{URI: e.URI, Frontmatter: fm, Resources: b})
}

// UnmarshalJSON decodes an entry: its uri and frontmatter object are
// required, and its resources a manifest or "dynamic".
func (e *Entry) UnmarshalJSON(b []byte) error {
	var w entryWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.URI == "" || w.Frontmatter == nil {
		return errors.New("a skill entry needs a uri and a frontmatter object")
	}
	*e = Entry{URI: w.URI, Frontmatter: w.Frontmatter}
	var dyn string
	if err := json.Unmarshal(w.Resources, &dyn); err == nil {
		if dyn != DynamicResources {
			return fmt.Errorf("a skill entry's resources is %q: neither a manifest nor %q", dyn, DynamicResources)
		}
		e.Dynamic = true
		return nil
	}
	if err := json.Unmarshal(w.Resources, &e.Resources); err != nil || e.Resources == nil {
		return fmt.Errorf("a skill entry's resources must be a manifest or %q", DynamicResources)
	}
	return nil
}
