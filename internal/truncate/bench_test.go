package truncate

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCapperWrite measures Write throughput at the module's default cap
// (30,000 characters), with 32 KiB writes (what io.Copy makes) and 1 MiB
// writes (what a reader with a large buffer makes), on ASCII, multi-byte
// and invalid UTF-8.
func BenchmarkCapperWrite(b *testing.B) {
	const maxChars = 30_000
	inputs := []struct {
		name string
		line string
	}{
		{"ascii", "ok 1234 building target //pkg:all with flags -O2\n"},
		{"utf8", "résumé ✓ 中文输出 😀 done\n"},
		{"invalid", "bytes \xff\xfe\xe2\x82 end\n"},
	}
	for _, chunk := range []int{32 << 10, 1 << 20} {
		for _, in := range inputs {
			buf := []byte(strings.Repeat(in.line, chunk/len(in.line)+1)[:chunk])
			b.Run(fmt.Sprintf("%s/%dKiB", in.name, chunk>>10), func(b *testing.B) {
				c := NewCapper(maxChars)
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				for b.Loop() {
					_, _ = c.Write(buf)
				}
			})
		}
	}
}
