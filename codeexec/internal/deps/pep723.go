package deps

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Inline script metadata (PEP 723): a comment block in a Python script,
//
//	# /// script
//	# requires-python = ">=3.11"
//	# dependencies = ["defusedxml>=0.7"]
//	# ///
//
// read exactly as the specification's reference implementation reads it:
// its regular expression over the text with universal newlines, an error
// for two blocks of the same type, an unclosed block ignored, each content
// line stripped of "# " or "#", and the rest parsed as TOML.

// metadataRE is the specification's pattern. Go's regexp picks the match a
// backtracking engine would, so the block ends at the last "# ///" of its
// run of comment lines, as it does in Python.
var metadataRE = regexp.MustCompile(`(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$`)

// ScriptMetadata is what a script's "# /// script" block declares.
type ScriptMetadata struct {
	// Dependencies are the "dependencies" entries, in order.
	Dependencies []Requirement
	// RequiresPython is the "requires-python" specifier in normal form,
	// "" when absent.
	RequiresPython string

	requiresPython specifier
}

// ParseScriptMetadata reads the "script" block of a Python script's source.
// found is false when the script has none (or only an unclosed one). Two
// blocks, TOML that does not parse, or a field of the wrong type or
// content is an error wrapping ErrDeclaration.
func ParseScriptMetadata(src []byte) (meta *ScriptMetadata, found bool, err error) {
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var blocks []string
	for _, m := range metadataRE.FindAllStringSubmatch(text, -1) {
		if m[1] == "script" {
			blocks = append(blocks, m[2])
		}
	}
	switch len(blocks) {
	case 0:
		return nil, false, nil
	case 1:
	default:
		return nil, true, fmt.Errorf("%w: %d \"# /// script\" blocks: PEP 723 allows one", ErrDeclaration, len(blocks))
	}
	var content strings.Builder
	for _, line := range splitLines(blocks[0]) {
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			content.WriteString(rest)
		} else {
			content.WriteString(line[1:])
		}
	}
	doc, err := parseTOML(content.String())
	if err != nil {
		return nil, true, fmt.Errorf("%w: \"# /// script\" block: %w", ErrDeclaration, err)
	}
	meta = &ScriptMetadata{}
	if v, ok := doc["requires-python"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, true, fmt.Errorf("%w: \"# /// script\" block: requires-python must be a string", ErrDeclaration)
		}
		sp, err := parseSpecifier(s)
		if err != nil {
			return nil, true, fmt.Errorf("%w: \"# /// script\" block: requires-python: %w", ErrDeclaration, err)
		}
		meta.requiresPython, meta.RequiresPython = sp, sp.String()
	}
	if v, ok := doc["dependencies"]; ok {
		list, ok := v.([]any)
		if !ok {
			return nil, true, fmt.Errorf("%w: \"# /// script\" block: dependencies must be an array of strings", ErrDeclaration)
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				return nil, true, fmt.Errorf("%w: \"# /// script\" block: dependencies must be an array of strings", ErrDeclaration)
			}
			r, err := ParseRequirement(s)
			if err != nil {
				return nil, true, fmt.Errorf("%w: \"# /// script\" block: %w", ErrDeclaration, err)
			}
			meta.Dependencies = append(meta.Dependencies, r)
		}
	}
	if v, ok := doc["tool"]; ok {
		if _, ok := v.(map[string]any); !ok {
			return nil, true, fmt.Errorf("%w: \"# /// script\" block: tool must be a table", ErrDeclaration)
		}
	}
	return meta, true, nil
}

// splitLines splits s (without \r: newlines are universal already) as
// Python's str.splitlines(keepends=True) does: at \n, \v, \f, \x1c,
// \x1d, \x1e, \x85, U+2028 and U+2029, each line keeping its end.
func splitLines(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			end := i + utf8.RuneLen(r)
			out = append(out, s[start:end])
			start = end
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
