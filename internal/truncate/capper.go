package truncate

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Capper is an [io.Writer] that caps what is written to it exactly as
// [String] caps the concatenation of everything written, whatever the
// chunking: a character split across Write calls decodes as one character,
// and invalid bytes become U+FFFD as a range loop over the whole input would
// decode them.
//
// A Capper holds O(cap) memory however much is written: the UTF-8 of the
// head (the first 40% of the cap, rounded down) and a ring of the last
// characters (the rest of the cap), at most 4 bytes per kept character, plus
// at most 3 bytes of a character not yet complete. Both grow as characters
// arrive, so a short stream under a large cap stays small. It counts every
// character written, not only those it keeps.
//
// A Capper is not safe for concurrent use: one goroutine writes, and String,
// TotalChars and Truncated are called once writing is done (or from the same
// goroutine between writes). The zero value is a Capper with a cap of 0.
type Capper struct {
	maxChars int
	headCap  int // characters the head keeps
	tailCap  int // characters the ring keeps

	head  []byte // UTF-8 of the first characters, at most headCap of them
	headN int    // characters in head

	// ring holds the characters after the head, at most tailCap of them. It
	// grows by appending until it holds tailCap characters; from then on it
	// is circular and ringPos is the index of its oldest character.
	ring    []rune
	ringPos int

	total int64 // characters decoded so far (pending bytes not included)
	bytes int64 // bytes written

	// pending holds the start of a character whose remaining bytes have not
	// been written yet.
	pending  [utf8.UTFMax]byte
	npending int
}

// NewCapper returns a Capper that keeps maxChars characters of everything
// written to it. A negative maxChars is treated as 0, which keeps only the
// marker.
func NewCapper(maxChars int) *Capper {
	maxChars = clampCap(maxChars)
	h := headChars(maxChars)
	return &Capper{maxChars: maxChars, headCap: h, tailCap: maxChars - h}
}

// Write consumes p. It never fails: it always returns len(p), nil, so a
// caller copying a pipe into a Capper keeps draining it.
func (c *Capper) Write(p []byte) (int, error) {
	n := len(p)
	c.bytes += int64(n)
	p = c.completePending(p)
	if j := incompleteSuffix(p); j >= 0 {
		c.npending = copy(c.pending[:], p[j:])
		p = p[:j]
	}
	c.consume(p)
	return n, nil
}

// completePending decodes the characters that begin in c.pending (if any),
// taking the bytes they need from p, and returns the rest of p. When p ends
// before the pending character does, p is taken into c.pending and nil is
// returned.
func (c *Capper) completePending(p []byte) []byte {
	var tmp [2 * utf8.UTFMax]byte
	k := copy(tmp[:], c.pending[:c.npending])
	m := copy(tmp[k:k+utf8.UTFMax], p)
	buf := tmp[:k+m]
	i := 0
	for i < k {
		if !utf8.FullRune(buf[i:]) {
			// Only possible when all of p fit in buf (m == len(p)).
			c.npending = copy(c.pending[:], buf[i:])
			return nil
		}
		r, size := utf8.DecodeRune(buf[i:])
		c.consumeRune(r)
		i += size
	}
	c.npending = 0
	return p[i-k:]
}

// incompleteSuffix returns the index where p ends with the start of a
// character that is valid so far but incomplete, or -1. Decoding p[:j] and
// then p[j:] with more bytes appended yields what decoding the whole would:
// p[j] does not continue a character, so no encoding straddles j.
func incompleteSuffix(p []byte) int {
	for j := len(p) - 1; j >= 0 && j > len(p)-utf8.UTFMax; j-- {
		if utf8.RuneStart(p[j]) {
			if utf8.FullRune(p[j:]) {
				return -1
			}
			return j
		}
	}
	return -1
}

// consumeRune records one decoded character.
func (c *Capper) consumeRune(r rune) {
	c.total++
	if c.headN < c.headCap {
		c.appendHead(r)
		c.headN++
		return
	}
	c.appendTail(r)
}

// minAlloc is the smallest head or ring buffer a Capper allocates.
const minAlloc = 64

// appendHead adds r to the head, growing it by doubling but never past the
// most headCap characters can take (UTFMax bytes each, without overflowing
// for a huge cap).
func (c *Capper) appendHead(r rune) {
	if cap(c.head)-len(c.head) < utf8.UTFMax {
		grown := make([]byte, len(c.head), min(min(c.headCap, math.MaxInt/utf8.UTFMax)*utf8.UTFMax, max(2*cap(c.head), minAlloc)))
		copy(grown, c.head)
		c.head = grown
	}
	c.head = utf8.AppendRune(c.head, r)
}

// growRing makes room in the ring for n more characters (with len(ring)+n at
// most tailCap), growing it by doubling but never past tailCap.
func (c *Capper) growRing(n int) {
	if cap(c.ring) < len(c.ring)+n {
		grown := make([]rune, len(c.ring), min(c.tailCap, max(2*cap(c.ring), len(c.ring)+n, minAlloc)))
		copy(grown, c.ring)
		c.ring = grown
	}
}

// appendTail adds r to the ring, dropping its oldest character when full.
func (c *Capper) appendTail(r rune) {
	if len(c.ring) < c.tailCap {
		c.growRing(1)
		c.ring = append(c.ring, r)
		return
	}
	if c.tailCap == 0 {
		return
	}
	c.ring[c.ringPos] = r
	c.ringPos++
	if c.ringPos == c.tailCap {
		c.ringPos = 0
	}
}

// consume decodes p, which holds only complete characters (or invalid
// bytes), filling the head, then counting every character and keeping the
// last tailCap of them in the ring.
func (c *Capper) consume(p []byte) {
	for c.headN < c.headCap && len(p) > 0 {
		r, size := decodeRune(p)
		c.appendHead(r)
		c.headN++
		c.total++
		p = p[size:]
	}
	if len(p) == 0 {
		return
	}
	n, valid := countRunes(p)
	c.total += int64(n)
	if c.tailCap == 0 {
		return
	}
	if n >= c.tailCap {
		// At least tailCap characters: the last tailCap of p replace the
		// ring, and the ones before them need no decoding.
		p = p[lastChars(p, n, c.tailCap, valid):]
		n = c.tailCap
		c.ring = c.ring[:0]
		c.ringPos = 0
	}
	if free := c.tailCap - len(c.ring); free > 0 {
		// The ring is still filling: append.
		k := min(n, free)
		old := len(c.ring)
		c.growRing(k)
		c.ring = c.ring[:old+k]
		p = p[fillRunes(c.ring[old:], p, valid):]
		n -= k
	}
	// The ring is full; n < tailCap characters remain: overwrite the
	// oldest, wrapping around at most once.
	for n > 0 {
		k := min(n, c.tailCap-c.ringPos)
		p = p[fillRunes(c.ring[c.ringPos:c.ringPos+k], p, valid):]
		n -= k
		c.ringPos += k
		if c.ringPos == c.tailCap {
			c.ringPos = 0
		}
	}
}

// fillRunes decodes len(dst) characters of p into dst, as a range loop
// decodes them, and returns how many bytes of p they took. p must hold at
// least len(dst) characters; valid reports that p is valid UTF-8, which
// allows decoding without checks.
func fillRunes(dst []rune, p []byte, valid bool) int {
	i := 0
	for j := range dst {
		b := p[i]
		switch {
		case b < utf8.RuneSelf:
			dst[j] = rune(b)
			i++
		case !valid:
			r, size := utf8.DecodeRune(p[i:])
			dst[j] = r
			i += size
		case b < 0xE0:
			dst[j] = rune(b&0x1F)<<6 | rune(p[i+1]&0x3F)
			i += 2
		case b < 0xF0:
			dst[j] = rune(b&0x0F)<<12 | rune(p[i+1]&0x3F)<<6 | rune(p[i+2]&0x3F)
			i += 3
		default:
			dst[j] = rune(b&0x07)<<18 | rune(p[i+1]&0x3F)<<12 | rune(p[i+2]&0x3F)<<6 | rune(p[i+3]&0x3F)
			i += 4
		}
	}
	return i
}

// lastChars returns the offset in p, which holds n characters (valid
// reports whether it is valid UTF-8), where its last k characters begin;
// 0 < k <= n.
func lastChars(p []byte, n, k int, valid bool) int {
	if !valid {
		// Skip n-k characters forwards, decoding as a range loop does.
		i := 0
		for skip := n - k; skip > 0; skip-- {
			_, size := decodeRune(p[i:])
			i += size
		}
		return i
	}
	// In valid UTF-8 every byte that is not a continuation byte starts a
	// character: count them backwards, eight bytes at a time while the
	// count stays short of k.
	j := len(p)
	for ; j >= 8; j -= 8 {
		starts := 8 - bits.OnesCount64(continuations(p[j-8:]))
		if starts >= k {
			break
		}
		k -= starts
	}
	for j--; ; j-- {
		if utf8.RuneStart(p[j]) {
			k--
			if k == 0 {
				return j
			}
		}
	}
}

// continuations returns the top bit of each of the first eight bytes of p
// that is a UTF-8 continuation byte (top bits 10).
func continuations(p []byte) uint64 {
	const hi = 0x8080808080808080
	w := binary.LittleEndian.Uint64(p)
	return w &^ (w << 1) & hi
}

// decodeRune is utf8.DecodeRune with the ASCII case inline.
func decodeRune(p []byte) (rune, int) {
	if b := p[0]; b < utf8.RuneSelf {
		return rune(b), 1
	}
	return utf8.DecodeRune(p)
}

// countRunes counts the characters of p as a range loop would, invalid bytes
// one each, and reports whether p is valid UTF-8. Valid UTF-8 (the common
// case) is counted eight bytes at a time: every byte that is not a
// continuation byte starts a character.
func countRunes(p []byte) (n int, valid bool) {
	if isASCII(p) {
		return len(p), true
	}
	if !utf8.Valid(p) {
		for len(p) > 0 {
			_, size := decodeRune(p)
			n++
			p = p[size:]
		}
		return n, false
	}
	n = len(p)
	for ; len(p) >= 8; p = p[8:] {
		n -= bits.OnesCount64(continuations(p))
	}
	for _, b := range p {
		if !utf8.RuneStart(b) {
			n--
		}
	}
	return n, true
}

// isASCII reports whether p is all ASCII, testing 32 bytes at a time with
// one OR: script output is mostly ASCII, and this pass is several times
// cheaper than validating and counting UTF-8.
func isASCII(p []byte) bool {
	const hi = 0x8080808080808080
	for ; len(p) >= 32; p = p[32:] {
		w := binary.LittleEndian.Uint64(p) | binary.LittleEndian.Uint64(p[8:]) |
			binary.LittleEndian.Uint64(p[16:]) | binary.LittleEndian.Uint64(p[24:])
		if w&hi != 0 {
			return false
		}
	}
	for _, b := range p {
		if b >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// TotalChars returns how many characters have been written, counting a
// trailing incomplete character as String does (one U+FFFD per byte).
func (c *Capper) TotalChars() int64 {
	return c.total + int64(c.npending)
}

// TotalBytes returns how many bytes have been written.
func (c *Capper) TotalBytes() int64 {
	return c.bytes
}

// Truncated reports whether String elides anything: more than the cap has
// been written.
func (c *Capper) Truncated() bool {
	return c.TotalChars() > int64(c.maxChars)
}

// String returns the capped result of everything written so far, equal to
// [String] of the concatenated input. Bytes of a trailing incomplete
// character count as one U+FFFD each. String does not change the Capper.
func (c *Capper) String() string {
	// Flush an incomplete character on a copy.
	s := *c
	s.head = append([]byte(nil), c.head...)
	s.ring = append([]rune(nil), c.ring...)
	for range c.npending {
		s.consumeRune(utf8.RuneError)
	}
	var tail strings.Builder
	if len(s.ring) < s.tailCap {
		writeRunes(&tail, s.ring)
	} else {
		writeRunes(&tail, s.ring[s.ringPos:])
		writeRunes(&tail, s.ring[:s.ringPos])
	}
	if s.total <= int64(s.maxChars) {
		return string(s.head) + tail.String()
	}
	return render(string(s.head), tail.String(), s.total, s.maxChars)
}

func writeRunes(b *strings.Builder, rs []rune) {
	for _, r := range rs {
		b.WriteRune(r)
	}
}
