package truncate

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// windowReference is Window on []rune, which decodes invalid bytes one
// U+FFFD each, as a range loop does.
func windowReference(s string, offset, length int64) (string, int64) {
	rs := []rune(s)
	n := int64(len(rs))
	offset, length = max(offset, 0), max(length, 0)
	from := min(offset, n)
	to := min(from+min(length, n), n)
	return string(rs[from:to]), n
}

// readers are the ways the tests hand Window its input: whole, a byte at a
// time (every multi-byte character split), and in halves.
var readers = map[string]func(string) io.Reader{
	"whole":  func(s string) io.Reader { return strings.NewReader(s) },
	"bytes":  func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
	"halves": func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	"eof":    func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
}

func TestWindow(t *testing.T) {
	long := strings.Repeat("abcdefghij", windowChunk/10*3) // spans chunks
	tests := []struct {
		name           string
		in             string
		offset, length int64
		want           string
	}{
		{"all", "0123456789", 0, 10, "0123456789"},
		{"middle", "0123456789", 3, 4, "3456"},
		{"past the end", "0123456789", 8, 10, "89"},
		{"at the end", "0123456789", 10, 5, ""},
		{"beyond the end", "0123456789", 99, 5, ""},
		{"empty input", "", 0, 5, ""},
		{"zero length", "0123456789", 2, 0, ""},
		{"negative offset", "0123456789", -5, 2, "01"},
		{"negative length", "0123456789", 1, -2, ""},
		{"huge length", "0123456789", 4, 1<<63 - 1, "456789"},
		{"characters, not bytes", multi, 1, 2, string([]rune(multi)[1:3])},
		{"invalid bytes are one U+FFFD each", "a\x80b\xe2\x82z", 1, 3, "\uFFFDb\uFFFD"},
		{"an incomplete character at the end", "ab\xf0\x9f\x98", 2, 5, "\uFFFD\uFFFD\uFFFD"},
		{"across chunks", long, windowChunk - 3, 7, long[windowChunk-3 : windowChunk+4]},
		{"the last characters", long, int64(len(long)) - 4, 10, long[len(long)-4:]},
	}
	for _, tt := range tests {
		for rname, rd := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, total, err := Window(rd(tt.in), tt.offset, tt.length)
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				assert.Equal(t, int64(utf8.RuneCountInString(tt.in)), total)
				ref, _ := windowReference(tt.in, tt.offset, tt.length)
				assert.Equal(t, ref, got, "the reference agrees")
			})
		}
	}
}

func TestWindowSplitCharacterAcrossChunks(t *testing.T) {
	// A 4-byte character straddles the chunk boundary at every offset.
	for shift := range utf8.UTFMax {
		in := strings.Repeat("a", windowChunk-shift) + "😀" + "z"
		got, total, err := Window(strings.NewReader(in), int64(windowChunk-shift), 2)
		require.NoError(t, err)
		assert.Equal(t, "😀z", got, "shift %d", shift)
		assert.Equal(t, int64(windowChunk-shift+2), total)
	}
}

func TestWindowReadError(t *testing.T) {
	boom := errors.New("boom")
	got, _, err := Window(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 0, 10)
	assert.ErrorIs(t, err, boom)
	assert.Empty(t, got, "nothing is returned with an error")
}

func TestElided(t *testing.T) {
	tests := []struct {
		total    int64
		maxChars int
		from, to int64
	}{
		{16, capTen, 4, 10},
		{10, capTen, 10, 10},
		{3, capTen, 3, 3},
		{100, 0, 0, 100},
		{100, -3, 0, 100},
		{1_000_000, 30_000, 12_000, 1_000_000 - 18_000},
	}
	for _, tt := range tests {
		from, to := Elided(tt.total, tt.maxChars)
		assert.Equal(t, [2]int64{tt.from, tt.to}, [2]int64{from, to}, "Elided(%d, %d)", tt.total, tt.maxChars)
	}
	// What String cuts is exactly the window Elided names.
	in := strings.Repeat("0123456789", 7) + multi
	for _, c := range []int{0, 1, capTen, 33} {
		total := int64(utf8.RuneCountInString(in))
		from, to := Elided(total, c)
		cut, _, err := Window(strings.NewReader(in), from, to-from)
		require.NoError(t, err)
		head, _, _ := Window(strings.NewReader(in), 0, from)
		tail, _, _ := Window(strings.NewReader(in), to, total)
		assert.Equal(t, joined(head, tail, int(to-from), int(total), c), String(in, c), "cap %d", c)
		assert.Equal(t, to-from, int64(utf8.RuneCountInString(cut)))
	}
}

// FuzzWindow checks Window against the reference model, with the input
// read in chunks of the fuzzed size.
func FuzzWindow(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), int64(3), int64(4), uint8(1))
	f.Add([]byte(multi), int64(1), int64(3), uint8(2))
	f.Add([]byte("a\x80b\xe2\x82z\xf0\x9f\x98"), int64(0), int64(100), uint8(3))
	f.Add([]byte{}, int64(0), int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, offset, length int64, chunk uint8) {
		var r io.Reader = bytes.NewReader(data)
		if chunk > 0 {
			r = &chunked{data: data, n: int(chunk)}
		}
		got, total, err := Window(r, offset, length)
		if err != nil {
			t.Fatal(err)
		}
		want, n := windowReference(string(data), offset, length)
		if got != want || total != n {
			t.Fatalf("Window(%q, %d, %d) = %q, %d; want %q, %d", data, offset, length, got, total, want, n)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Window = %q is not valid UTF-8", got)
		}
	})
}

// chunked reads data n bytes at a time.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}

// BenchmarkWindow reads a window at the end of 16 MiB of text: what a
// model's paged read of a large file costs.
func BenchmarkWindow(b *testing.B) {
	for _, in := range []struct{ name, line string }{
		{"ascii", "ok 1234 building target //pkg:all with flags -O2\n"},
		{"utf8", "résumé ✓ 中文输出 😀 done\n"},
	} {
		data := []byte(strings.Repeat(in.line, 16<<20/len(in.line)))
		total := int64(utf8.RuneCount(data))
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Window(bytes.NewReader(data), total-30_000, 30_000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
