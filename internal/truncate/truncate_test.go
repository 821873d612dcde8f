package truncate

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capTen is the small cap the contract pins: it keeps 4 head + 6 tail.
const capTen = 10

// markerText spells the marker independently of MarkerFormat, so a change to
// the format fails these tests.
func markerText(elided, total, maxChars int) string {
	return fmt.Sprintf("... [truncated %d of %d characters: over the %d-character cap; head and tail kept] ...",
		elided, total, maxChars)
}

// split is the contract's split, computed independently of headChars:
// 40% of the cap rounded down for the head, the rest for the tail.
func split(maxChars int) (head, tail int) {
	head = maxChars * 4 / 10
	return head, maxChars - head
}

// reference is a deliberately naive model of the contract, on []rune (which
// decodes invalid bytes one U+FFFD each, as a range loop does).
func reference(s string, maxChars int) string {
	maxChars = max(maxChars, 0)
	rs := []rune(s)
	if len(rs) <= maxChars {
		return string(rs)
	}
	h, tl := split(maxChars)
	return joined(string(rs[:h]), string(rs[len(rs)-tl:]), len(rs)-maxChars, len(rs), maxChars)
}

// joined puts head and tail around the marker line by the newline rule.
func joined(head, tail string, elided, total, maxChars int) string {
	var b strings.Builder
	b.WriteString(head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(markerText(elided, total, maxChars))
	if tail != "" {
		b.WriteString("\n")
	}
	b.WriteString(tail)
	return b.String()
}

// capWriter writes in to a new Capper in chunks of chunk bytes (0: one write).
func capWriter(t *testing.T, in string, maxChars, chunk int) *Capper {
	t.Helper()
	c := NewCapper(maxChars)
	p := []byte(in)
	if chunk <= 0 {
		chunk = len(p) + 1
	}
	for len(p) > 0 {
		k := min(chunk, len(p))
		n, err := c.Write(p[:k])
		require.NoError(t, err)
		require.Equal(t, k, n)
		p = p[k:]
	}
	return c
}

// assertCapped checks String and the Capper (one write, 1-byte writes and
// 3-byte writes) all produce want, and the Capper's counts.
func assertCapped(t *testing.T, in string, maxChars int, want string) {
	t.Helper()
	assert.Equal(t, want, String(in, maxChars), "String")
	total := utf8.RuneCountInString(in)
	for _, chunk := range []int{0, 1, 3} {
		c := capWriter(t, in, maxChars, chunk)
		assert.Equal(t, want, c.String(), "Capper, chunk %d", chunk)
		assert.Equal(t, int64(total), c.TotalChars(), "TotalChars, chunk %d", chunk)
		assert.Equal(t, total > max(maxChars, 0), c.Truncated(), "Truncated, chunk %d", chunk)
	}
}

// distinct returns n characters, all different, so a slice of the result
// identifies where it was cut.
func distinct(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteRune(rune('A' + i%26 + i/26*32))
	}
	return b.String()
}

func TestSplit(t *testing.T) {
	h, tl := split(capTen)
	require.Equal(t, 4, h, "the contract pins cap 10 as 4 head")
	require.Equal(t, 6, tl, "the contract pins cap 10 as 6 tail")
	for _, maxChars := range []int{0, 1, 2, 3, 4, 5, 6, 7, 9, capTen, 11, 29_999, 30_000, 30_001} {
		h, tl := split(maxChars)
		assert.Equal(t, h, headChars(maxChars), "cap %d", maxChars)
		assert.Equal(t, maxChars, h+tl)
		assert.GreaterOrEqual(t, tl, h, "the tail is never shorter than the head")
	}
	// headChars never overflows, where maxChars*2 would.
	const huge = int(^uint(0) >> 1)
	assert.Equal(t, huge/5*2+huge%5*2/5, headChars(huge))
	assert.Positive(t, headChars(huge))
}

func TestBelowAtAndOverTheCap(t *testing.T) {
	for _, maxChars := range []int{1, 2, 3, 5, capTen, 11, 1000} {
		h, tl := split(maxChars)
		tests := []struct {
			name  string
			total int
		}{
			{"one under", maxChars - 1},
			{"at", maxChars},
			{"one over", maxChars + 1},
			{"double plus seven", 2*maxChars + 7},
		}
		for _, tc := range tests {
			t.Run(fmt.Sprintf("cap %d %s", maxChars, tc.name), func(t *testing.T) {
				in := distinct(tc.total)
				want := in
				if tc.total > maxChars {
					rs := []rune(in)
					want = joined(string(rs[:h]), string(rs[tc.total-tl:]), tc.total-maxChars, tc.total, maxChars)
				}
				assertCapped(t, in, maxChars, want)
				if tc.total <= maxChars {
					assert.Same(t, unsafeData(in), unsafeData(String(in, maxChars)), "at or under the cap: the input itself")
				}
			})
		}
	}
}

// unsafeData identifies a string's backing array, to show String returns its
// input rather than a copy.
func unsafeData(s string) *byte {
	if s == "" {
		return nil
	}
	return unsafe.StringData(s)
}

func TestCapTenExactSlices(t *testing.T) {
	h, tl := split(capTen)
	total := capTen + capTen/2
	in := distinct(total)
	head, tail := in[:h], in[total-tl:]
	want := head + "\n" + markerText(total-capTen, total, capTen) + "\n" + tail
	assertCapped(t, in, capTen, want)

	got := String(in, capTen)
	assert.True(t, strings.HasPrefix(got, head+"\n"), "head is the first %d characters", h)
	assert.True(t, strings.HasSuffix(got, "\n"+tail), "tail is the last %d characters", tl)
	assert.Equal(t, 3, strings.Count(got, "\n")+1, "head, marker and tail lines")
}

func TestMarkerLine(t *testing.T) {
	h, tl := split(capTen)
	total := capTen * 3
	mark := markerText(total-capTen, total, capTen)
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "head without newline gets one",
			in:   strings.Repeat("x", total),
			want: strings.Repeat("x", h) + "\n" + mark + "\n" + strings.Repeat("x", tl),
		},
		{
			name: "head ending in a newline gets none",
			in:   strings.Repeat("x", h-1) + "\n" + strings.Repeat("y", total-h),
			want: strings.Repeat("x", h-1) + "\n" + mark + "\n" + strings.Repeat("y", tl),
		},
		{
			name: "tail starting with a newline keeps it",
			in:   strings.Repeat("x", total-tl) + "\n" + strings.Repeat("y", tl-1),
			want: strings.Repeat("x", h) + "\n" + mark + "\n\n" + strings.Repeat("y", tl-1),
		},
		{
			name: "lines of output",
			in:   strings.Repeat("ab\n", total/3),
			want: strings.Repeat("ab\n", total/3)[:h] + "\n" + mark + "\n" + strings.Repeat("ab\n", total/3)[total-tl:],
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, total, utf8.RuneCountInString(tc.in))
			assertCapped(t, tc.in, capTen, tc.want)
			for line := range strings.Lines(String(tc.in, capTen)) {
				if strings.Contains(line, "[truncated") {
					assert.Equal(t, mark, strings.TrimSuffix(line, "\n"), "the marker stands on its own line")
				}
			}
		})
	}
}

func TestMarkerFormat(t *testing.T) {
	assert.Equal(t, markerText(capTen, 3*capTen, 2*capTen), Marker(capTen, 3*capTen, 2*capTen))
	assert.Equal(t, markerText(capTen, 3*capTen, 2*capTen), fmt.Sprintf(MarkerFormat, capTen, 3*capTen, 2*capTen))
}

func TestZeroAndNegativeCap(t *testing.T) {
	const total = capTen
	in := distinct(total)
	for _, maxChars := range []int{0, -1, -capTen, -int(^uint(0) >> 1)} {
		t.Run(fmt.Sprint(maxChars), func(t *testing.T) {
			assertCapped(t, in, maxChars, markerText(total, total, 0))
			assertCapped(t, "", maxChars, "")
			assertCapped(t, "\xff", maxChars, markerText(1, 1, 0))
		})
	}
	t.Run("cap 1 keeps only a tail", func(t *testing.T) {
		assertCapped(t, in, 1, markerText(total-1, total, 1)+"\n"+in[total-1:])
	})
	t.Run("zero Capper", func(t *testing.T) {
		var c Capper
		_, _ = c.Write([]byte(in))
		assert.Equal(t, markerText(total, total, 0), c.String())
		assert.Equal(t, int64(total), c.TotalChars())
		assert.True(t, c.Truncated())
		var empty Capper
		assert.Empty(t, empty.String())
		assert.False(t, empty.Truncated())
	})
}

// multi holds characters of every UTF-8 width, emoji included (one with a
// variation selector and a ZWJ sequence, which are several code points), and
// four-byte ones from the higher planes (lead bytes 0xF3 and 0xF4).
const multi = "aé€😀ß中🇫🇷👩‍💻z\n☃️𝄞\U000E0041\U0010FFFD"

func TestMultiByteCutAtEveryOffset(t *testing.T) {
	rs := []rune(multi)
	total := len(rs)
	for maxChars := 0; maxChars <= total+1; maxChars++ {
		want := reference(multi, maxChars)
		assert.Equal(t, want, String(multi, maxChars), "String, cap %d", maxChars)
		assert.True(t, utf8.ValidString(want))
		if maxChars < total {
			h, tl := split(maxChars)
			assert.True(t, strings.HasPrefix(want, string(rs[:h])), "cap %d head", maxChars)
			assert.True(t, strings.HasSuffix(want, string(rs[total-tl:])), "cap %d tail", maxChars)
			assert.Contains(t, want, markerText(total-maxChars, total, maxChars))
		} else {
			assert.Equal(t, multi, want)
		}
		// The Capper agrees whichever byte the chunks are split at, and in
		// chunks of every size.
		for off := 0; off <= len(multi); off++ {
			c := NewCapper(maxChars)
			_, _ = c.Write([]byte(multi[:off]))
			_, _ = c.Write([]byte(multi[off:]))
			assert.Equal(t, want, c.String(), "cap %d, split at byte %d", maxChars, off)
			assert.Equal(t, int64(total), c.TotalChars(), "cap %d, split at byte %d", maxChars, off)
		}
		for chunk := 1; chunk <= utf8.UTFMax+1; chunk++ {
			assert.Equal(t, want, capWriter(t, multi, maxChars, chunk).String(), "cap %d, chunk %d", maxChars, chunk)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	const r = "\uFFFD"
	tests := []struct {
		name string
		in   string
		// clean is the input with each invalid byte as U+FFFD.
		clean string
	}{
		{"lone continuation", "a\x80b", "a" + r + "b"},
		{"lone lead at end", "ab\xe2", "ab" + r},
		{"truncated three-byte", "\xe2\x82z", r + r + "z"},
		{"truncated four-byte at end", "z\xf0\x9f\x98", "z" + r + r + r},
		{"overlong", "\xc0\xaf", r + r},
		{"surrogate", "\xed\xa0\x80", r + r + r},
		{"beyond U+10FFFF", "\xf4\x90\x80\x80", r + r + r + r},
		{"0xff bytes", "\xff\xfe", r + r},
		{"valid U+FFFD is kept", r + "\xff", r + r},
		{"lead then ASCII", "\xf0a\xe2\x82\xac", r + "a€"},
		{"extra continuation", "€\xac\xac", "€" + r + r},
		{"scattered through text", "ok\xff ok\xe2\x82 ok\xc0 é\xf0\x9f done", "ok" + r + " ok" + r + r + " ok" + r + " é" + r + r + " done"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			total := utf8.RuneCountInString(tc.clean)
			require.Equal(t, total, utf8.RuneCountInString(tc.in), "each invalid byte is one character")
			// At and over the cap.
			assertCapped(t, tc.in, total, tc.clean)
			assertCapped(t, tc.in, total+capTen, tc.clean)
			for maxChars := range total {
				want := reference(tc.in, maxChars)
				assert.True(t, utf8.ValidString(want))
				assertCapped(t, tc.in, maxChars, want)
			}
		})
	}
}

func TestCapperCountsEverything(t *testing.T) {
	h, tl := split(capTen)
	const lines = 1000
	c := NewCapper(capTen)
	var all strings.Builder
	for i := range lines {
		line := fmt.Sprintf("line %d é😀\n", i)
		all.WriteString(line)
		n, err := c.Write([]byte(line))
		require.NoError(t, err)
		require.Equal(t, len(line), n)
	}
	total := utf8.RuneCountInString(all.String())
	assert.Equal(t, int64(total), c.TotalChars())
	assert.Equal(t, int64(all.Len()), c.TotalBytes())
	assert.True(t, c.Truncated())
	assert.Equal(t, reference(all.String(), capTen), c.String())
	assert.Contains(t, c.String(), markerText(total-capTen, total, capTen))
	// O(cap) memory: the head and ring hold no more than the cap.
	assert.LessOrEqual(t, cap(c.head), h*utf8.UTFMax)
	assert.Equal(t, tl, cap(c.ring))
}

func TestCapperBigWrites(t *testing.T) {
	// Writes larger than the ring, smaller than it, and ones that straddle
	// the head, in every order.
	h, tl := split(capTen)
	sizes := []int{h - 1, 1, tl - 1, tl, tl + 1, 3 * capTen, 2}
	var all strings.Builder
	c := NewCapper(capTen)
	for round := range 3 {
		for i, n := range sizes {
			chunk := strings.Repeat(string(rune('a'+i+round)), n) + "é"
			all.WriteString(chunk)
			_, _ = c.Write([]byte(chunk))
			require.Equal(t, reference(all.String(), capTen), c.String(), "round %d after write %d", round, i)
		}
	}
}

func TestCapperStringMidCharacter(t *testing.T) {
	const emoji = "😀"
	in := distinct(capTen) + emoji
	c := NewCapper(capTen)
	_, _ = c.Write([]byte(in[:len(in)-2]))
	// The stream so far ends in half an emoji: two bytes, two U+FFFD.
	partial := in[:len(in)-2]
	assert.Equal(t, reference(partial, capTen), c.String())
	assert.Equal(t, int64(capTen+2), c.TotalChars())
	assert.Equal(t, int64(len(partial)), c.TotalBytes(), "the bytes of half a character count")
	assert.True(t, c.Truncated())
	// String does not change the Capper: the emoji still completes.
	_, _ = c.Write([]byte(in[len(in)-2:]))
	first := c.String()
	assert.Equal(t, reference(in, capTen), first)
	assert.Equal(t, int64(capTen+1), c.TotalChars())
	assert.Equal(t, first, c.String(), "a second String is the first")
}

func TestCapperEmptyWrites(t *testing.T) {
	c := NewCapper(capTen)
	n, err := c.Write(nil)
	assert.Zero(t, n)
	assert.NoError(t, err)
	_, _ = c.Write([]byte("\xf0"))
	_, _ = c.Write(nil)
	_, _ = c.Write([]byte{})
	_, _ = c.Write([]byte("\x9f\x98\x80"))
	assert.Equal(t, "😀", c.String())
	assert.Equal(t, int64(1), c.TotalChars())
	assert.False(t, c.Truncated())
}

func TestCountRunes(t *testing.T) {
	for _, s := range []string{"", "a", strings.Repeat("x", 8), strings.Repeat("x", 17), "abcdefg€hijklmnop\xff", multi + strings.Repeat("q", 9)} {
		assert.Equal(t, utf8.RuneCountInString(s), first(countRunes([]byte(s))), "%q", s)
	}
}

func first[A, B any](a A, _ B) A { return a }

func TestCapperHugeCapStaysSmall(t *testing.T) {
	const huge = int(^uint(0) >> 1)
	in := distinct(capTen * capTen * capTen)
	c := capWriter(t, in, huge, capTen)
	assert.Equal(t, in, c.String())
	assert.False(t, c.Truncated())
	// Buffers grow with what arrives, not with the cap.
	assert.LessOrEqual(t, cap(c.head), 2*len(in)+minAlloc)
	assert.Empty(t, c.ring, "the head takes everything under a huge cap")

	// A ring that fills by single writes never outgrows the tail.
	h, tl := split(capTen * capTen)
	c = capWriter(t, in, capTen*capTen, 1)
	assert.Equal(t, tl, cap(c.ring))
	assert.LessOrEqual(t, cap(c.head), h*utf8.UTFMax)

	// Nor does a head of four-byte characters outgrow its bound.
	emoji := strings.Repeat("😀", 2*capTen*capTen)
	for _, chunk := range []int{1, utf8.UTFMax, 0} {
		c = capWriter(t, emoji, capTen*capTen, chunk)
		assert.Equal(t, String(emoji, capTen*capTen), c.String())
		assert.Equal(t, h*utf8.UTFMax, len(c.head))
		assert.Equal(t, h*utf8.UTFMax, cap(c.head), "chunk %d", chunk)
		assert.Equal(t, tl, cap(c.ring), "chunk %d", chunk)
	}
}
