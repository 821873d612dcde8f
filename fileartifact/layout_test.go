package fileartifact

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestComponent(t *testing.T) {
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "~" + hex.EncodeToString(sum[:])
	}
	exact := strings.Repeat("x", maxEscaped)
	long := strings.Repeat("x", maxEscaped+1)
	upper := strings.Repeat("A", 100)  // escapes in 2-byte units
	accent := strings.Repeat("é", 100) // escapes in 3-byte units
	for _, tc := range []struct {
		in, want string
	}{
		{"report.txt", "report.txt"},
		{"a-b_c.9", "a-b_c.9"},
		{"z0", "z0"},
		{".", "%2e"},
		{"..", "%2e%2e"},
		{"...", "%2e.%2e"},
		{".hidden", "%2ehidden"},
		{"trailing.", "trailing%2e"},
		{"Report", "!report"},
		{"AZ", "!a!z"},
		{"user:x", "user%3ax"},
		{"a/b", "a%2fb"},
		{`a\b`, "a%5cb"},
		{"a\x00b", "a%00b"},
		{"\xff", "%ff"},
		{"é", "%c3%a9"},
		{"!%~ @[`{", "%21%25%7e%20%40%5b%60%7b"},
		{exact, exact},
		{long, strings.Repeat("x", keptPrefix) + hash(long)},
		{upper, strings.Repeat("!a", keptPrefix/2) + hash(upper)},
		{accent, (strings.Repeat("%c3%a9", keptPrefix/6) + "%c3")[:keptPrefix/3*3] + hash(accent)},
	} {
		got := component(tc.in)
		if got != tc.want {
			t.Errorf("component(%.30q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(got) > maxEscaped {
			t.Errorf("component(%.30q) is %d bytes, over %d", tc.in, len(got), maxEscaped)
		}
	}
}

func TestUnescape(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"report.txt", "report.txt", true},
		{"!report", "Report", true},
		{"%2e%2e", "..", true},
		{"user%3ax", "user:x", true},
		{"", "", false},
		{"Report", "", false}, // upper case is never written
		{"..", "", false},     // nor a bare dot
		{"%2E", "", false},    // nor upper-case hex
		{"%2", "", false},     // truncated escapes
		{"%", "", false},      // truncated escapes
		{"a!", "", false},     // truncated escapes
		{"%zz", "", false},    // not hex
		{"%g0", "", false},    // not hex
		{"%0g", "", false},    // not hex
		{"!5", "", false},     // '!' takes a lower-case letter
		{"%61", "", false},    // an escaped byte that needs none
		{"x~" + strings.Repeat("0", hashLen), "", false},
	} {
		got, ok := unescape(tc.in)
		if got != tc.want && tc.ok || ok != tc.ok {
			t.Errorf("unescape(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestShortened(t *testing.T) {
	h := strings.Repeat("ab", hashLen/2)
	for in, want := range map[string]bool{
		"x~" + h:                               true,
		"~" + h:                                true,
		"x" + h:                                false,
		"x~" + h[1:]:                           false,
		"x~" + h + "0":                         false,
		"x~" + strings.ToUpper(h):              false,
		"x~" + strings.Repeat("zz", hashLen/2): false,
	} {
		if got := shortened(in); got != want {
			t.Errorf("shortened(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "42": 42, "9223372036854775807": 1<<63 - 1,
		"0": 0, "-1": 0, "01": 0, "+1": 0, "1.0": 0, "": 0, "x": 0, "9223372036854775808": 0} {
		v, ok := parseVersion(in)
		if ok != (want > 0) || ok && v != want {
			t.Errorf("parseVersion(%q) = %d, %v; want %d", in, v, ok, want)
		}
	}
}

// FuzzComponent: any string becomes one safe file name that decodes back to
// it (or, shortened, carries its hash), and never "." or "..".
func FuzzComponent(f *testing.F) {
	for _, s := range []string{"a", ".", "..", "user:x", "A/b\\c", "\x00\xff", strings.Repeat("é", 90)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		c := component(s)
		if c == "" || c == "." || c == ".." || strings.HasPrefix(c, ".") || len(c) > maxEscaped {
			t.Fatalf("component(%q) = %q", s, c)
		}
		for i := 0; i < len(c); i++ {
			if b := c[i]; !('a' <= b && b <= 'z' || '0' <= b && b <= '9' || strings.IndexByte("-_.!%~", b) >= 0) {
				t.Fatalf("component(%q) = %q holds %q", s, c, b)
			}
		}
		got, ok := unescape(c)
		sum := sha256.Sum256([]byte(s))
		switch {
		case ok && got != s:
			t.Fatalf("unescape(component(%q)) = %q", s, got)
		case ok:
		case len(escape(s)) <= maxEscaped:
			t.Fatalf("component(%q) = %q does not decode", s, c)
		case !shortened(c) || !strings.HasSuffix(c, "~"+hex.EncodeToString(sum[:])):
			t.Fatalf("component(%q) = %q, want it shortened with its hash", s, c)
		}
	})
}
