package mcpskills

import (
	"context"
	"testing"
)

// BenchmarkSkillsList is one skills/list of the test skills over the
// stdio-like transport: each file of each skill read and hashed.
func BenchmarkSkillsList(b *testing.B) {
	f := newFixture(b, testSkills)
	cs := connectStdio(b, f.s, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := list(ctx, cs, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEntry describes one skill: its frontmatter and manifest.
func BenchmarkEntry(b *testing.B) {
	f := newFixture(b, testSkills)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.s.cat.entry(ctx, "report-writer"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSourceCheck is what a Source does before each use of a remote
// skill whose files did not change: one skills/get, no file fetched.
func BenchmarkSourceCheck(b *testing.B) {
	f := newFixture(b, testSkills)
	src, err := NewSource(connectStdio(b, f.s, nil))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.ListResources(ctx, "report-writer", ""); err != nil {
			b.Fatal(err)
		}
	}
}
