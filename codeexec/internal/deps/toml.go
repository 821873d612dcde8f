package deps

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A TOML 1.0 reader for the metadata of a PEP 723 block: tables, arrays of
// tables, dotted and quoted keys, the four kinds of strings, integers,
// floats, booleans, arrays and inline tables. Dates and times are checked
// for shape and kept as their text. What TOML forbids (a key defined twice,
// a table defined twice, a control character in a string, an inline table
// extended) is an error, as Python's tomllib makes it one.

// tomlTable is a table; an inline table is marked so that it is never
// extended.
type tomlTable struct {
	m        map[string]any
	inline   bool // { ... }: closed
	explicit bool // defined by a [header]
	dotted   bool // created by a dotted key of a key/value pair
}

// maxTOMLDepth bounds nested arrays and inline tables.
const maxTOMLDepth = 64

// parseTOML parses a document into plain Go values: string, int64,
// float64, bool, []any and map[string]any.
func parseTOML(src string) (map[string]any, error) {
	if !utf8.ValidString(src) {
		return nil, fmt.Errorf("TOML is not valid UTF-8")
	}
	p := &tomlParser{s: src, line: 1}
	root := &tomlTable{m: map[string]any{}, explicit: true}
	cur := root
	for {
		p.skipBlank()
		if p.eof() {
			break
		}
		var err error
		if p.peek() == '[' {
			cur, err = p.header(root)
		} else {
			err = p.keyValue(cur)
		}
		if err != nil {
			return nil, fmt.Errorf("TOML line %d: %w", p.line, err)
		}
		if err := p.endOfLine(); err != nil {
			return nil, fmt.Errorf("TOML line %d: %w", p.line, err)
		}
	}
	return plain(root).(map[string]any), nil
}

// plain turns parsed tables into maps.
func plain(v any) any {
	switch x := v.(type) {
	case *tomlTable:
		out := make(map[string]any, len(x.m))
		for k, e := range x.m {
			out[k] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case *tomlArrayOfTables:
		out := make([]any, len(x.tables))
		for i, e := range x.tables {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// tomlArrayOfTables is an array made by [[headers]].
type tomlArrayOfTables struct {
	tables []*tomlTable
}

// add appends a new table and returns it.
func (a *tomlArrayOfTables) add() *tomlTable {
	t := &tomlTable{m: map[string]any{}, explicit: true}
	a.tables = append(a.tables, t)
	return t
}

type tomlParser struct {
	s    string
	i    int
	line int
}

func (p *tomlParser) eof() bool  { return p.i >= len(p.s) }
func (p *tomlParser) peek() byte { return p.s[p.i] }

// skipSpace skips spaces and tabs.
func (p *tomlParser) skipSpace() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

// skipBlank skips whitespace, newlines and comments (a bad comment stops
// the skip; endOfLine reports it).
func (p *tomlParser) skipBlank() {
	for !p.eof() {
		switch c := p.peek(); {
		case c == ' ' || c == '\t':
			p.i++
		case c == '\n':
			p.i++
			p.line++
		case c == '\r' && strings.HasPrefix(p.s[p.i:], "\r\n"):
			p.i += 2
			p.line++
		case c == '#':
			if p.comment() != nil {
				return
			}
		default:
			return
		}
	}
}

// comment skips a comment up to the end of its line.
func (p *tomlParser) comment() error {
	line, _, _ := strings.Cut(p.s[p.i:], "\n")
	text := strings.TrimSuffix(line, "\r")
	if c := badControl(text); c >= 0 {
		return fmt.Errorf("control character %U in a comment", c)
	}
	p.i += len(text)
	return nil
}

// badControl returns the first control character TOML forbids in s (all
// but tab), or -1.
func badControl(s string) rune {
	for _, r := range s {
		if r != '\t' && (r < 0x20 || r == 0x7f) {
			return r
		}
	}
	return -1
}

// endOfLine consumes optional space and a comment, then a newline or the
// end.
func (p *tomlParser) endOfLine() error {
	p.skipSpace()
	if !p.eof() && p.peek() == '#' {
		if err := p.comment(); err != nil {
			return err
		}
	}
	switch {
	case p.eof():
		return nil
	case p.peek() == '\n':
		p.i++
		p.line++
		return nil
	case strings.HasPrefix(p.s[p.i:], "\r\n"):
		p.i += 2
		p.line++
		return nil
	}
	return fmt.Errorf("unexpected %q after a value", p.rest())
}

// rest is a short view of what follows, for errors.
func (p *tomlParser) rest() string {
	r := p.s[p.i:]
	if i := strings.IndexByte(r, '\n'); i >= 0 {
		r = r[:i]
	}
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

// header parses [a.b] or [[a.b]] and returns the table that follows.
func (p *tomlParser) header(root *tomlTable) (*tomlTable, error) {
	array := strings.HasPrefix(p.s[p.i:], "[[")
	p.i++
	if array {
		p.i++
	}
	p.skipSpace()
	keys, err := p.key()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	closing := "]"
	if array {
		closing = "]]"
	}
	if !strings.HasPrefix(p.s[p.i:], closing) {
		return nil, fmt.Errorf("table header not closed with %s", closing)
	}
	p.i += len(closing)
	t := root
	for _, k := range keys[:len(keys)-1] {
		if t, err = descend(t, k, false); err != nil {
			return nil, err
		}
	}
	last := keys[len(keys)-1]
	if array {
		switch x := t.m[last].(type) {
		case nil:
			a := &tomlArrayOfTables{}
			t.m[last] = a
			return a.add(), nil
		case *tomlArrayOfTables:
			return x.add(), nil
		}
		return nil, fmt.Errorf("key %q is already defined", strings.Join(keys, "."))
	}
	switch x := t.m[last].(type) {
	case nil:
		nt := &tomlTable{m: map[string]any{}, explicit: true}
		t.m[last] = nt
		return nt, nil
	case *tomlTable:
		if x.explicit || x.inline || x.dotted {
			return nil, fmt.Errorf("table %q is already defined", strings.Join(keys, "."))
		}
		x.explicit = true
		return x, nil
	}
	return nil, fmt.Errorf("key %q is already defined", strings.Join(keys, "."))
}

// descend returns the table under key k of t, creating an implicit one.
// dotted marks tables that a dotted key creates.
func descend(t *tomlTable, k string, dotted bool) (*tomlTable, error) {
	switch x := t.m[k].(type) {
	case nil:
		nt := &tomlTable{m: map[string]any{}, dotted: dotted}
		t.m[k] = nt
		return nt, nil
	case *tomlTable:
		if x.inline || (dotted && x.explicit) {
			return nil, fmt.Errorf("table %q cannot be extended here", k)
		}
		return x, nil
	case *tomlArrayOfTables:
		if dotted {
			return nil, fmt.Errorf("key %q is an array of tables", k)
		}
		return x.tables[len(x.tables)-1], nil
	}
	return nil, fmt.Errorf("key %q is already defined as a value", k)
}

// keyValue parses "key = value" into t.
func (p *tomlParser) keyValue(t *tomlTable) error {
	keys, err := p.key()
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.eof() || p.peek() != '=' {
		return fmt.Errorf("expected = after key %q", strings.Join(keys, "."))
	}
	p.i++
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return err
	}
	return assign(t, keys, v)
}

// assign sets keys (dotted) to v in t.
func assign(t *tomlTable, keys []string, v any) error {
	for _, k := range keys[:len(keys)-1] {
		var err error
		if t, err = descend(t, k, true); err != nil {
			return err
		}
	}
	last := keys[len(keys)-1]
	if _, ok := t.m[last]; ok {
		return fmt.Errorf("key %q is defined twice", strings.Join(keys, "."))
	}
	t.m[last] = v
	return nil
}

// key parses a dotted key of bare and quoted parts.
func (p *tomlParser) key() ([]string, error) {
	var keys []string
	for {
		p.skipSpace()
		if p.eof() {
			return nil, fmt.Errorf("a key is missing")
		}
		var k string
		switch c := p.peek(); {
		case c == '"' && !strings.HasPrefix(p.s[p.i:], `"""`):
			s, err := p.basicString()
			if err != nil {
				return nil, err
			}
			k = s
		case c == '\'' && !strings.HasPrefix(p.s[p.i:], `'''`):
			s, err := p.literalString()
			if err != nil {
				return nil, err
			}
			k = s
		default:
			start := p.i
			for !p.eof() && isBareKeyByte(p.peek()) {
				p.i++
			}
			if p.i == start {
				return nil, fmt.Errorf("invalid key at %q", p.rest())
			}
			k = p.s[start:p.i]
		}
		keys = append(keys, k)
		p.skipSpace()
		if p.eof() || p.peek() != '.' {
			return keys, nil
		}
		p.i++
	}
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// value parses one value.
func (p *tomlParser) value(depth int) (any, error) {
	if depth > maxTOMLDepth {
		return nil, fmt.Errorf("values nested too deep")
	}
	if p.eof() {
		return nil, fmt.Errorf("a value is missing")
	}
	switch c := p.peek(); {
	case strings.HasPrefix(p.s[p.i:], `"""`):
		return p.multilineString('"')
	case strings.HasPrefix(p.s[p.i:], `'''`):
		return p.multilineString('\'')
	case c == '"':
		return p.basicString()
	case c == '\'':
		return p.literalString()
	case c == '[':
		return p.array(depth)
	case c == '{':
		return p.inlineTable(depth)
	}
	return p.scalar()
}

// basicString parses "..." with escapes.
func (p *tomlParser) basicString() (string, error) {
	p.i++
	var b strings.Builder
	for {
		if p.eof() || p.peek() == '\n' {
			return "", fmt.Errorf("unclosed string")
		}
		c := p.peek()
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		default:
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			if r != '\t' && (r < 0x20 || r == 0x7f) {
				return "", fmt.Errorf("control character %U in a string", r)
			}
			b.WriteString(p.s[p.i : p.i+n])
			p.i += n
		}
	}
}

// escape parses one escape sequence of a basic string.
func (p *tomlParser) escape() (rune, error) {
	if p.i+1 >= len(p.s) {
		return 0, fmt.Errorf("unfinished escape")
	}
	c := p.s[p.i+1]
	p.i += 2
	switch c {
	case 'b':
		return '\b', nil
	case 't':
		return '\t', nil
	case 'n':
		return '\n', nil
	case 'f':
		return '\f', nil
	case 'r':
		return '\r', nil
	case '"':
		return '"', nil
	case '\\':
		return '\\', nil
	case 'u', 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		if p.i+n > len(p.s) {
			return 0, fmt.Errorf("short \\%c escape", c)
		}
		h := p.s[p.i : p.i+n]
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil || strings.ContainsAny(h, "+-_") || !utf8.ValidRune(rune(v)) {
			return 0, fmt.Errorf("invalid escape \\%c%s", c, h)
		}
		p.i += n
		return rune(v), nil
	}
	return 0, fmt.Errorf("invalid escape \\%c", c)
}

// literalString parses '...'.
func (p *tomlParser) literalString() (string, error) {
	p.i++
	end := strings.IndexAny(p.s[p.i:], "'\n")
	if end < 0 || p.s[p.i+end] != '\'' {
		return "", fmt.Errorf("unclosed literal string")
	}
	s := p.s[p.i : p.i+end]
	if c := badControl(s); c >= 0 {
		return "", fmt.Errorf("control character %U in a string", c)
	}
	p.i += end + 1
	return s, nil
}

// multilineString parses """...""" (q '"') or ”'...”' (q '\”).
func (p *tomlParser) multilineString(q byte) (string, error) {
	delim := strings.Repeat(string(q), 3)
	p.i += 3
	if strings.HasPrefix(p.s[p.i:], "\n") {
		p.i++
		p.line++
	} else if strings.HasPrefix(p.s[p.i:], "\r\n") {
		p.i += 2
		p.line++
	}
	var b strings.Builder
	for {
		if p.eof() {
			return "", fmt.Errorf("unclosed multi-line string")
		}
		if strings.HasPrefix(p.s[p.i:], delim) {
			p.i += 3
			// Up to two more quotes belong to the string.
			for n := 0; n < 2 && !p.eof() && p.peek() == q; n++ {
				b.WriteByte(q)
				p.i++
			}
			return b.String(), nil
		}
		c := p.peek()
		switch {
		case c == '\\' && q == '"':
			if j := p.lineEndingBackslash(); j > 0 {
				p.i = j
				continue
			}
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		case c == '\n':
			b.WriteByte('\n')
			p.i++
			p.line++
		case c == '\r' && strings.HasPrefix(p.s[p.i:], "\r\n"):
			b.WriteByte('\n')
			p.i += 2
			p.line++
		default:
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			if r != '\t' && (r < 0x20 || r == 0x7f) {
				return "", fmt.Errorf("control character %U in a string", r)
			}
			b.WriteString(p.s[p.i : p.i+n])
			p.i += n
		}
	}
}

// lineEndingBackslash returns where the text resumes after a backslash
// that ends its line (only spaces and tabs between it and the newline):
// the first character after the following whitespace and newlines; 0 when
// the backslash at p.i does not end its line.
func (p *tomlParser) lineEndingBackslash() int {
	j := p.i + 1
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	if j < len(p.s) && p.s[j] == '\r' {
		j++
	}
	if j >= len(p.s) || p.s[j] != '\n' {
		return 0
	}
	for j < len(p.s) && strings.IndexByte(" \t\r\n", p.s[j]) >= 0 {
		if p.s[j] == '\n' {
			p.line++
		}
		j++
	}
	return j
}

// array parses [v, v, ...], newlines and comments allowed between values.
func (p *tomlParser) array(depth int) ([]any, error) {
	p.i++
	out := []any{}
	for {
		if err := p.skipArrayBlank(); err != nil {
			return nil, err
		}
		if p.eof() {
			return nil, fmt.Errorf("unclosed array")
		}
		if p.peek() == ']' {
			p.i++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if err := p.skipArrayBlank(); err != nil {
			return nil, err
		}
		if p.eof() {
			return nil, fmt.Errorf("unclosed array")
		}
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, nil
		default:
			return nil, fmt.Errorf("expected , or ] in an array at %q", p.rest())
		}
	}
}

// skipArrayBlank skips whitespace, newlines and comments inside an array.
func (p *tomlParser) skipArrayBlank() error {
	for {
		p.skipBlank()
		if p.eof() || p.peek() != '#' {
			return nil
		}
		if err := p.comment(); err != nil {
			return err
		}
	}
}

// inlineTable parses { k = v, ... } on one line.
func (p *tomlParser) inlineTable(depth int) (*tomlTable, error) {
	p.i++
	t := &tomlTable{m: map[string]any{}}
	p.skipSpace()
	if !p.eof() && p.peek() == '}' {
		p.i++
		t.inline = true
		return t, nil
	}
	for {
		p.skipSpace()
		keys, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.eof() || p.peek() != '=' {
			return nil, fmt.Errorf("expected = in an inline table")
		}
		p.i++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := assign(t, keys, v); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.eof() {
			return nil, fmt.Errorf("unclosed inline table")
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			t.inline = true
			closeInline(t)
			return t, nil
		default:
			return nil, fmt.Errorf("expected , or } in an inline table at %q", p.rest())
		}
	}
}

// closeInline marks an inline table and the tables its dotted keys made
// as closed.
func closeInline(t *tomlTable) {
	t.inline = true
	for _, v := range t.m {
		if sub, ok := v.(*tomlTable); ok {
			closeInline(sub)
		}
	}
}

// Scalars other than strings: what TOML allows, checked by shape.
var (
	tomlInt      = regexp.MustCompile(`^[+-]?(0|[1-9](_?[0-9])*)$`)
	tomlRadixInt = regexp.MustCompile(`^0(x[0-9A-Fa-f](_?[0-9A-Fa-f])*|o[0-7](_?[0-7])*|b[01](_?[01])*)$`)
	tomlFloat    = regexp.MustCompile(`^[+-]?(0|[1-9](_?[0-9])*)(\.[0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?$`)
	tomlSpecial  = regexp.MustCompile(`^[+-]?(inf|nan)$`)
	tomlDate     = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	tomlDateTime = regexp.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ])?[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})?$`)
)

// scalar parses a boolean, number or date-time.
func (p *tomlParser) scalar() (any, error) {
	start := p.i
	for !p.eof() && strings.IndexByte("+-_.:0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", p.peek()) >= 0 {
		p.i++
	}
	tok := p.s[start:p.i]
	// A date and a time may be separated by one space.
	if tomlDate.MatchString(tok) && p.i+1 < len(p.s) && p.s[p.i] == ' ' && p.s[p.i+1] >= '0' && p.s[p.i+1] <= '9' {
		j := p.i + 1
		for j < len(p.s) && strings.IndexByte("+-.:0123456789Zz", p.s[j]) >= 0 {
			j++
		}
		if dt := tok + "T" + p.s[p.i+1:j]; tomlDateTime.MatchString(dt) && validDateTime(dt) {
			p.i = j
			return p.s[start:j], nil
		}
	}
	switch {
	case tok == "true":
		return true, nil
	case tok == "false":
		return false, nil
	case tomlInt.MatchString(tok):
		n, err := strconv.ParseInt(strings.ReplaceAll(tok, "_", ""), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s out of range", tok)
		}
		return n, nil
	case tomlRadixInt.MatchString(tok):
		n, err := strconv.ParseInt(strings.ReplaceAll(tok, "_", ""), 0, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s out of range", tok)
		}
		return n, nil
	case tomlFloat.MatchString(tok):
		f, err := strconv.ParseFloat(strings.ReplaceAll(tok, "_", ""), 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, fmt.Errorf("invalid float %s", tok)
		}
		return f, nil
	case tomlSpecial.MatchString(tok):
		if strings.HasSuffix(tok, "nan") {
			return math.NaN(), nil
		}
		sign := 1
		if tok[0] == '-' {
			sign = -1
		}
		return math.Inf(sign), nil
	case tomlDate.MatchString(tok) || tomlDateTime.MatchString(tok):
		if !validDateTime(tok) {
			return nil, fmt.Errorf("invalid date or time %q", tok)
		}
		return tok, nil
	case tok == "":
		return nil, fmt.Errorf("invalid value at %q", p.rest())
	}
	return nil, fmt.Errorf("invalid value %q", tok)
}

// validDateTime checks the numbers of a date, time or date-time that has
// the shape of one: a real calendar day, hours below 24, minutes below
// 60, seconds below 60 (tomllib has no leap second), an offset below 24
// hours.
func validDateTime(s string) bool {
	if len(s) >= 10 && s[4] == '-' {
		if _, err := time.Parse("2006-01-02", s[:10]); err != nil {
			return false
		}
		if s = s[10:]; s == "" {
			return true
		}
		s = s[1:]
	}
	num := func(a string) int { n, _ := strconv.Atoi(a); return n }
	if len(s) < 8 || num(s[0:2]) > 23 || num(s[3:5]) > 59 || num(s[6:8]) > 59 {
		return false
	}
	if i := strings.LastIndexAny(s, "+-"); i >= 8 {
		off := s[i+1:]
		return num(off[0:2]) <= 23 && num(off[3:5]) <= 59
	}
	return true
}
