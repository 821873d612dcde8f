package runscript

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// userScopePrefix makes an ADK artifact user-scoped; a script's file must
// never land there.
const userScopePrefix = "user:"

// ArtifactName maps an output file's path (relative to the skill root, "/"
// separators) to the artifact name it is saved under: DisplayPath's escaping
// plus "/" and "\" (which ADK rejects in names) and the colon of a leading
// "user:" (which would put the file in user scope). "dist/report.zip"
// becomes "dist%2Freport.zip"; a file named "a.txt" keeps its name. The
// mapping is deterministic and injective: distinct paths never share a name.
func ArtifactName(p string) string {
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

// Visible escapes the characters of s that would not show as themselves on a
// terminal or in a review (see DisplayPath), keeping newlines and tabs, as
// \xNN or \uNNNN. What a human approves is then what runs.
func Visible(s string) string {
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
