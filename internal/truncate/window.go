package truncate

import (
	"errors"
	"io"
	"strings"
)

// Elided returns the characters [from, to) that [String] and [Capper] cut
// from a text of total characters under a cap of maxChars: the ones the
// marker stands for. Nothing is cut (from == to == total) when total is at
// or under the cap. A negative maxChars is treated as 0.
func Elided(total int64, maxChars int) (from, to int64) {
	maxChars = clampCap(maxChars)
	if total <= int64(maxChars) {
		return total, total
	}
	h := int64(headChars(maxChars))
	return h, total - (int64(maxChars) - h)
}

// windowChunk is how many bytes Window reads at a time.
const windowChunk = 32 << 10

// Window reads r to its end and returns its characters [offset,
// offset+length), decoded as [String] decodes the whole input (every invalid
// byte is one U+FFFD, whatever the chunking of r), and how many characters r
// held in all. A window past the end is empty. Negative offset and length are
// treated as 0.
//
// Window holds O(length) memory however long r is, and decodes only the
// characters it keeps: the others are counted eight bytes at a time. It
// pairs with [Elided]: the characters a cap cut are the window
// [from, to).
func Window(r io.Reader, offset, length int64) (string, int64, error) {
	offset, length = max(offset, 0), max(length, 0)
	end := offset + length
	if end < offset { // overflow: the window reaches the end
		end = 1<<63 - 1
	}
	var (
		b     strings.Builder
		total int64
		buf   = make([]byte, windowChunk+4)
		carry int // bytes of an incomplete character at the start of buf
	)
	// keep decodes p, which holds only whole characters (or invalid bytes),
	// counting every character and keeping those in the window.
	keep := func(p []byte) {
		n, _ := countRunes(p)
		if total+int64(n) <= offset || total >= end {
			total += int64(n)
			return
		}
		for len(p) > 0 && total < end {
			r, size := decodeRune(p)
			if total >= offset {
				b.WriteRune(r)
			}
			total++
			p = p[size:]
		}
		n, _ = countRunes(p)
		total += int64(n)
	}
	for {
		n, err := io.ReadAtLeast(r, buf[carry:windowChunk], 1)
		data := buf[:carry+n]
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			keep(data) // an incomplete character at the end is invalid bytes
			return b.String(), total, nil
		}
		if err != nil {
			return "", total, err
		}
		carry = 0
		if j := incompleteSuffix(data); j >= 0 {
			keep(data[:j])
			carry = copy(buf, data[j:])
			continue
		}
		keep(data)
	}
}
