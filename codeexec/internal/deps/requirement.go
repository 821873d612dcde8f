package deps

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Requirement is one declared Python package, a PEP 508 requirement whose
// name, extras, version specifier and environment marker have been checked.
// Direct references ("name @ URL") are refused: where packages come from is
// the operator's choice, not the skill's.
type Requirement struct {
	// Name is the project name normalized as PEP 503 says ("python-docx").
	Name string
	// Extras are the extras asked for, normalized and sorted.
	Extras []string
	// Specifier is the version specifier in normal form (clauses sorted,
	// comma-joined), "" for any version.
	Specifier string
	// Marker is the environment marker in normal form, "" for none.
	Marker string
	// Hashes are the --hash options of a requirements.txt line
	// ("sha256:..."), sorted.
	Hashes []string

	spec   specifier
	marker marker
}

// String is the requirement in the normal form pip reads (without hashes).
func (r Requirement) String() string {
	s := r.Name
	if len(r.Extras) > 0 {
		s += "[" + strings.Join(r.Extras, ",") + "]"
	}
	s += r.Specifier
	if r.Marker != "" {
		s += "; " + r.Marker
	}
	return s
}

// line is the requirement as a requirements.txt line, hashes included.
func (r Requirement) line() string {
	s := r.String()
	for _, h := range r.Hashes {
		s += " --hash=" + h
	}
	return s
}

// nameRE is a PEP 508 project name.
var nameRE = regexp.MustCompile(`^(?i:[A-Z0-9][A-Z0-9._-]*[A-Z0-9]|[A-Z0-9])`)

// normalizeName is PEP 503's normal form of a project name.
func normalizeName(n string) string {
	return strings.ToLower(separatorRE.ReplaceAllString(n, "-"))
}

// archiveRE matches a name pip would take for an archive file.
var archiveRE = regexp.MustCompile(`(?i)\.(whl|zip|tar|tgz|tbz|txz|tlz|tar\.gz|tar\.bz2|tar\.xz|tar\.lz|tar\.lzma)$`)

var separatorRE = regexp.MustCompile(`[-_.]+`)

// ParseRequirement parses a PEP 508 requirement string as a PEP 723
// "dependencies" entry or a requirements.txt line holds it. A direct
// reference ("name @ https://..."), a path or URL in place of a name, and
// anything pip would read as an option are refused.
func ParseRequirement(s string) (Requirement, error) {
	var r Requirement
	in := strings.TrimSpace(s)
	if in == "" {
		return r, fmt.Errorf("empty requirement")
	}
	if strings.ContainsAny(in, "\x00\n\r") {
		return r, fmt.Errorf("requirement %q holds a control character", s)
	}
	name := nameRE.FindString(in)
	if after := in[len(name):]; name == "" || strings.HasPrefix(after, ":") || strings.HasPrefix(after, "/") || strings.HasPrefix(after, "\\") {
		if strings.Contains(in, "/") || strings.Contains(in, "\\") || strings.HasPrefix(in, ".") || strings.HasPrefix(in, "~") {
			return r, fmt.Errorf("requirement %q is a URL or a path: the operator's index chooses where packages come from; name a package instead", s)
		}
		return r, fmt.Errorf("requirement %q does not start with a package name (paths, URLs and options are not allowed)", s)
	}
	if archiveRE.MatchString(name) {
		return r, fmt.Errorf("requirement %q names a file: the operator's index chooses where packages come from; name a package instead", s)
	}
	r.Name = normalizeName(name)
	rest := strings.TrimLeft(in[len(name):], " \t")
	if inner, ok := strings.CutPrefix(rest, "["); ok {
		list, after, closed := strings.Cut(inner, "]")
		if !closed {
			return r, fmt.Errorf("requirement %q: unclosed extras", s)
		}
		list = strings.TrimSpace(list)
		for _, e := range strings.Split(list, ",") {
			e = strings.TrimSpace(e)
			if list == "" {
				break
			}
			if e == "" || nameRE.FindString(e) != e {
				return r, fmt.Errorf("requirement %q: invalid extra %q", s, e)
			}
			r.Extras = append(r.Extras, normalizeName(e))
		}
		slices.Sort(r.Extras)
		r.Extras = slices.Compact(r.Extras)
		rest = strings.TrimLeft(after, " \t")
	}
	specPart, markerPart, hasMarker := strings.Cut(rest, ";")
	specPart = strings.TrimSpace(specPart)
	if strings.HasPrefix(specPart, "@") {
		return r, fmt.Errorf("requirement %q is a direct reference (name @ URL): the operator's index chooses where packages come from; name a version instead", s)
	}
	if strings.HasPrefix(specPart, "(") {
		if !strings.HasSuffix(specPart, ")") {
			return r, fmt.Errorf("requirement %q: unclosed parenthesis", s)
		}
		specPart = specPart[1 : len(specPart)-1]
	}
	sp, err := parseSpecifier(specPart)
	if err != nil {
		return r, fmt.Errorf("requirement %q: %w", s, err)
	}
	r.spec, r.Specifier = sp, sp.String()
	if hasMarker {
		m, err := parseMarker(markerPart)
		if err != nil {
			return r, fmt.Errorf("requirement %q: %w", s, err)
		}
		r.marker, r.Marker = m, m.String()
	}
	return r, nil
}

// applies reports whether the requirement's marker holds in env (no
// marker: always).
func (r Requirement) applies(env map[string]string) bool {
	return r.marker == nil || r.marker.eval(env)
}

// satisfiedBy reports whether an installed version satisfies the
// specifier (pre-releases admitted, as pip admits an installed one).
func (r Requirement) satisfiedBy(installed string) bool {
	return r.spec.contains(installed)
}

// Environment markers (PEP 508): "python_version >= '3.8' and
// (sys_platform == 'linux' or extra == 'x')".

// marker is a parsed environment marker.
type marker interface {
	eval(env map[string]string) bool
	String() string
}

// markerVars are the variables a marker may name.
var markerVars = []string{"python_version", "python_full_version", "os_name", "sys_platform", "platform_release",
	"platform_system", "platform_version", "platform_machine", "platform_python_implementation",
	"implementation_name", "implementation_version", "extra"}

type markerBool struct {
	and         bool
	left, right marker
}

func (m markerBool) eval(env map[string]string) bool {
	if m.and {
		return m.left.eval(env) && m.right.eval(env)
	}
	return m.left.eval(env) || m.right.eval(env)
}

func (m markerBool) String() string {
	op := " or "
	if m.and {
		op = " and "
	}
	return paren(m.left, m.and) + op + paren(m.right, m.and)
}

// paren wraps an "or" below an "and" in parentheses.
func paren(m marker, underAnd bool) string {
	if b, ok := m.(markerBool); ok && underAnd && !b.and {
		return "(" + m.String() + ")"
	}
	return m.String()
}

// markerValue is a variable or a quoted string.
type markerValue struct {
	variable bool
	s        string
}

func (v markerValue) value(env map[string]string) string {
	if v.variable {
		return env[v.s]
	}
	return v.s
}

func (v markerValue) String() string {
	if v.variable {
		return v.s
	}
	if strings.Contains(v.s, `"`) {
		return "'" + v.s + "'"
	}
	return `"` + v.s + `"`
}

type markerCmp struct {
	left  markerValue
	op    string // a specifier operator, "in" or "not in"
	right markerValue
}

// eval compares as PEP 508 says (and packaging does): a version
// comparison when the right side makes a specifier and the left a version,
// else as strings, "in" as a substring test. An "extra" is compared in
// normal form.
func (m markerCmp) eval(env map[string]string) bool {
	l, r := m.left.value(env), m.right.value(env)
	if m.left.s == "extra" || m.right.s == "extra" {
		l, r = normalizeName(l), normalizeName(r)
	}
	switch m.op {
	case "in":
		return strings.Contains(r, l)
	case "not in":
		return !strings.Contains(r, l)
	}
	if sp, err := parseSpec(m.op + r); err == nil {
		if v, err := parseVersion(l); err == nil || sp.op == "===" {
			return sp.contains(l, v)
		}
	}
	switch m.op { // strings, compared as Python compares them
	case "==", "===":
		return l == r
	case "!=":
		return l != r
	case "<":
		return l < r
	case "<=":
		return l <= r
	case ">":
		return l > r
	case ">=":
		return l >= r
	}
	return false
}

func (m markerCmp) String() string {
	return m.left.String() + " " + m.op + " " + m.right.String()
}

// parseMarker parses a PEP 508 environment marker.
func parseMarker(s string) (marker, error) {
	p := &markerParser{s: s}
	m, err := p.or(0)
	if err != nil {
		return nil, fmt.Errorf("marker %q: %w", strings.TrimSpace(s), err)
	}
	if p.skip(); p.i < len(p.s) {
		return nil, fmt.Errorf("marker %q: unexpected %q", strings.TrimSpace(s), p.s[p.i:])
	}
	return m, nil
}

// maxMarkerDepth bounds nested parentheses.
const maxMarkerDepth = 32

type markerParser struct {
	s string
	i int
}

func (p *markerParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// word consumes w when it stands next as a whole word.
func (p *markerParser) word(w string) bool {
	p.skip()
	if !strings.HasPrefix(p.s[p.i:], w) {
		return false
	}
	end := p.i + len(w)
	if end < len(p.s) && isIdentByte(p.s[end]) {
		return false
	}
	p.i = end
	return true
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *markerParser) or(depth int) (marker, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.word("or") {
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = markerBool{left: l, right: r}
	}
	return l, nil
}

func (p *markerParser) and(depth int) (marker, error) {
	l, err := p.expr(depth)
	if err != nil {
		return nil, err
	}
	for p.word("and") {
		r, err := p.expr(depth)
		if err != nil {
			return nil, err
		}
		l = markerBool{and: true, left: l, right: r}
	}
	return l, nil
}

func (p *markerParser) expr(depth int) (marker, error) {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		if depth >= maxMarkerDepth {
			return nil, fmt.Errorf("nested too deep")
		}
		p.i++
		m, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.skip(); p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("unclosed parenthesis")
		}
		p.i++
		return m, nil
	}
	l, err := p.value()
	if err != nil {
		return nil, err
	}
	op, err := p.op()
	if err != nil {
		return nil, err
	}
	r, err := p.value()
	if err != nil {
		return nil, err
	}
	if l.variable == r.variable && !l.variable {
		return nil, fmt.Errorf("%s %s %s compares two strings", l, op, r)
	}
	return markerCmp{left: l, op: op, right: r}, nil
}

func (p *markerParser) value() (markerValue, error) {
	p.skip()
	if p.i >= len(p.s) {
		return markerValue{}, fmt.Errorf("a variable or a quoted string is missing")
	}
	if q := p.s[p.i]; q == '\'' || q == '"' {
		end := strings.IndexByte(p.s[p.i+1:], q)
		if end < 0 {
			return markerValue{}, fmt.Errorf("unclosed string")
		}
		v := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return markerValue{s: v}, nil
	}
	for _, v := range markerVars {
		if p.word(v) {
			return markerValue{variable: true, s: v}, nil
		}
	}
	return markerValue{}, fmt.Errorf("unknown marker variable at %q (known: %s)", p.s[p.i:], strings.Join(markerVars, ", "))
}

func (p *markerParser) op() (string, error) {
	p.skip()
	for _, op := range specOps {
		if strings.HasPrefix(p.s[p.i:], op) {
			p.i += len(op)
			return op, nil
		}
	}
	if p.word("in") {
		return "in", nil
	}
	if p.word("not") && p.word("in") {
		return "not in", nil
	}
	return "", fmt.Errorf("a comparison operator is missing at %q", p.s[p.i:])
}
