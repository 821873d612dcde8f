package skilltoolset

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"strings"
	"unicode/utf8"

	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/internal/truncate"
)

// DefaultMaxReadChars is how many characters load_skill's instructions and
// load_skill_resource's content hold at most when WithMaxReadChars is not
// given: about 25,000 tokens.
const DefaultMaxReadChars = 100_000

// MaxCatalogueChars bounds the skill catalogue (<available_skills>) the
// toolset adds to the system instruction, and each answer of list_skills:
// whole entries are listed while they fit, and a line after them says how
// many are left and which list_skills offset lists them.
const MaxCatalogueChars = 30_000

// The three tools ADK's skill toolset declares. The toolset declares its own
// under the same names, with the same arguments and answers, because ADK's
// read a whole SKILL.md or resource (up to 10 MiB) into the answer: these
// stream what they read through a cap, and take an offset to read the rest.
const (
	listSkillsName   = "list_skills"
	loadSkillName    = "load_skill"
	loadResourceName = "load_skill_resource"
)

// reader answers the three read tools from one source under one cap.
type reader struct {
	source   skill.Source
	maxChars int
}

// tools returns list_skills, load_skill and load_skill_resource.
func (rd *reader) tools() ([]tool.Tool, error) {
	list, err := functiontool.New(functiontool.Config{
		Name: listSkillsName,
		Description: "Lists all available skills with their names and descriptions. " +
			"A catalogue too long for one answer lists the first skills and says which offset lists the rest.",
	}, rd.listSkills)
	if err != nil {
		return nil, err
	}
	load, err := functiontool.New(functiontool.Config{
		Name: loadSkillName,
		Description: "Loads the SKILL.md instructions for a given skill. " +
			fmt.Sprintf("Instructions over %d characters keep their beginning and end around a marker, and the warning says how to read the rest.", rd.maxChars),
	}, rd.loadSkill)
	if err != nil {
		return nil, err
	}
	res, err := functiontool.New(functiontool.Config{
		Name: loadResourceName,
		Description: "Loads a resource file (e.g., from references/ or assets/) associated with the specified skill. " +
			fmt.Sprintf("A file over %d characters keeps its beginning and end around a marker; offset and length (in characters) read any part of it.", rd.maxChars),
	}, rd.loadResource)
	if err != nil {
		return nil, err
	}
	return []tool.Tool{list, load, res}, nil
}

type listSkillsArgs struct {
	Offset int `json:"offset,omitempty" jsonschema:"How many skills to skip: the offset an earlier answer names to list the skills it left out (default 0)."`
}

type listSkillsResult struct {
	SkillsXML string `json:"skills"`
}

func (rd *reader) listSkills(ctx adkglue.ToolContext, args listSkillsArgs) (*listSkillsResult, error) {
	fms, err := rd.source.ListFrontmatters(ctx)
	if err != nil {
		return nil, err
	}
	if args.Offset < 0 || (args.Offset > 0 && args.Offset >= len(fms)) {
		return nil, fmt.Errorf("offset %d is out of range: there are %d skills", args.Offset, len(fms))
	}
	return &listSkillsResult{SkillsXML: catalogue(fms, args.Offset)}, nil
}

type loadSkillArgs struct {
	Name string `json:"name" jsonschema:"The name of the skill to load."`
}

// frontmatterJSON is ADK's rendering of a skill's frontmatter.
type frontmatterJSON struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	AllowedTools  []string          `json:"allowed-tools,omitempty"`
}

type loadSkillResult struct {
	SkillName    string           `json:"skill_name,omitempty"`
	Instructions string           `json:"instructions,omitempty"`
	Frontmatter  *frontmatterJSON `json:"frontmatter,omitempty"`
	// Warning says what the cap cut and how to read it.
	Warning string `json:"warning,omitempty"`
}

func (rd *reader) loadSkill(ctx adkglue.ToolContext, args loadSkillArgs) (*loadSkillResult, error) {
	if args.Name == "" {
		return nil, errors.New("skill name is required to load a skill")
	}
	fm, err := rd.source.LoadFrontmatter(ctx, args.Name)
	if err != nil {
		return nil, fmt.Errorf("load frontmatter for skill %q: %w", args.Name, err)
	}
	text, total, hint, err := rd.instructions(ctx, args.Name)
	if err != nil {
		return nil, fmt.Errorf("load instructions for skill %q: %w", args.Name, err)
	}
	res := &loadSkillResult{SkillName: args.Name, Instructions: text, Frontmatter: &frontmatterJSON{
		Name: fm.Name, Description: fm.Description, License: fm.License, Compatibility: fm.Compatibility,
		Metadata: fm.Metadata, AllowedTools: fm.AllowedTools,
	}}
	if total > int64(rd.maxChars) {
		from, to := truncate.Elided(total, rd.maxChars)
		res.Warning = fmt.Sprintf("The instructions are %d characters, over the %d-character cap: the marker stands for characters %d to %d of them. %s",
			total, rd.maxChars, from, to, hint(from))
	}
	return res, nil
}

// instructions reads a skill's instructions through the cap: streamed from
// a skillfs source, taken whole from any other (skill.Source has no
// stream). hint says how to read the cut characters from offset from on.
func (rd *reader) instructions(ctx context.Context, name string) (text string, total int64, hint func(from int64) string, err error) {
	src, ok := rd.source.(*skillfs.Source)
	if !ok {
		s, err := rd.source.LoadInstructions(ctx, name)
		if err != nil {
			return "", 0, nil, err
		}
		hint = func(int64) string { return "This skill source cannot read them in parts." }
		return truncate.String(s, rd.maxChars), int64(utf8.RuneCountInString(s)), hint, nil
	}
	body, before, err := src.Instructions(ctx, name)
	if err != nil {
		return "", 0, nil, err
	}
	defer body.Close()
	c := truncate.NewCapper(rd.maxChars)
	if _, err := io.Copy(c, body); err != nil {
		return "", 0, nil, err
	}
	hint = func(from int64) string {
		return fmt.Sprintf("Read them with %s: resource_path %q, offset %d, length up to %d.", loadResourceName, skillfs.SkillFile, before+from, rd.maxChars)
	}
	return c.String(), c.TotalChars(), hint, nil
}

type loadResourceArgs struct {
	SkillName    string `json:"skill_name" jsonschema:"The name of the skill."`
	ResourcePath string `json:"resource_path" jsonschema:"The relative path to the resource (e.g., 'references/my_doc.md', 'assets/template.txt', or 'scripts/setup.sh')."`
	Offset       int64  `json:"offset,omitempty" jsonschema:"Read from this character on (0 is the first), to read part of a long file."`
	Length       int64  `json:"length,omitempty" jsonschema:"Read at most this many characters from offset (default and most: the cap)."`
}

type loadResourceResult struct {
	SkillName string `json:"skill_name,omitempty"`
	Path      string `json:"path,omitempty"`
	Content   string `json:"content,omitempty"`
	// TotalChars is the file's length in characters, given when the answer
	// holds less than the whole file.
	TotalChars int64 `json:"total_chars,omitempty"`
	// NextOffset is where the next part of a read by range starts, given
	// when the file goes on.
	NextOffset int64 `json:"next_offset,omitempty"`
	// Warning says what the cap cut and how to read it.
	Warning string `json:"warning,omitempty"`
}

func (rd *reader) loadResource(ctx adkglue.ToolContext, args loadResourceArgs) (*loadResourceResult, error) {
	switch {
	case args.SkillName == "":
		return nil, errors.New("skill name is required to load a resource")
	case args.ResourcePath == "":
		return nil, fmt.Errorf("resource path is required to load a resource for skill %q", args.SkillName)
	case args.Offset < 0:
		return nil, fmt.Errorf("offset must be 0 or more, got %d", args.Offset)
	case args.Length < 0:
		return nil, fmt.Errorf("length must be 1 or more, got %d", args.Length)
	}
	r, err := rd.source.LoadResource(ctx, args.SkillName, args.ResourcePath)
	if err != nil {
		return nil, fmt.Errorf("load resource '%s' from skill '%s': %w", args.ResourcePath, args.SkillName, err)
	}
	defer r.Close()
	res := &loadResourceResult{SkillName: args.SkillName, Path: args.ResourcePath}
	if args.Offset == 0 && args.Length == 0 {
		c := truncate.NewCapper(rd.maxChars)
		if _, err := io.Copy(c, r); err != nil {
			return nil, fmt.Errorf("read resource '%s' from skill '%s': %w", args.ResourcePath, args.SkillName, err)
		}
		res.Content = c.String()
		if c.Truncated() {
			total := c.TotalChars()
			from, to := truncate.Elided(total, rd.maxChars)
			res.TotalChars = total
			res.Warning = fmt.Sprintf("The file is %d characters, over the %d-character cap: the marker stands for characters %d to %d. Read them with offset %d and length up to %d.",
				total, rd.maxChars, from, to, from, rd.maxChars)
		}
		return res, nil
	}
	length := args.Length
	if length == 0 || length > int64(rd.maxChars) {
		length = int64(rd.maxChars)
	}
	text, total, err := truncate.Window(r, args.Offset, length)
	if err != nil {
		return nil, fmt.Errorf("read resource '%s' from skill '%s': %w", args.ResourcePath, args.SkillName, err)
	}
	if args.Offset >= total && args.Offset > 0 {
		return nil, fmt.Errorf("offset %d is past the end of '%s': it has %d characters", args.Offset, args.ResourcePath, total)
	}
	res.Content, res.TotalChars = text, total
	if next := args.Offset + int64(utf8.RuneCountInString(text)); next < total {
		res.NextOffset = next
	}
	return res, nil
}

// catalogue renders the skills from offset on as <available_skills>, in
// ADK's format (name and description XML-escaped, each on its own line),
// with each description cut at skillfs.MaxDescriptionBytes characters. It
// lists at least one skill, then whole entries while the whole fits in
// MaxCatalogueChars, and ends with a line that counts the skills left out
// and names the list_skills offset that lists them.
func catalogue(fms []*skill.Frontmatter, offset int) string {
	const open, closing = "<available_skills>\n", "</available_skills>"
	var b strings.Builder
	b.WriteString(open)
	used := len(open) + len(closing)
	i := offset
	for ; i < len(fms); i++ {
		entry := "<skill>\n<name>\n" + html.EscapeString(truncate.String(fms[i].Name, skillfs.MaxDescriptionBytes)) + "\n</name>\n" +
			"<description>\n" + html.EscapeString(truncate.String(fms[i].Description, skillfs.MaxDescriptionBytes)) + "\n</description>\n</skill>\n"
		n := utf8.RuneCountInString(entry)
		if i > offset && used+n > MaxCatalogueChars {
			break
		}
		b.WriteString(entry)
		used += n
	}
	b.WriteString(closing)
	if left := len(fms) - i; left > 0 {
		fmt.Fprintf(&b, "\n... [%d more skills not listed: over the %d-character catalogue cap; %s with offset %d lists them] ...",
			left, MaxCatalogueChars, listSkillsName, i)
	}
	return b.String()
}
