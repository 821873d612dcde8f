package skillfs

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Bounds on what Fields builds: YAML aliases can make a small frontmatter
// expand into a huge value, and nesting has no end of its own.
const (
	maxFieldDepth = 64
	maxFieldNodes = 100_000
)

// Fields returns the frontmatter of a SKILL.md as JSON values, every key the
// file declares (Parse keeps only the specification's): what a YAML 1.2
// reader of the core schema (the one JavaScript's yaml package uses by
// default) makes of it, so that a client reading the same file finds the
// same fields. Plain scalars resolve as that schema says (null, true/false,
// decimal, 0o octal and 0x hex integers, floats; everything else, dates
// included, is a string); quoted and block scalars are strings; aliases are
// expanded; "<<" is an ordinary key. A value JSON cannot carry (.inf, .nan)
// is kept as its text. Fields does not validate the skill: Parse does.
func Fields(content []byte) (map[string]any, error) {
	yamlBytes, _, err := split(bytes.TrimPrefix(content, bom))
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(yamlBytes, &doc); err != nil {
		return nil, yamlError(err)
	}
	if len(doc.Content) == 0 {
		return map[string]any{}, nil
	}
	b := &fieldBuilder{}
	v, err := b.value(doc.Content[0], 0)
	if err != nil {
		return nil, &ParseError{Msg: err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ParseError{Line: 2, Msg: "frontmatter must be a YAML mapping of keys to values"}
	}
	return m, nil
}

// fieldBuilder converts YAML nodes to JSON values, counting what it builds.
type fieldBuilder struct {
	nodes int
}

func (b *fieldBuilder) value(n *yaml.Node, depth int) (any, error) {
	if b.nodes++; b.nodes > maxFieldNodes {
		return nil, fmt.Errorf("the frontmatter expands to more than %d values (YAML aliases)", maxFieldNodes)
	}
	if depth > maxFieldDepth {
		return nil, fmt.Errorf("the frontmatter nests deeper than %d levels", maxFieldDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return b.value(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be a scalar", k.Line+1)
			}
			v, err := b.value(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := b.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		return scalar(n), nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line+1)
}

// The plain scalars of the YAML 1.2 core schema that are not strings.
var (
	decimalRe = regexp.MustCompile(`^[-+]?[0-9]+$`)
	octalRe   = regexp.MustCompile(`^0o[0-7]+$`)
	hexRe     = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	floatRe   = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// scalar resolves a scalar node: by its explicit tag, else, when plain, by
// the core schema; quoted and block scalars are strings.
func scalar(n *yaml.Node) any {
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.ShortTag() {
		case "!!null":
			return nil
		case "!!bool", "!!int", "!!float":
			if v, ok := plain(n.Value); ok {
				return v
			}
		}
		return n.Value
	}
	if n.Style != 0 {
		return n.Value
	}
	if v, ok := plain(n.Value); ok {
		return v
	}
	return n.Value
}

// plain resolves a plain scalar's text; ok is false for a string.
func plain(s string) (any, bool) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil, true
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	switch {
	case decimalRe.MatchString(s):
		return integer(strings.TrimPrefix(s, "+"), 10)
	case octalRe.MatchString(s):
		return integer(s[2:], 8)
	case hexRe.MatchString(s):
		return integer(s[2:], 16)
	case floatRe.MatchString(s):
		return finite(s)
	}
	return nil, false
}

// integer parses digits in base: an int64, or, for a decimal beyond it, the
// float a JavaScript reader gets (a huge octal or hex stays its text).
func integer(digits string, base int) (any, bool) {
	if i, err := strconv.ParseInt(digits, base, 64); err == nil {
		return i, true
	}
	if base != 10 {
		return nil, false
	}
	return finite(digits)
}

// finite parses a float that JSON can carry.
func finite(s string) (any, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, false
	}
	return f, true
}
