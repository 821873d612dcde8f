package scriptrun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/valid"
)

// inputFilesHelp says, in the tools' declarations, what an input_files
// entry may be and the glob syntax.
const inputFilesHelp = "Files of this session to place in the working directory before the script starts, " +
	"at their paths, byte for byte (latest version): each entry is an artifact name (as output_files[].artifact or deleted_files[].artifact reports it, " +
	"or an uploaded file's), a file path as output_files[].name reports it (\"unpacked/word/document.xml\"), " +
	"or a glob over those paths: * and ? match within one folder, [abc] and [^abc] one character of a class or not, ** any number of folders " +
	"(\"unpacked/**\", \"**/*.xml\", \"*.csv\"). An entry that is an artifact's name means that artifact. " +
	"A file the run leaves unchanged is not an output again. " +
	"A file a run deletes, renames or moves away is listed in deleted_files and is no longer a file of the session: paths and globs no longer select it " +
	"(its artifact name still passes its last version in), until a run writes that path again."

// SessionFile is a file of the session that input_files can pass in: an
// artifact and the path, relative to the skill root, it is staged at.
type SessionFile struct {
	// Path is where the file is staged: the output path the artifact name
	// stands for (ArtifactPath), or, for an artifact this module did not
	// name (a user's upload), the name itself.
	Path string
	// Artifact is the artifact's name.
	Artifact string
}

// SessionFiles lists, sorted by path, the files input_files can pass in
// from arts: the session's current tree, every artifact of the session with
// a path inside the skill root that no run deleted (see DeletedFiles).
// User-scoped artifacts ("user:" names, shared across the user's sessions)
// are not the session's and are left out, as are names that stand for no
// usable path (one that climbs out with "..", say) and DeletedArtifact.
// When several artifacts stand for one path (an earlier release's name
// beside the current one), the one ArtifactName gives the path is listed.
// A nil arts has no files.
func SessionFiles(ctx context.Context, arts agent.Artifacts) ([]SessionFile, error) {
	cat, err := sessionCatalogue(ctx, arts)
	if err != nil || cat == nil {
		return nil, err
	}
	out := make([]SessionFile, 0, len(cat.paths))
	for _, p := range cat.paths {
		out = append(out, SessionFile{Path: p, Artifact: cat.byPath[p]})
	}
	return out, nil
}

// errUserScope is why a user-scoped artifact is not an input.
var errUserScope = errors.New("it is a user-scoped artifact, shared across the user's sessions, not a file of this session; input_files takes this session's files only")

// inputPath is the path, relative to the skill root, that the artifact name
// is staged at, or why it has none. A name ArtifactName made (of this
// release or an earlier one) stands for its file's path; any other name (a
// user's upload, another tool's artifact) is a file of that name in the skill
// root. The path must be one a script could have written: relative, clean,
// inside the skill root.
func inputPath(name string) (string, error) {
	if strings.HasPrefix(name, userScopePrefix) {
		return "", errUserScope
	}
	p, ok := ArtifactPath(name)
	if !ok {
		p = name
	}
	c, err := valid.Path(p)
	switch {
	case err != nil:
		return "", fmt.Errorf("it stands for the path %q, which cannot be staged: %w", DisplayPath(p), err)
	case c == ".":
		return "", fmt.Errorf("it stands for the skill folder itself, not a file")
	case c != p:
		return "", fmt.Errorf("it stands for the path %q, which is not clean (a script never writes one)", DisplayPath(p))
	}
	return p, nil
}

// sessionFile is one listed artifact as input_files sees it.
type sessionFile struct {
	path string // where it is staged; "" when it cannot be
	err  error  // why it cannot be
}

// catalogue is the session's artifacts, by name and by the path each is
// staged at.
type catalogue struct {
	byName  map[string]sessionFile
	byPath  map[string]string // path -> the artifact staged there: the tree
	paths   []string          // the keys of byPath, sorted
	deleted map[string]string // deleted path -> the artifact that held it
}

// sessionCatalogue lists the session's artifacts and reads its record of
// deleted files when it has one; nil without arts.
func sessionCatalogue(ctx context.Context, arts agent.Artifacts) (*catalogue, error) {
	if arts == nil {
		return nil, nil
	}
	list, err := arts.List(ctx)
	if err != nil {
		return nil, err
	}
	deleted := map[string]bool{}
	if slices.Contains(list.FileNames, DeletedArtifact) {
		if deleted, err = loadDeleted(ctx, arts); err != nil {
			return nil, err
		}
	}
	return newCatalogue(list.FileNames, deleted), nil
}

// newCatalogue sorts the listed names into a catalogue, leaving the paths
// of deleted out of the tree (their artifacts keep their names). Where
// several names stand for one path, the name ArtifactName gives the path
// wins, else the least name.
func newCatalogue(names []string, deleted map[string]bool) *catalogue {
	c := &catalogue{byName: make(map[string]sessionFile, len(names)), byPath: make(map[string]string, len(names)), deleted: map[string]string{}}
	for _, name := range slices.Sorted(slices.Values(names)) {
		if name == DeletedArtifact {
			continue
		}
		p, err := inputPath(name)
		c.byName[name] = sessionFile{path: p, err: err}
		if err != nil {
			continue
		}
		by := c.byPath
		if deleted[p] {
			by = c.deleted
		}
		if prev, ok := by[p]; ok && (prev == ArtifactName(p) || name != ArtifactName(p)) {
			continue
		}
		by[p] = name
	}
	c.paths = slices.Sorted(func(yield func(string) bool) {
		for p := range c.byPath {
			if !yield(p) {
				return
			}
		}
	})
	return c
}

// InputFile is one file input_files passes in.
type InputFile struct {
	index    int    // the index of the input_files entry that selected it first
	entry    string // that entry
	artifact string // the artifact it is loaded from
	path     string // where it is staged, relative to the skill root
	// deleted marks an artifact named in input_files whose path a run
	// deleted: it is passed in all the same (its name was asked for), and
	// is back in the tree when the run leaves it in place.
	deleted bool
}

// entryError is the refusal of one input_files entry.
func entryError(i int, entry, format string, args ...any) error {
	return fmt.Errorf("input_files[%d] %q: %s", i, entry, fmt.Sprintf(format, args...))
}

// checkInputEntries checks what can be told of input_files without the
// session: at most maxFiles entries, none empty, absolute, climbing out of
// the skill root or naming it, no malformed glob. Any artifact name that
// fails these stands for a path that fails them too.
func checkInputEntries(entries []string, maxFiles int) error {
	if len(entries) > maxFiles {
		return fmt.Errorf("argument %q has %d entries; at most %d files can be passed in one run", "input_files", len(entries), maxFiles)
	}
	for i, e := range entries {
		if _, _, err := parseEntry(e); err != nil {
			return entryError(i, e, "%v", err)
		}
	}
	return nil
}

// parseEntry reads an entry as a path or a glob: its clean form, and
// whether it is a glob (it has *, ? or [).
func parseEntry(e string) (clean string, glob bool, err error) {
	c, err := valid.Path(e)
	switch {
	case err != nil:
		return "", false, err
	case c == ".":
		return "", false, fmt.Errorf("it names the skill folder itself, not a file")
	}
	if !strings.ContainsAny(c, "*?[") {
		return c, false, nil
	}
	for _, seg := range strings.Split(c, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return "", false, fmt.Errorf("malformed glob: %w", err)
		}
	}
	return c, true, nil
}

// globMatch reports whether the path p matches the glob pattern, both clean
// and "/"-separated, the pattern checked by parseEntry. An element "**"
// matches any number of path elements, none included, except at the end,
// where it matches one or more (so "unpacked/**" is what is under unpacked/);
// any other element matches one path element as path.Match does.
//
// It is the classic wildcard match over elements, "**" the wildcard: each
// "**" moves forward at most once per element of p, so the cost is at most
// the product of the lengths, never exponential.
func globMatch(pattern, p string) bool {
	pat := strings.Split(pattern, "/")
	if pat[len(pat)-1] == "**" {
		pat = append(pat[:len(pat)-1], "*", "**")
	}
	name := strings.Split(p, "/")
	pi, ni := 0, 0
	star, starN := -1, 0 // the last "**" seen, and the element it resumes from
	for ni < len(name) {
		switch {
		case pi < len(pat) && pat[pi] == "**":
			star, starN = pi, ni
			pi++
		case pi < len(pat) && elementMatch(pat[pi], name[ni]):
			pi++
			ni++
		case star >= 0:
			starN++
			pi, ni = star+1, starN
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi] == "**" {
		pi++
	}
	return pi == len(pat)
}

// elementMatch matches one path element against one pattern element.
func elementMatch(pattern, elem string) bool {
	ok, err := path.Match(pattern, elem)
	return err == nil && ok
}

// selectInputs resolves input_files entries against the session's artifact
// names, without loading any: at most maxFiles distinct files. An entry is,
// in this order, the name of an artifact of the session (that artifact, at
// its path, even when a run deleted the path), a path of the session's tree
// (the artifact staged there), or a glob over the tree's paths (every
// artifact whose path matches, at least one). Several entries may select
// one file; two artifacts for one path, or a file that is also another's
// folder, are refused.
func selectInputs(entries []string, cat *catalogue, maxFiles int) ([]InputFile, error) {
	var out []InputFile
	byPath := map[string]int{} // path -> index in out
	add := func(i int, e, name, p string) error {
		_, deleted := cat.deleted[p]
		if j, ok := byPath[p]; ok {
			if out[j].artifact != name {
				return entryError(i, e, "selects artifact %q for the path %q, which input_files[%d] %q fills with artifact %q",
					name, DisplayPath(p), out[j].index, out[j].entry, out[j].artifact)
			}
			return nil
		}
		if len(out) == maxFiles {
			return entryError(i, e, "selects more than %d files; at most %d can be passed in one run", maxFiles, maxFiles)
		}
		byPath[p] = len(out)
		out = append(out, InputFile{index: i, entry: e, artifact: name, path: p, deleted: deleted})
		return nil
	}
	for i, e := range entries {
		if f, ok := cat.byName[e]; ok {
			if f.err != nil {
				return nil, entryError(i, e, "artifact %q cannot be passed in: %v", e, f.err)
			}
			if err := add(i, e, e, f.path); err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasPrefix(e, userScopePrefix) {
			return nil, entryError(i, e, "no such artifact in this session; a user-scoped artifact (\"user:\") is not passed in: input_files takes this session's files only")
		}
		c, glob, err := parseEntry(e)
		if err != nil {
			return nil, entryError(i, e, "%v", err)
		}
		if name, ok := cat.byPath[c]; ok {
			if err := add(i, e, name, c); err != nil {
				return nil, err
			}
			continue
		}
		if name, ok := cat.deleted[c]; ok && !glob {
			return nil, entryError(i, e, "a run deleted this file from the session; artifact %q keeps its versions: name it to pass its last version in", name)
		}
		if !glob {
			return nil, entryError(i, e, "no artifact of this session has that name or path")
		}
		matched := 0
		for _, p := range cat.paths {
			if !globMatch(c, p) {
				continue
			}
			matched++
			if err := add(i, e, cat.byPath[p], p); err != nil {
				return nil, err
			}
		}
		if matched == 0 {
			gone := 0
			for p := range cat.deleted {
				if globMatch(c, p) {
					gone++
				}
			}
			if gone > 0 {
				return nil, entryError(i, e, "the glob matches no file path of this session (it matches %d file(s) runs deleted)", gone)
			}
			return nil, entryError(i, e, "the glob matches no file path of this session")
		}
	}
	// A file of one input must not be a folder of another.
	for _, b := range out {
		for d := path.Dir(b.path); d != "."; d = path.Dir(d) {
			if j, ok := byPath[d]; ok {
				a := out[j]
				return nil, entryError(b.index, b.entry, "stages %q inside %q, which input_files[%d] %q stages as a file",
					DisplayPath(b.path), DisplayPath(a.path), a.index, a.entry)
			}
		}
	}
	return out, nil
}

// checkCollisions refuses an input that would replace a file the run
// already has (a skill's own file, the inline script), take the place of
// one of its folders, or need one of its files as a folder.
func checkCollisions(ins []InputFile, files []string) error {
	have := make(map[string]bool, len(files))
	dirs := map[string]bool{}
	for _, f := range files {
		have[f] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, in := range ins {
		switch {
		case have[in.path]:
			return entryError(in.index, in.entry, "would replace the file %q the run already has (a file of the skill, or the inline script): an input never replaces one", DisplayPath(in.path))
		case dirs[in.path]:
			return entryError(in.index, in.entry, "would replace the folder %q of the skill", DisplayPath(in.path))
		}
		for d := path.Dir(in.path); d != "."; d = path.Dir(d) {
			if have[d] {
				return entryError(in.index, in.entry, "needs %q as a folder, but it is a file the run already has (a file of the skill, or the inline script)", DisplayPath(d))
			}
		}
	}
	return nil
}

// inputLimits are the configured input limits with their defaults: the
// output files' (codeexec.Limits.WithDefaults).
func (r *Runner) inputLimits() codeexec.FileLimits {
	return r.InputLimits.WithDefaults(codeexec.Limits{}.WithDefaults().Output)
}

// ResolveInputs checks input_files against the session and the files the
// run already has (the skill's, the inline script), loading nothing. The
// response is the refusal, when there is one.
func (r *Runner) ResolveInputs(ctx context.Context, s Session, entries []string, have []string) ([]InputFile, *Response) {
	if len(entries) == 0 {
		return nil, nil
	}
	arts := s.ArtifactStore()
	if arts == nil {
		return nil, ErrorResponse(CodeInvalidArguments, "input_files cannot be used: this agent has no artifact service, so the session has no files")
	}
	cat, err := sessionCatalogue(ctx, arts)
	if err != nil {
		r.logger().Error("adkskills: listing the session's artifacts for input_files", "error", err)
		return nil, ErrorResponse(CodeExecutionError, "the session's files could not be listed (details in the agent's log)")
	}
	ins, err := selectInputs(entries, cat, r.inputLimits().MaxFiles)
	if err == nil {
		err = checkCollisions(ins, have)
	}
	if err != nil {
		return nil, ErrorResponse(CodeInvalidArguments, err.Error())
	}
	return ins, nil
}

// LoadInputs loads the latest version of each input, one at a time, within
// the input limits: bytes as stored (InlineData's, or a Text part's text).
// It stops at the first file over a limit, so at most one file beyond the
// limits is ever held.
func (r *Runner) LoadInputs(ctx context.Context, s Session, ins []InputFile) ([]codeexec.File, *Response) {
	if len(ins) == 0 {
		return nil, nil
	}
	lim := r.inputLimits()
	arts := s.ArtifactStore()
	files := make([]codeexec.File, 0, len(ins))
	var total int64
	for _, in := range ins {
		resp, err := arts.Load(ctx, in.artifact)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrorResponse(CodeInvalidArguments, entryError(in.index, in.entry, "artifact %q was removed before it could be loaded", in.artifact).Error())
		}
		if err != nil {
			r.logger().Error("adkskills: loading an input file", "artifact", in.artifact, "error", err)
			return nil, ErrorResponse(CodeExecutionError, fmt.Sprintf("artifact %q could not be loaded (details in the agent's log)", in.artifact))
		}
		var data []byte
		switch p := resp.Part; {
		case p == nil:
		case p.InlineData != nil:
			data = p.InlineData.Data
		case p.FileData != nil:
			return nil, ErrorResponse(CodeInvalidArguments, entryError(in.index, in.entry, "artifact %q refers to a file by URI; only artifacts holding their bytes can be passed in", in.artifact).Error())
		default:
			data = []byte(p.Text)
		}
		size := int64(len(data))
		if size > lim.MaxFileBytes {
			return nil, ErrorResponse(CodeInvalidArguments, entryError(in.index, in.entry, "artifact %q is %d bytes; an input file may have at most %d", in.artifact, size, lim.MaxFileBytes).Error())
		}
		if total += size; total > lim.MaxTotalBytes {
			return nil, ErrorResponse(CodeInvalidArguments, entryError(in.index, in.entry, "with artifact %q the input files are over %d bytes in all, the limit", in.artifact, lim.MaxTotalBytes).Error())
		}
		files = append(files, codeexec.File{Path: in.path, Data: data})
	}
	return files, nil
}

// InputFilesSchema declares input_files.
func InputFilesSchema() *genai.Schema {
	return &genai.Schema{Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}, Description: inputFilesHelp}
}

// InputEntries reads input_files and checks each entry's form.
func (r *Runner) InputEntries(a *Args) ([]string, error) {
	entries, err := a.Strings("input_files")
	if err != nil {
		return nil, err
	}
	if err := checkInputEntries(entries, r.inputLimits().MaxFiles); err != nil {
		return nil, err
	}
	return entries, nil
}
