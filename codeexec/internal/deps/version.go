package deps

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Versions and version specifiers as PEP 440 defines them, the subset pip
// applies to what is already installed: every comparison admits
// pre-releases (pip's "Requirement already satisfied" and its
// Requires-Python check do the same).

// versionRE is PEP 440's appendix B pattern (case-insensitive, trimmed).
var versionRE = regexp.MustCompile(`(?i)^v?(?:(?:([0-9]+)!)?([0-9]+(?:\.[0-9]+)*)` +
	`([-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?([0-9]+)?)?` +
	`((?:-([0-9]+))|(?:[-_.]?(post|rev|r)[-_.]?([0-9]+)?))?` +
	`([-_.]?(dev)[-_.]?([0-9]+)?)?)(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?$`)

// version is a parsed PEP 440 version.
type version struct {
	epoch   uint64
	release []uint64
	pre     int // 0 none, else 1 a, 2 b, 3 rc
	preN    uint64
	post    bool
	postN   uint64
	dev     bool
	devN    uint64
	local   []string // lower-case segments
}

// parseVersion parses a PEP 440 version; numbers beyond 64 bits are
// refused.
func parseVersion(s string) (version, error) {
	m := versionRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return version{}, fmt.Errorf("invalid version %q", s)
	}
	var v version
	var err error
	num := func(s string) uint64 {
		if s == "" || err != nil {
			return 0
		}
		n, e := strconv.ParseUint(s, 10, 64)
		if e != nil {
			err = fmt.Errorf("version %q: number %s too large", m[0], s)
		}
		return n
	}
	v.epoch = num(m[1])
	for _, r := range strings.Split(m[2], ".") {
		v.release = append(v.release, num(r))
	}
	if m[3] != "" {
		switch strings.ToLower(m[4]) {
		case "a", "alpha":
			v.pre = 1
		case "b", "beta":
			v.pre = 2
		default:
			v.pre = 3
		}
		v.preN = num(m[5])
	}
	if m[6] != "" {
		v.post = true
		v.postN = num(m[7] + m[9])
	}
	if m[10] != "" {
		v.dev = true
		v.devN = num(m[12])
	}
	if m[13] != "" {
		v.local = strings.FieldsFunc(strings.ToLower(m[13]), func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	}
	return v, err
}

// String is the version's normal form.
func (v version) String() string {
	var b strings.Builder
	if v.epoch != 0 {
		fmt.Fprintf(&b, "%d!", v.epoch)
	}
	for i, r := range v.release {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.FormatUint(r, 10))
	}
	if v.pre != 0 {
		fmt.Fprintf(&b, "%s%d", [...]string{"", "a", "b", "rc"}[v.pre], v.preN)
	}
	if v.post {
		fmt.Fprintf(&b, ".post%d", v.postN)
	}
	if v.dev {
		fmt.Fprintf(&b, ".dev%d", v.devN)
	}
	if len(v.local) > 0 {
		b.WriteString("+" + strings.Join(v.local, "."))
	}
	return b.String()
}

// public is v without its local part.
func (v version) public() version {
	v.local = nil
	return v
}

// base is v's epoch and release alone.
func (v version) base() version {
	return version{epoch: v.epoch, release: v.release}
}

// compare orders versions as PEP 440 does.
func (v version) compare(w version) int {
	if c := cmp.Compare(v.epoch, w.epoch); c != 0 {
		return c
	}
	if c := compareRelease(v.release, w.release); c != 0 {
		return c
	}
	// A dev release without pre or post sorts before the pre-releases.
	rank := func(x version) (int, uint64) {
		switch {
		case x.pre != 0:
			return x.pre, x.preN
		case !x.post && x.dev:
			return -1, 0
		}
		return 4, 0
	}
	vr, vn := rank(v)
	wr, wn := rank(w)
	if c := cmp.Compare(vr, wr); c != 0 {
		return c
	}
	if c := cmp.Compare(vn, wn); c != 0 {
		return c
	}
	if c := cmpOptional(v.post, v.postN, w.post, w.postN, -1); c != 0 {
		return c
	}
	if c := cmpOptional(v.dev, v.devN, w.dev, w.devN, 1); c != 0 {
		return c
	}
	return compareLocal(v.local, w.local)
}

// compareRelease compares release segments, the shorter padded with zeros.
func compareRelease(a, b []uint64) int {
	for i := range max(len(a), len(b)) {
		var x, y uint64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// cmpOptional compares two optional numbers; absent sorts as absent
// (-1: before every number, 1: after).
func cmpOptional(has bool, n uint64, otherHas bool, other uint64, absent int) int {
	switch {
	case has && otherHas:
		return cmp.Compare(n, other)
	case has == otherHas:
		return 0
	case has:
		return -absent
	}
	return absent
}

// compareLocal orders local parts: none first, numeric segments above
// alphanumeric ones, longer above a prefix.
func compareLocal(a, b []string) int {
	for i := range min(len(a), len(b)) {
		x, xerr := strconv.ParseUint(a[i], 10, 64)
		y, yerr := strconv.ParseUint(b[i], 10, 64)
		var c int
		switch {
		case xerr == nil && yerr == nil:
			c = cmp.Compare(x, y)
		case xerr == nil:
			c = 1
		case yerr == nil:
			c = -1
		default:
			c = strings.Compare(a[i], b[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// spec is one clause of a version specifier ("op version").
type spec struct {
	op       string
	raw      string // the version as written
	v        version
	wildcard bool // "==1.2.*", "!=1.2.*"
}

// specOps are the comparison operators, longest first.
var specOps = []string{"===", "~=", "==", "!=", "<=", ">=", "<", ">"}

// parseSpec parses one clause.
func parseSpec(s string) (spec, error) {
	s = strings.TrimSpace(s)
	var sp spec
	for _, op := range specOps {
		if rest, ok := strings.CutPrefix(s, op); ok {
			sp.op, sp.raw = op, strings.TrimSpace(rest)
			break
		}
	}
	switch {
	case sp.op == "":
		return sp, fmt.Errorf("version specifier %q has no operator (==, !=, <=, >=, <, >, ~=, ===)", s)
	case sp.raw == "" || strings.ContainsAny(sp.raw, " \t,;"):
		return sp, fmt.Errorf("version specifier %q: invalid version", s)
	case sp.op == "===":
		return sp, nil
	}
	raw := sp.raw
	if r, ok := strings.CutSuffix(raw, ".*"); ok && (sp.op == "==" || sp.op == "!=") {
		sp.wildcard, raw = true, r
	}
	v, err := parseVersion(raw)
	if err != nil {
		return sp, fmt.Errorf("version specifier %q: %w", s, err)
	}
	sp.v = v
	switch {
	case sp.wildcard && (v.pre != 0 || v.post || v.dev || v.local != nil):
		return sp, fmt.Errorf("version specifier %q: a wildcard follows a release number only", s)
	case v.local != nil && sp.op != "==" && sp.op != "!=":
		return sp, fmt.Errorf("version specifier %q: a local version goes with == or != only", s)
	case sp.op == "~=" && len(v.release) < 2:
		return sp, fmt.Errorf("version specifier %q: ~= needs at least two release numbers", s)
	}
	return sp, nil
}

// String is the clause in normal form.
func (sp spec) String() string {
	if sp.op == "===" {
		return sp.op + sp.raw
	}
	if sp.wildcard {
		return sp.op + sp.v.String() + ".*"
	}
	return sp.op + sp.v.String()
}

// contains reports whether version c (as written: "===" compares text)
// satisfies the clause, pre-releases admitted.
func (sp spec) contains(raw string, c version) bool {
	switch sp.op {
	case "===":
		return strings.EqualFold(strings.TrimSpace(raw), sp.raw)
	case "==":
		return sp.equal(c)
	case "!=":
		return !sp.equal(c)
	case "~=":
		prefix := spec{op: "==", wildcard: true, v: version{epoch: sp.v.epoch, release: sp.v.release[:len(sp.v.release)-1]}}
		return c.public().compare(sp.v) >= 0 && prefix.equal(c)
	case "<=":
		return c.public().compare(sp.v) <= 0
	case ">=":
		return c.public().compare(sp.v) >= 0
	case "<":
		// <V excludes V's own pre-releases unless V is one.
		return c.compare(sp.v) < 0 && (sp.v.pre != 0 || sp.v.dev || !(c.pre != 0 || c.dev) || c.base().compare(sp.v.base()) != 0)
	case ">":
		// >V excludes V's post-releases unless V is one, and V's local
		// versions.
		if c.compare(sp.v) <= 0 {
			return false
		}
		if !sp.v.post && c.post && c.base().compare(sp.v.base()) == 0 {
			return false
		}
		return c.local == nil || c.public().compare(sp.v) != 0
	}
	return false
}

// equal is == (with a wildcard: the release starts with sp's; without a
// local part in sp: c's local part is ignored).
func (sp spec) equal(c version) bool {
	if sp.wildcard {
		if c.epoch != sp.v.epoch {
			return false
		}
		for i, r := range sp.v.release {
			var x uint64
			if i < len(c.release) {
				x = c.release[i]
			}
			if x != r {
				return false
			}
		}
		return true
	}
	if sp.v.local == nil {
		c = c.public()
	}
	return c.compare(sp.v) == 0
}

// specifier is a comma-separated list of clauses, all of which must hold.
type specifier []spec

// parseSpecifier parses "" (anything) or "op v, op v ...".
func parseSpecifier(s string) (specifier, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out specifier
	for _, part := range strings.Split(s, ",") {
		sp, err := parseSpec(part)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

// String is the specifier in normal form: clauses sorted, comma-joined.
func (s specifier) String() string {
	parts := make([]string, 0, len(s))
	for _, sp := range s {
		parts = append(parts, sp.String())
	}
	slices.Sort(parts)
	return strings.Join(slices.Compact(parts), ",")
}

// contains reports whether raw satisfies every clause; a version that does
// not parse satisfies only "===" clauses that name it.
func (s specifier) contains(raw string) bool {
	v, err := parseVersion(raw)
	for _, sp := range s {
		if err != nil && sp.op != "===" {
			return false
		}
		if !sp.contains(raw, v) {
			return false
		}
	}
	return true
}
