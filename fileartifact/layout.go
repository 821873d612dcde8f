package fileartifact

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strconv"
	"strings"
)

// Names in the on-disk layout described in the package documentation.
// A version is a directory so that it can appear complete with one rename.
const (
	sessionsDir = "sessions"  // parent of the session scopes
	userDir     = "user"      // the user scope of "user:" names
	dataFile    = "data"      // a version's payload
	metaFile    = "meta.json" // a version's metadata
	tmpPrefix   = ".tmp-"     // a version being written, not (yet) locked
	trashPrefix = ".del-"     // a version being deleted, not locked
	lockPrefix  = ".w-"       // a save or delete in progress, locked by its process
	userPrefix  = "user:"     // names with it are user-scoped, as in ADK
	hexDigits   = "0123456789abcdef"
	hashMark    = '~' // starts the hash of a shortened component
	hashLen     = 2 * sha256.Size
	maxEscaped  = 160 // longest component kept whole once escaped
	keptPrefix  = maxEscaped - 1 - hashLen
)

// location is where one artifact's versions live, relative to DIR.
type location struct {
	parts []string // the escaped components from APP down to NAME
}

// locate maps an artifact to its directory. Names with the "user:" prefix
// live in the user scope and ignore sessionID, exactly as in ADK.
func locate(appName, userID, sessionID, fileName string) location {
	if strings.HasPrefix(fileName, userPrefix) {
		return location{parts: []string{component(appName), component(userID), userDir, component(fileName)}}
	}
	return location{parts: []string{component(appName), component(userID), sessionsDir, component(sessionID), component(fileName)}}
}

// dir is the artifact directory, slash-separated, relative to DIR.
func (l location) dir() string { return path.Join(l.parts...) }

// version is the directory of one version, relative to DIR.
func (l location) version(v int64) string { return path.Join(l.dir(), strconv.FormatInt(v, 10)) }

// scopeDirs are the directories whose entries List reads for a session: the
// session's own scope and the user scope.
func scopeDirs(appName, userID, sessionID string) [2]string {
	app, user := component(appName), component(userID)
	return [2]string{path.Join(app, user, sessionsDir, component(sessionID)), path.Join(app, user, userDir)}
}

// component escapes s into one file name that is safe on every common file
// system and distinct for distinct s:
//   - a-z, 0-9, '-' and '_' stand for themselves, and so does '.' except as
//     the first or last byte (so "." and ".." cannot occur and no name is
//     hidden or loses a trailing dot);
//   - an upper-case letter becomes '!' and its lower-case form, as in the Go
//     module cache, so names differing only in case stay apart on
//     case-insensitive file systems;
//   - every other byte (path separators, NUL, ':', non-ASCII, invalid UTF-8)
//     becomes '%' and two lower-case hex digits.
//
// An escaped form longer than maxEscaped bytes keeps at most keptPrefix bytes
// of it, followed by '~' and the hex SHA-256 of s. '~' never occurs in an
// unshortened component, so the two kinds cannot collide. s must be non-empty
// (every request's Validate ensures it).
func component(s string) string {
	e := escape(s)
	if len(e) <= maxEscaped {
		return e
	}
	// Cut after the last whole escape unit that fits; len(e) > keptPrefix.
	i := 0
	for n := unitLen(e[0]); i+n <= keptPrefix; n = unitLen(e[i]) {
		i += n
	}
	sum := sha256.Sum256([]byte(s))
	return e[:i] + string(hashMark) + hex.EncodeToString(sum[:])
}

// escape is component without the shortening.
func escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain(c) || c == '.' && i > 0 && i < len(s)-1 {
			b.WriteByte(c)
		} else if 'A' <= c && c <= 'Z' {
			b.WriteByte('!')
			b.WriteByte(c - 'A' + 'a')
		} else {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
	}
	return b.String()
}

// plain reports whether c stands for itself wherever it is.
func plain(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// unitLen is the length of the escape unit that starts with c.
func unitLen(c byte) int {
	switch c {
	case '!':
		return 2
	case '%':
		return 3
	}
	return 1
}

// unescape reverses escape. It reports false for anything escape would not
// produce (a shortened component, a file someone else put there), so only
// names this package wrote are ever decoded.
func unescape(e string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(e); {
		switch e[i] {
		case '!':
			if i+1 >= len(e) {
				return "", false
			}
			b.WriteByte(e[i+1] - 'a' + 'A')
			i += 2
		case '%':
			if i+2 >= len(e) {
				return "", false
			}
			hi, lo := strings.IndexByte(hexDigits, e[i+1]), strings.IndexByte(hexDigits, e[i+2])
			if hi < 0 || lo < 0 {
				return "", false
			}
			b.WriteByte(byte(hi<<4 | lo))
			i += 3
		default:
			b.WriteByte(e[i])
			i++
		}
	}
	s := b.String()
	return s, s != "" && escape(s) == e
}

// parseVersion reports the version a directory entry names: a positive
// decimal in canonical form ("1", never "01" or "+1").
func parseVersion(name string) (int64, bool) {
	v, err := strconv.ParseInt(name, 10, 64)
	return v, err == nil && v > 0 && strconv.FormatInt(v, 10) == name
}

// shortened reports whether e has the form of a shortened component: an
// escaped prefix, '~', and a hex SHA-256.
func shortened(e string) bool {
	i := strings.IndexByte(e, hashMark)
	if i < 0 || len(e)-i-1 != hashLen {
		return false
	}
	_, err := hex.DecodeString(e[i+1:])
	return err == nil && strings.ToLower(e[i+1:]) == e[i+1:]
}
