package adktest

import (
	"fmt"
	"strings"
)

// WebUIArtifactPath is the request path (escaped, as it goes on the wire) a
// browser sends when ADK's web UI loads an artifact: the UI puts the name raw
// into the URL (`/apps/${app}/users/${user}/sessions/${session}/artifacts/${name}`,
// plus `/versions/${version}`; version 0 is the latest), and the browser's
// URL parser does what WebUIPath does.
func WebUIArtifactPath(app, user, sessionID, name string, version int) string {
	url := fmt.Sprintf("/apps/%s/users/%s/sessions/%s/artifacts/%s", app, user, sessionID, name)
	if version > 0 {
		url += fmt.Sprintf("/versions/%d", version)
	}
	return WebUIPath(url)
}

// c0OrSpace is what the WHATWG URL parser strips from both ends of a URL.
const c0OrSpace = " \x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f" +
	"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"

// WebUIPath is the path a browser requests for the path-absolute URL u, by
// the WHATWG URL parser's rules for http URLs: tabs and newlines are
// dropped anywhere and C0 controls and spaces at the end; the path ends at
// "?" or "#"; "\" is a "/"; "." and ".." segments (also written %2E) are
// resolved; controls, space, non-ASCII bytes and `"<>^{}` are
// percent-encoded, and "%" is sent as it is.
func WebUIPath(u string) string {
	u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u)
	u = strings.TrimRight(u, c0OrSpace)
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	u = strings.ReplaceAll(u, `\`, "/")
	var segs []string
	parts := strings.Split(u, "/")
	for i, seg := range parts {
		last := i == len(parts)-1
		switch strings.ToLower(seg) {
		case ".", "%2e":
			if last {
				segs = append(segs, "")
			}
			continue
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(segs) > 1 {
				segs = segs[:len(segs)-1]
			}
			if last {
				segs = append(segs, "")
			}
			continue
		}
		segs = append(segs, seg)
	}
	var b strings.Builder
	for _, c := range []byte(strings.Join(segs, "/")) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"<>`{}^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
