package artifacttest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/artifact"
)

// Sizes of AgreesWithInMemory.
const (
	randomSteps      = 600 // calls compared
	randomStepsShort = 150 // with -short
	historyShown     = 20  // earlier calls a failure lists
)

// testAgreesWithInMemory drives svc and a fresh ADK in-memory service with
// the same long pseudo-random sequence of calls and requires the same
// answer from both at every step: the scenarios say what we expect, this
// catches what they did not think of. The calls mix a few apps, users,
// sessions and names that differ in case, "user:" scope and hostile names,
// every kind of part, versions from -1 to 4, and invalid names.
func testAgreesWithInMemory(t *testing.T, svc artifact.Service) {
	seed := *seedFlag
	if seed == 0 {
		for seed == 0 {
			seed = rand.Int64()
		}
		t.Logf("seed %d", seed)
	}
	ref := artifact.InMemoryService()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	steps := randomSteps
	if testing.Short() {
		steps = randomStepsShort
	}
	var history []call
	for i := range steps {
		c := call{
			app:     pick("app", "App"),
			user:    pick("ada", "bob"),
			session: pick("s1", "s2", ".."),
			name:    pick("a", "A", "user:a", "user:A", "..", "user:..", "user:", "bad/name"),
			version: int64(rng.IntN(6)) - 1,
		}
		switch n := rng.IntN(10); {
		case n < 4:
			c.op = opSave
			p := oddParts[rng.IntN(len(oddParts))]
			c.part, c.partName = p.part(), p.name
		case n < 6:
			c.op = opLoad
		case n < 7:
			c.op = opList
		case n < 8:
			c.op = opVersions
		case n < 9:
			c.op = opDelete
			if rng.IntN(2) == 0 {
				c.version = 0
			}
		default:
			c.op = opGet
		}
		want, got := do(t.Context(), ref, c), do(t.Context(), svc, c)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d, step %d: %v: (-inmemory +got)\n%s\nrerun with -artifacttest.seed=%d; the calls before it in this app and user:\n%s",
				seed, i, c, diff, seed, earlier(history, c))
		}
		history = append(history, c)
	}
}

// earlier lists, oldest first, the last calls of history in c's app and
// user: those that made the state c saw.
func earlier(history []call, c call) string {
	var lines []string
	for i := len(history) - 1; i >= 0 && len(lines) < historyShown; i-- {
		if h := history[i]; h.app == c.app && h.user == c.user {
			lines = append(lines, fmt.Sprintf("\tstep %d: %v", i, h))
		}
	}
	var b strings.Builder
	for i := len(lines) - 1; i >= 0; i-- {
		b.WriteString(lines[i] + "\n")
	}
	return b.String()
}
