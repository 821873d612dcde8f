package truncate

import (
	"testing"
	"unicode/utf8"
)

// FuzzCapperMatchesString feeds the same bytes to String and to a Capper in
// random chunks and asserts they agree with each other and with the naive
// reference model. Chunk sizes are taken cyclically from chunks (0 means an
// empty write followed by a 1-byte one); no chunks means 1-byte writes,
// which split every multi-byte character.
func FuzzCapperMatchesString(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), capTen, []byte{1})
	f.Add([]byte(multi), 3, []byte{})
	f.Add([]byte(multi+multi), capTen, []byte{2, 3, 5, 7})
	f.Add([]byte("a\x80b\xe2\x82z\xf0\x9f\x98"), 2, []byte{1, 0, 4})
	f.Add([]byte("\xf0a\xe2\x82\xac€\xac\xac"), 1, []byte{3})
	f.Add([]byte("line\nline\nline\n"), -1, []byte{6})
	f.Add([]byte{}, 0, []byte{})
	f.Fuzz(func(t *testing.T, data []byte, maxChars int, chunks []byte) {
		maxChars %= 64 // small caps cut often; negative ones stay negative
		in := string(data)
		want := String(in, maxChars)
		if ref := reference(in, maxChars); want != ref {
			t.Fatalf("String(%q, %d) = %q, reference %q", in, maxChars, want, ref)
		}
		if !utf8.ValidString(want) {
			t.Fatalf("String(%q, %d) = %q is not valid UTF-8", in, maxChars, want)
		}
		total := utf8.RuneCount(data)
		if total <= max(maxChars, 0) && utf8.Valid(data) && want != in {
			t.Fatalf("String(%q, %d) = %q, want the input back", in, maxChars, want)
		}

		c := NewCapper(maxChars)
		p := data
		for i := 0; len(p) > 0; i++ {
			size := 1
			if len(chunks) > 0 {
				size = int(chunks[i%len(chunks)])
			}
			if size == 0 {
				// An empty write, then a byte, so the loop always advances.
				if n, err := c.Write(p[:0]); n != 0 || err != nil {
					t.Fatalf("Write(empty) = %d, %v", n, err)
				}
				size = 1
			}
			size = min(size, len(p))
			if n, err := c.Write(p[:size]); n != size || err != nil {
				t.Fatalf("Write(%d bytes) = %d, %v", size, n, err)
			}
			p = p[size:]
		}
		if cap(c.head) > c.headCap*utf8.UTFMax || cap(c.ring) > c.tailCap {
			t.Fatalf("cap %d holds %d head bytes and %d ring characters", maxChars, cap(c.head), cap(c.ring))
		}
		if got := c.String(); got != want {
			t.Fatalf("Capper(%q, %d, chunks %v) = %q, String = %q", in, maxChars, chunks, got, want)
		}
		if c.TotalChars() != int64(total) {
			t.Fatalf("TotalChars = %d, want %d", c.TotalChars(), total)
		}
		if c.TotalBytes() != int64(len(data)) {
			t.Fatalf("TotalBytes = %d, want %d", c.TotalBytes(), len(data))
		}
		if c.Truncated() != (total > max(maxChars, 0)) {
			t.Fatalf("Truncated = %v with %d characters under cap %d", c.Truncated(), total, maxChars)
		}
	})
}
