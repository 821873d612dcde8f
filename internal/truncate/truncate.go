// Package truncate is the one head-and-tail elision helper of adkskills.
//
// Everything the module hands to a model that may be large (a script's
// stdout and stderr above all) is capped here, in characters (Unicode code
// points), never bytes, and never by cutting inside a code point. The cut is
// tail-biased: the head keeps 40% of the cap (rounded down) and the tail the
// rest, because a failing run's signal is at its end. The kept content is
// exactly the cap; between head and tail stands a marker line that names the
// elided count N, the total M and the cap C:
//
//	... [truncated N of M characters: over the C-character cap; head and tail kept] ...
//
// The marker stands on its own line: a newline is inserted before it unless
// the head is empty or already ends with "\n", and a newline is inserted
// after it unless the tail is empty (only a cap of 0 has an empty tail). The
// inserted newlines are not counted in N, M or C.
//
// Invalid UTF-8 is decoded the way a Go range loop over a string decodes it:
// every byte that does not begin a valid encoding is one character, U+FFFD.
// At or under the cap, valid UTF-8 comes back byte for byte; invalid UTF-8
// comes back with each invalid byte replaced by U+FFFD, so the result is
// always valid UTF-8.
//
// [String] caps a string in memory; [Capper] is an [io.Writer] that produces
// the same result for the same bytes, whatever the chunking, while holding
// O(cap) memory.
package truncate

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// headChars returns how many of maxChars characters the head keeps:
// 40% rounded down. The tail keeps the rest. maxChars must not be negative.
func headChars(maxChars int) int {
	// maxChars*2/5 without overflow for any non-negative int.
	return maxChars/5*2 + maxChars%5*2/5
}

// clampCap treats a negative cap as 0.
func clampCap(maxChars int) int {
	return max(maxChars, 0)
}

// MarkerFormat is the marker that replaces the elided middle, as a
// [fmt.Sprintf] format taking N (characters elided), M (characters the input
// held) and C (the cap). Use [Marker] to format it.
const MarkerFormat = "... [truncated %d of %d characters: over the %d-character cap; head and tail kept] ..."

// Marker returns the marker text for elided characters out of total under
// a cap of maxChars, without the newlines that put it on its own line.
func Marker(elided, total int64, maxChars int) string {
	return fmt.Sprintf(MarkerFormat, elided, total, maxChars)
}

// render joins head and tail around the marker line, following the newline
// rule in the package documentation. head and tail must be valid UTF-8.
func render(head, tail string, total int64, maxChars int) string {
	m := Marker(total-int64(maxChars), total, maxChars)
	var b strings.Builder
	b.WriteString(head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(m)
	if tail != "" {
		b.WriteByte('\n')
	}
	b.WriteString(tail)
	return b.String()
}

// sanitize replaces every invalid byte of s with U+FFFD, one per byte, as a
// range loop decodes it. Valid UTF-8 is returned as is.
func sanitize(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// String caps s at maxChars characters. At or under the cap it returns s
// (byte for byte when s is valid UTF-8, else with each invalid byte replaced
// by U+FFFD). Over the cap it returns the first 40% of the cap (rounded down)
// and the last 60% around the marker line described in the package
// documentation. A negative maxChars is treated as 0, which keeps only the
// marker.
func String(s string, maxChars int) string {
	maxChars = clampCap(maxChars)
	total := utf8.RuneCountInString(s)
	if total <= maxChars {
		return sanitize(s)
	}
	h := headChars(maxChars)
	tailStart := total - (maxChars - h)
	headEnd, tailBegin := len(s), len(s)
	k := 0
	for i := range s {
		if k == h {
			headEnd = i
		}
		if k == tailStart {
			tailBegin = i
			break
		}
		k++
	}
	return render(sanitize(s[:headEnd]), sanitize(s[tailBegin:]), int64(total), maxChars)
}
