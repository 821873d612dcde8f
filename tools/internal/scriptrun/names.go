package scriptrun

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// userScopePrefix makes an ADK artifact user-scoped; a script's file must
// never land there.
const userScopePrefix = "user:"

// The two marks of artifact names. nameSlash stands for "/" (U+2215 DIVISION
// SLASH: it reads as the path it came from), and nameEscape starts an escaped
// byte, "~" and two upper-case hex digits. Neither is special in a URL path.
const (
	nameSlash  = '\u2215'
	nameEscape = '~'
)

// legacyEscape started an escaped byte in the artifact names of earlier
// releases ("dist%2Freport.zip"); ArtifactPath still reads them.
const legacyEscape = '%'

// ArtifactName maps an output file's path (relative to the skill root, "/"
// separators) to the artifact name it is saved under. The name is safe to put
// raw into a URL path, as ADK's web UI does: "/" becomes "∕" (U+2215), and
// "~", a literal "∕", "%", "\", "?", "#", bytes that are not UTF-8, control
// and format characters (terminal escapes, bidirectional overrides, line
// separators), the colon of a leading "user:" (which would put the file in
// user scope), a trailing space (which a browser drops from a URL), and a
// name that would be "." or ".." become "~" and the byte's two upper-case hex
// digits, byte by byte. "dist/report.zip" becomes "dist∕report.zip"; a plain
// file name ("report.md") keeps its name. The mapping is deterministic and
// injective; ArtifactPath inverts it.
func ArtifactName(p string) string {
	if p == "." || p == ".." {
		return strings.Repeat("~2E", len(p))
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == '/':
			b.WriteRune(nameSlash)
		case nameEscaped(p, i, r, size):
			for _, c := range []byte(p[i : i+size]) {
				fmt.Fprintf(&b, "%c%02X", nameEscape, c)
			}
		default:
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	return b.String()
}

// nameEscaped reports whether the character r of size bytes at byte i of p is
// escaped in p's artifact name.
func nameEscaped(p string, i int, r rune, size int) bool {
	switch {
	case r == nameEscape, r == nameSlash, r == legacyEscape, r == '\\', r == '?', r == '#':
		return true
	case r == utf8.RuneError && size == 1, hidden(r):
		return true
	case r == ':' && i == len(userScopePrefix)-1 && strings.HasPrefix(p, userScopePrefix):
		return true
	case r == ' ' && i == len(p)-1:
		return true
	}
	return false
}

// ArtifactPath inverts ArtifactName: the output file path an artifact name
// stands for, and whether name is one ArtifactName makes. It also reads the
// names of earlier releases, which escaped bytes as "%" and two hex digits
// ("dist%2Freport.zip"), so a store written by them keeps loading; an old
// name that is also a valid new one (its path had "~" and two hex digits, or
// "∕") is read as new. A name in neither form (a user's upload, say) is not a
// script's file: ok is false.
func ArtifactPath(name string) (p string, ok bool) {
	if !strings.ContainsRune(name, legacyEscape) {
		if p, ok := unescapeName(name, nameEscape, true); ok && ArtifactName(p) == name {
			return p, true
		}
	}
	if p, ok := unescapeName(name, legacyEscape, false); ok && legacyArtifactName(p) == name {
		return p, true
	}
	return "", false
}

// unescapeName decodes the escapes esc starts (two upper-case hex digits
// each) and, when slash is set, nameSlash; ok is false for a malformed escape.
func unescapeName(name string, esc rune, slash bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == esc:
			if i+3 > len(name) {
				return "", false
			}
			hi, ok1 := upperHex(name[i+1])
			lo, ok2 := upperHex(name[i+2])
			if !ok1 || !ok2 {
				return "", false
			}
			b.WriteByte(hi<<4 | lo)
			i += 3
			continue
		case slash && r == nameSlash:
			b.WriteByte('/')
		default:
			b.WriteString(name[i : i+size])
		}
		i += size
	}
	return b.String(), true
}

// upperHex is the value of an upper-case hex digit.
func upperHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// legacyArtifactName is the artifact name earlier releases gave p:
// DisplayPath's escaping plus "/", "\\" and the colon of a leading "user:".
func legacyArtifactName(p string) string {
	return escapePath(p, true)
}

// DisplayPath is how an output file's path is shown to the model and in
// warnings: the path with "%", bytes that are not UTF-8, and control and
// format characters (terminal escapes, bidirectional overrides, line
// separators) percent-escaped byte by byte, so every name is valid UTF-8 that
// displays as what it is, and distinct paths stay distinct.
func DisplayPath(p string) string {
	return escapePath(p, false)
}

func escapePath(p string, artifact bool) string {
	var b strings.Builder
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		escape := r == '%' || (r == utf8.RuneError && size == 1) || hidden(r)
		if artifact {
			escape = escape || r == '/' || r == '\\' ||
				(r == ':' && i == len(userScopePrefix)-1 && strings.HasPrefix(p, userScopePrefix))
		}
		if escape {
			for _, c := range []byte(p[i : i+size]) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		} else {
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hidden reports a character that does not show as itself: a control
// character (C0, DEL, C1), a format character (bidirectional overrides,
// zero-width characters) or a line or paragraph separator.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// EscapeHidden escapes, as \xNN or \uNNNN, the characters of s that would
// not show as themselves on a terminal or in a review (see DisplayPath),
// keeping newlines and tabs. What a human approves is then what runs.
func EscapeHidden(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || !hidden(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}
