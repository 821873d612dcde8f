// Package skillfs reads Agent Skills from an fs.FS: a lenient SKILL.md
// parser that delegates validation to ADK's own (skill.ParseBytes), and a
// skill.Source whose skills expose their whole folder.
package skillfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/adk/tool/skilltoolset/skill"
	"gopkg.in/yaml.v3"
)

// SpecKeys are the frontmatter keys of the Agent Skills specification, the
// ones ADK's parser accepts.
var SpecKeys = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}

// Parsed is a SKILL.md, read leniently.
type Parsed struct {
	// Frontmatter is what ADK's parser made of the specification's keys.
	Frontmatter *skill.Frontmatter
	// Body is the Markdown after the frontmatter.
	Body string
	// Extra lists, in file order, the frontmatter keys outside the
	// specification (argument-hint, user-invocable, version, …) that other
	// clients write; they are tolerated and left out.
	Extra []string
	// Warnings are rules the skill breaks that do not keep it from loading
	// (a description over MaxDescriptionBytes); Validate reports them as
	// errors.
	Warnings []string
}

// clone copies p deeply enough that changing the copy (its frontmatter's
// fields and maps, its lists) leaves p as it was; nil stays nil.
func (p *Parsed) clone() *Parsed {
	if p == nil {
		return nil
	}
	c := *p
	if p.Frontmatter != nil {
		fm := *p.Frontmatter
		fm.Metadata = maps.Clone(fm.Metadata)
		fm.AllowedTools = slices.Clone(fm.AllowedTools)
		c.Frontmatter = &fm
	}
	c.Extra, c.Warnings = slices.Clone(p.Extra), slices.Clone(p.Warnings)
	return &c
}

// MaxDescriptionBytes is ADK's limit on a description: skill.Validate
// counts bytes where the specification says 1,024 characters.
const MaxDescriptionBytes = 1024

// MaxFrontmatterBytes bounds a SKILL.md's frontmatter, from its opening
// '---' line through the end of its closing one (a byte-order mark before it
// not counted). The loader reads no more of a SKILL.md than this for the
// catalogue, however long the body; a longer frontmatter is a ParseError.
const MaxFrontmatterBytes = 64 << 10

// ParseError is a SKILL.md that cannot be read, with the 1-based line of the
// file it concerns when one is known (0 otherwise).
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Is makes a ParseError match skill.ErrInvalidFrontmatter.
func (e *ParseError) Is(target error) bool { return target == skill.ErrInvalidFrontmatter }

var (
	bom          = []byte("\ufeff")
	yamlLineRe   = regexp.MustCompile(`line (\d+):? ?`)
	errNoOpening = &ParseError{Line: 1, Msg: "SKILL.md must start with a '---' line opening the YAML frontmatter"}
	errTooLong   = &ParseError{Line: 1, Msg: fmt.Sprintf("the frontmatter does not end within its first %d bytes", MaxFrontmatterBytes)}
)

// Parse reads a SKILL.md leniently, as the Agent Skills client guidance asks:
// keys outside the specification are dropped (and reported in Extra) instead
// of failing the skill, then ADK's own parser validates what remains. Errors
// are *ParseError with the line of the file when the YAML parser gives one.
//
// A description over MaxDescriptionBytes does not fail the skill either: it
// is kept whole, as written, with a warning in Warnings. Hiding a skill for
// a few characters too many helps nobody (anthropics/skills' claude-api is
// 1,068 characters long, and ends with the cases it must not be used for);
// Validate still reports it, since other clients refuse it.
func Parse(content []byte) (*Parsed, error) {
	content = bytes.TrimPrefix(content, bom)
	yamlBytes, bodyStart, err := split(content)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(yamlBytes, &doc); err != nil {
		return nil, yamlError(err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &ParseError{Line: 2, Msg: "frontmatter must be a YAML mapping of keys to values"}
	}
	m := doc.Content[0]
	kept := &yaml.Node{Kind: yaml.MappingNode}
	var extra, warnings []string
	longDesc, hasLongDesc := "", false
	seen := map[string]bool{}
	for i := 0; i < len(m.Content); i += 2 { // a mapping's content is key, value, …
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			return nil, &ParseError{Line: k.Line + 1, Msg: fmt.Sprintf("key %q is defined twice", k.Value)}
		}
		seen[k.Value] = true
		if isSpecKey(k.Value) {
			if err := checkShape(k, v); err != nil {
				return nil, err
			}
			if k.Value == "description" && v.Kind == yaml.ScalarNode && len(v.Value) > MaxDescriptionBytes {
				// ADK validates a stand-in; the description is put back after.
				longDesc, hasLongDesc = v.Value, true
				warnings = append(warnings, longDescriptionWarning(v.Value))
				v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "description"}
			}
			if k.Value == "allowed-tools" {
				if err := allowedTools(v); err != nil {
					return nil, &ParseError{Line: k.Line + 1, Msg: err.Error()}
				}
			}
			kept.Content = append(kept.Content, k, v)
		} else {
			extra = append(extra, k.Value)
		}
	}
	pruned, err := yaml.Marshal(kept)
	if err != nil {
		return nil, &ParseError{Msg: fmt.Sprintf("frontmatter: %v", err)}
	}
	fm, _, err := skill.ParseBytes(slices.Concat([]byte("---\n"), pruned, []byte("---\n")))
	if err != nil {
		// ADK parsed the rebuilt text: its own line numbers would mislead.
		msg := yamlLineRe.ReplaceAllString(adkMessage(err), "")
		return nil, &ParseError{Line: keyLine(m, err), Msg: strings.Join(strings.Fields(msg), " ")}
	}
	if hasLongDesc {
		fm.Description = longDesc
	}
	return &Parsed{Frontmatter: fm, Body: string(content[bodyStart:]), Extra: extra, Warnings: warnings}, nil
}

// longDescriptionWarning says that a description is over the limit and
// loaded anyway.
func longDescriptionWarning(desc string) string {
	return fmt.Sprintf("the description is %s, over the limit of %d: the skill is loaded with it whole, but other clients may refuse it",
		descriptionSize(desc), MaxDescriptionBytes)
}

// descriptionSize is a description's length in characters, and in bytes
// when they differ (ADK counts bytes).
func descriptionSize(desc string) string {
	n := utf8.RuneCountInString(desc)
	if n == len(desc) {
		return fmt.Sprintf("%d characters", n)
	}
	return fmt.Sprintf("%d characters, %d bytes (ADK counts bytes)", n, len(desc))
}

// split finds the frontmatter between the opening and closing '---' lines
// and returns it with the offset of the body. A frontmatter that does not
// end within MaxFrontmatterBytes is an error, so that content cut after
// MaxFrontmatterBytes+1 bytes (readHead) splits as the whole would.
func split(content []byte) ([]byte, int, error) {
	first, rest, ok := bytes.Cut(content, []byte("\n"))
	if !ok || string(bytes.TrimSuffix(first, []byte("\r"))) != "---" {
		return nil, 0, errNoOpening
	}
	off := len(first) + 1
	start := off
	for {
		l, next, found := bytes.Cut(rest, []byte("\n"))
		end := off + len(l)
		if found {
			end++
		}
		if end > MaxFrontmatterBytes {
			return nil, 0, errTooLong
		}
		if string(bytes.TrimSuffix(l, []byte("\r"))) == "---" {
			return content[start:off], end, nil
		}
		if !found {
			return nil, 0, &ParseError{Line: 1, Msg: "the frontmatter opened on line 1 has no closing '---' line"}
		}
		off = end
		rest = next
	}
}

// readHead reads the start of a SKILL.md from f: all of it when it is
// short, else a byte-order mark's worth and MaxFrontmatterBytes+1 bytes,
// which split tells apart from a whole file.
func readHead(f fs.File) ([]byte, error) {
	n := int64(len(bom) + MaxFrontmatterBytes + 1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < n {
		n = fi.Size() + 1 // one more, to see EOF (or a file that grew)
	}
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return buf[:k], err
}

// frontmatterEnd returns where the body of a SKILL.md starts in head (its
// first bytes, a byte-order mark included), or split's error.
func frontmatterEnd(head []byte) (int, error) {
	content := bytes.TrimPrefix(head, bom)
	_, end, err := split(content)
	return len(head) - len(content) + end, err
}

// checkShape reports the first problem of shapeProblems.
func checkShape(k, v *yaml.Node) error {
	if probs := shapeProblems(k, v); len(probs) > 0 {
		return probs[0]
	}
	return nil
}

// shapeProblems reports a spec key whose value has the wrong YAML shape (an
// unquoted "[TODO: …]" reads as a list; metadata maps strings to strings),
// each at its file line.
func shapeProblems(k, v *yaml.Node) []*ParseError {
	want := yaml.ScalarNode
	switch k.Value {
	case "metadata":
		want = yaml.MappingNode
	case "allowed-tools":
		return nil // a string or a list: ADK's parser decides
	}
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil
	}
	if v.Kind != want {
		return []*ParseError{{Line: v.Line + 1, Msg: fmt.Sprintf("%q must be %s, got %s", k.Value, kindName(want), kindName(v.Kind))}}
	}
	var probs []*ParseError
	if want == yaml.MappingNode {
		for j := 0; j < len(v.Content); j += 2 {
			if mk, mv := v.Content[j], v.Content[j+1]; mv.Kind != yaml.ScalarNode {
				probs = append(probs, &ParseError{Line: mk.Line + 1, Msg: fmt.Sprintf("metadata %q must be a string, got %s", mk.Value, kindName(mv.Kind))})
			}
		}
	}
	return probs
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.ScalarNode:
		return "a string"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return "an alias or document"
	}
}

func isSpecKey(k string) bool {
	for _, s := range SpecKeys {
		if k == s {
			return true
		}
	}
	return false
}

// yamlError turns a YAML error's frontmatter line into a file line (the
// frontmatter starts on line 2).
func yamlError(err error) error {
	msg := err.Error()
	line := 0
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		line = n + 1
		msg = yamlLineRe.ReplaceAllString(msg, "")
	}
	return &ParseError{Line: line, Msg: "invalid YAML: " + msg}
}

// keyLine points an ADK validation error at the line of the key it names.
func keyLine(m *yaml.Node, err error) int {
	msg := err.Error()
	for i := 0; i < len(m.Content); i += 2 {
		k := m.Content[i]
		if bytes.Contains([]byte(msg), []byte(k.Value)) {
			return k.Line + 1
		}
	}
	return 0
}

// adkMessage strips the wrapping ADK's parser adds around the reason.
func adkMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
