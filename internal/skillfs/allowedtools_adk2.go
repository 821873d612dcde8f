//go:build ignore

package skillfs

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// allowedToolsFormat and errAllowedToolsShape are ADK v1.7.0's messages for
// an allowed-tools value it cannot read.
const allowedToolsFormat = "allowed-tools must be a whitespace- or comma-separated list of Tool or Tool(well-balanced expression)"

var errAllowedToolsShape = errors.New("allowed-tools must be a string or a sequence of strings")

// allowedTools prepares an allowed-tools value for ADK's parser. ADK v2.2.0
// decodes allowed-tools straight into a []string, so the specification's
// form, a string of tools separated by spaces or commas ("Read Bash(git:*)"),
// fails the whole skill there. This turns such a string into the list ADK v2
// reads, split exactly as ADK v1.7.0 splits it (allowedtools_adk1.go leaves
// the splitting to ADK v1), so a skill loads, or is refused with the same
// message, under either major.
func allowedTools(v *yaml.Node) error {
	switch {
	case v.Kind == yaml.SequenceNode:
		return nil
	case v.Kind != yaml.ScalarNode:
		return errAllowedToolsShape
	case v.Tag == "!!null":
		return nil
	case v.Tag != "!!str":
		return errAllowedToolsShape
	}
	tools, err := splitAllowedTools(v.Value)
	if err != nil {
		return err
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: v.Line, Column: v.Column}
	for _, t := range tools {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t})
	}
	*v = *seq
	return nil
}

// splitAllowedTools splits tool names or tool expressions separated by
// whitespace or commas; separators inside balanced parentheses are kept.
// This is ADK v1.7.0's splitter (tool/skilltoolset/skill/frontmatter.go).
func splitAllowedTools(value string) ([]string, error) {
	var tools []string
	var current strings.Builder
	depth := 0
	flush := func() {
		if current.Len() > 0 {
			tools = append(tools, current.String())
			current.Reset()
		}
	}
	for _, r := range value {
		switch {
		case r == '(':
			depth++
			current.WriteRune(r)
		case r == ')':
			if depth == 0 {
				return nil, fmt.Errorf("%s: unexpected ')'", allowedToolsFormat)
			}
			depth--
			current.WriteRune(r)
		case depth == 0 && (unicode.IsSpace(r) || r == ','):
			flush()
		default:
			current.WriteRune(r)
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("%s: unclosed '('", allowedToolsFormat)
	}
	flush()
	return tools, nil
}
