package mcpskills

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/adkskills/adkskills/internal/valid"
)

// The URI schemes the server answers: a skill's files, and the files runs
// saved in the caller's session.
const (
	SkillScheme    = "skill"
	ArtifactScheme = "artifact"
)

// skillFile is the file that makes a folder a skill, and ends an entry's URI.
const skillFile = "SKILL.md"

// maxURIBytes bounds a URI a peer sends; a legitimate one is far shorter.
const maxURIBytes = 8 << 10

// ErrBadURI is a URI the server does not serve: another scheme, a malformed
// one, or a path that leaves its skill.
var ErrBadURI = errors.New("not a URI this server serves")

// SkillURI is the URI of a skill's SKILL.md: its entry's URI.
func SkillURI(name string) string { return FileURI(name, skillFile) }

// FileURI is the URI of the file p (a clean path relative to the skill
// root, "/"-separated) of the skill name: skill://NAME/P, each path segment
// escaped.
func FileURI(name, p string) string {
	return SkillScheme + "://" + name + "/" + escapeSegments(p)
}

// dirURI is the URI of the folder dir ("." for the root) of the skill name:
// skill://NAME or skill://NAME/DIR, without a trailing slash.
func dirURI(name, dir string) string {
	if dir == "." || dir == "" {
		return SkillScheme + "://" + name
	}
	return FileURI(name, dir)
}

func escapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// parseSkillURI reads a skill:// URI: the skill's name and the clean path
// inside it ("." for the root; dir reports a trailing slash or no path at
// all, which only a folder has). Anything but the scheme, a name and a path
// is refused: user info, a port, a query, a fragment; so is a path that is
// not clean or leaves the skill (unescapePath).
func parseSkillURI(raw string) (name, p string, dir bool, err error) {
	u, err := parseURI(raw, SkillScheme)
	if err != nil {
		return "", "", false, err
	}
	if !validName(u.Host) {
		return "", "", false, fmt.Errorf("%w: %q does not name a skill", ErrBadURI, raw)
	}
	rest := u.EscapedPath()
	switch rest {
	case "", "/":
		return u.Host, ".", true, nil
	}
	rest = strings.TrimPrefix(rest, "/")
	if dir = strings.HasSuffix(rest, "/"); dir {
		rest = strings.TrimSuffix(rest, "/")
	}
	if p, err = unescapePath(rest); err != nil {
		return "", "", false, fmt.Errorf("%w: %q: %v", ErrBadURI, raw, err)
	}
	return u.Host, p, dir, nil
}

// unescapePath reads the escaped path of a file inside a skill (segments
// separated by "/", each percent-escaped): a clean relative path that stays
// inside, whose segments held no "/", "\" or NUL once unescaped.
func unescapePath(escaped string) (string, error) {
	segs := strings.Split(escaped, "/")
	for i, seg := range segs {
		u, err := url.PathUnescape(seg)
		if err != nil || strings.ContainsAny(u, "/\\\x00") {
			return "", fmt.Errorf("the path segment %q cannot name a file", seg)
		}
		segs[i] = u
	}
	p := strings.Join(segs, "/")
	if c, err := valid.Path(p); err != nil || c != p || c == "." {
		return "", fmt.Errorf("the path %q is not a clean path inside the skill", p)
	}
	return p, nil
}

// parseURI parses raw and checks its scheme and that it has no user info,
// port, query or fragment.
func parseURI(raw, scheme string) (*url.URL, error) {
	if len(raw) > maxURIBytes {
		return nil, fmt.Errorf("%w: a URI of %d bytes (at most %d)", ErrBadURI, len(raw), maxURIBytes)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %q: %v", ErrBadURI, raw, err)
	case u.Scheme != scheme || u.Opaque != "":
		return nil, fmt.Errorf("%w: %q is not a %s:// URI", ErrBadURI, raw, scheme)
	case u.User != nil || u.Port() != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return nil, fmt.Errorf("%w: %q has user info, a port, a query or a fragment", ErrBadURI, raw)
	}
	return u, nil
}

// validName reports a skill name of the specification: 1 to 64 lower-case
// letters, digits and single hyphens, neither first nor last.
func validName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// ArtifactURI is the URI of version (0: the latest) of the artifact name in
// the caller's session: artifact:///NAME/VERSION, or artifact:///NAME. It
// names a file of whoever reads it: another MCP session reading it reads
// its own session's artifact of that name, if any.
func ArtifactURI(name string, version int64) string {
	u := ArtifactScheme + ":///" + url.PathEscape(name)
	if version > 0 {
		u += "/" + strconv.FormatInt(version, 10)
	}
	return u
}

// parseArtifactURI reads an artifact:/// URI: the artifact's name and its
// version (0 for the latest).
func parseArtifactURI(raw string) (name string, version int64, err error) {
	u, err := parseURI(raw, ArtifactScheme)
	if err != nil {
		return "", 0, err
	}
	if u.Host != "" {
		return "", 0, fmt.Errorf("%w: %q has a host; an artifact URI is artifact:///NAME/VERSION", ErrBadURI, raw)
	}
	segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	if len(segs) > 2 {
		return "", 0, fmt.Errorf("%w: %q has more than a name and a version", ErrBadURI, raw)
	}
	if name, err = url.PathUnescape(segs[0]); err != nil || name == "" || strings.ContainsAny(name, "/\\\x00") {
		return "", 0, fmt.Errorf("%w: %q does not name an artifact", ErrBadURI, raw)
	}
	if len(segs) == 2 {
		s := segs[1]
		if version, err = strconv.ParseInt(s, 10, 64); err != nil || version < 1 || s[0] == '0' || s[0] == '+' {
			return "", 0, fmt.Errorf("%w: %q has no positive version number", ErrBadURI, raw)
		}
	}
	return name, version, nil
}
