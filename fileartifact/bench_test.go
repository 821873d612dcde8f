package fileartifact

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// Sizes benchmarked: a small text output and a larger file.
var benchSizes = []int{1 << 10, 1 << 20}

func BenchmarkSave(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := newStore(b)
			req := &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "out.bin",
				Part: genai.NewPartFromBytes(make([]byte, size), "application/octet-stream")}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Save(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := newStore(b)
			for range 10 { // Load latest has to find it among several
				if _, err := s.Save(context.Background(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "out.bin",
					Part: genai.NewPartFromBytes(make([]byte, size), "application/octet-stream")}); err != nil {
					b.Fatal(err)
				}
			}
			req := &artifact.LoadRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "out.bin"}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				r, err := s.Load(context.Background(), req)
				if err != nil || len(r.Part.InlineData.Data) != size {
					b.Fatal(err)
				}
			}
		})
	}
}
