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

// benchArtifacts is how many artifacts the store BenchmarkNew opens holds:
// benchSessions sessions of benchArtifacts/benchSessions each.
const (
	benchArtifacts = 2_000
	benchSessions  = 20
)

// BenchmarkNew opens a store of benchArtifacts artifacts, each with two
// versions: what the sweep on open costs (nothing to remove).
func BenchmarkNew(b *testing.B) {
	s := newStore(b)
	part := genai.NewPartFromBytes([]byte("x"), "text/plain")
	for i := range benchArtifacts {
		for range 2 {
			if _, err := s.Save(context.Background(), &artifact.SaveRequest{AppName: app, UserID: user,
				SessionID: fmt.Sprintf("s%02d", i%benchSessions), FileName: fmt.Sprintf("f%04d.txt", i), Part: part}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(s.dir); err != nil {
			b.Fatal(err)
		}
	}
}
