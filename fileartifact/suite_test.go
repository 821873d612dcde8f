package fileartifact

import (
	"path/filepath"
	"testing"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/artifacttest"
)

// TestConformance runs the behaviour suite every artifact.Service passes,
// ADK's in-memory service included: what callers see. The tests beside it
// check what only the file store has: the files on disk, crashes, other
// processes, Path, and where it deliberately differs from the in-memory
// service (TestSaveCopiesPart, TestSessionNamedUser).
func TestConformance(t *testing.T) {
	artifacttest.Run(t, func() artifact.Service {
		s, err := openStore(t)
		if err != nil {
			// Run calls this in its subtests, whose goroutines must not
			// call t.Fatal.
			panic(err)
		}
		return s
	})
}

// Defaults of the tests: most act in one app, user and session.
const (
	app   = "app"
	user  = "ada"
	sess1 = "s1"
)

// newStore returns a Service on a fresh directory, and checks when the test
// ends that nothing was created beside that directory.
func newStore(t testing.TB) *Service {
	t.Helper()
	s, err := openStore(t)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// openStore is newStore for callers that cannot call t.Fatal.
func openStore(t testing.TB) (*Service, error) {
	parent := t.TempDir()
	s, err := New(filepath.Join(parent, "store"))
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { assertOnlyStore(t, parent) })
	return s, nil
}

// bin is a binary part holding every byte value.
func bin() *genai.Part {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return genai.NewPartFromBytes(b, "image/png")
}

// txt is a text part.
func txt(s string) *genai.Part { return genai.NewPartFromText(s) }
