package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/internal/truncate"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
)

const (
	// bigBodyChars is the body of the big SKILL.md: 500 caps' worth, 50
	// MB at the default cap.
	bigBodyChars = 500 * skilltoolset.DefaultMaxReadChars
	// bigLine is one line of it; each says where it starts.
	bigLineChars = 100
	bigFront     = "---\nname: huge\ndescription: A skill whose SKILL.md is huge.\n---\n"
)

// bigLine is the line of the big body that starts at character i (a
// multiple of bigLineChars).
func bigLine(i int) string {
	s := fmt.Sprintf("line at %012d ", i)
	return s + strings.Repeat("x", bigLineChars-len(s)-1) + "\n"
}

// bigBody returns the characters [from, to) of the big body.
func bigBody(from, to int) string {
	var b strings.Builder
	for i := from / bigLineChars * bigLineChars; i < to; i += bigLineChars {
		b.WriteString(bigLine(i))
	}
	s := b.String()
	skip := from % bigLineChars
	return s[skip : skip+to-from]
}

// writeBigSkill writes the skill "huge", whose SKILL.md has a body of
// bigBodyChars characters, under a fresh skills folder.
func writeBigSkill(tb testing.TB) string {
	dir := tb.TempDir()
	require.NoError(tb, os.Mkdir(filepath.Join(dir, "huge"), 0o755))
	f, err := os.Create(filepath.Join(dir, "huge", "SKILL.md"))
	require.NoError(tb, err)
	_, err = f.WriteString(bigFront)
	require.NoError(tb, err)
	for i := 0; i < bigBodyChars; i += bigLineChars {
		_, err = f.WriteString(bigLine(i))
		require.NoError(tb, err)
	}
	require.NoError(tb, f.Close())
	return dir
}

// TestBigSkillMdIsBounded: a 50 MB SKILL.md through ADK's runner. The
// catalogue, load_skill and load_skill_resource answer at most the cap
// (plus their fixed keys), load_skill's instructions keep the head and tail
// around truncate's marker, its warning names the cut characters, and
// load_skill_resource reads them by range.
func TestBigSkillMdIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 50 MB skill")
	}
	const maxChars = skilltoolset.DefaultMaxReadChars
	front := len(bigFront) // ASCII: bytes are characters
	from, to := truncate.Elided(bigBodyChars, maxChars)
	window := func(offset int) scripted.Step {
		return call("load_skill_resource", map[string]any{"skill_name": "huge", "resource_path": "SKILL.md", "offset": offset, "length": maxChars})
	}
	lastPage := front + int(to) - maxChars
	h := newHarness(t, harnessConfig{skills: writeBigSkill(t), noExecutor: true, steps: []scripted.Step{
		call("load_skill", map[string]any{"name": "huge"}),
		window(front + int(from)),
		window(lastPage),
		say("read"),
	}})
	events := h.say("read the huge skill")

	// Every function response the session holds is bounded.
	for _, ev := range events {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionResponse != nil {
				n := len(jsonOf(t, p.FunctionResponse.Response))
				assert.LessOrEqual(t, n, maxChars+2_000, "%s answered %d bytes", p.FunctionResponse.Name, n)
			}
		}
	}
	si := jsonOf(t, h.request(0).Config.SystemInstruction)
	assert.Less(t, len(si), skilltoolset.MaxCatalogueChars+10_000, "the instruction")

	sk := lastResponse(t, h.request(1), "load_skill")
	// The head ends a line, so the marker line follows it directly.
	want := bigBody(0, int(from)) + truncate.Marker(to-from, bigBodyChars, maxChars) + "\n" + bigBody(int(to), bigBodyChars)
	assert.True(t, sk["instructions"] == want, "head, marker and tail as truncate cuts them")
	assert.Contains(t, sk["warning"], fmt.Sprintf("characters %d to %d", from, to))
	assert.Contains(t, sk["warning"], fmt.Sprintf("resource_path \"SKILL.md\", offset %d, length up to %d", front+int(from), maxChars))
	assert.Equal(t, "huge", sk["frontmatter"].(map[string]any)["name"])

	first := lastResponse(t, h.request(2), "load_skill_resource")
	assert.True(t, first["content"] == bigBody(int(from), int(from)+maxChars), "the first cut characters")
	assert.EqualValues(t, front+bigBodyChars, first["total_chars"])
	assert.EqualValues(t, front+int(from)+maxChars, first["next_offset"])

	last := lastResponse(t, h.request(3), "load_skill_resource")
	assert.True(t, last["content"] == bigBody(int(to)-maxChars, int(to)), "the last cut characters")
	assert.EqualValues(t, front+int(to), last["next_offset"], "the tail load_skill kept comes next")
}

// BenchmarkLoadBigSkill loads the 50 MB SKILL.md through ADK's runner and
// reports the function response's size and the growth of the process's
// peak RSS over its RSS before the turn (-benchmem gives the allocations).
//
//	go test -run '^$' -bench LoadBigSkill -benchmem -benchtime 3x ./integration/
func BenchmarkLoadBigSkill(b *testing.B) {
	dir := writeBigSkill(b)
	var peak int64
	var size int
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		h := newHarness(b, harnessConfig{skills: dir, noExecutor: true})
		ctx := context.Background()
		created, err := h.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID})
		require.NoError(b, err)
		h.model.Append(scripted.Call("load_skill", map[string]any{"name": "huge"}), scripted.Say("done"))
		runtime.GC()
		before := rssKiB("VmRSS")
		resetPeakRSS()
		b.StartTimer()
		for ev, err := range h.runner.Run(ctx, userID, created.Session.ID(), genai.NewContentFromText("load", genai.RoleUser), agent.RunConfig{}) {
			require.NoError(b, err)
			if ev.Content != nil && len(ev.Content.Parts) > 0 && ev.Content.Parts[0].FunctionResponse != nil {
				size = len(jsonOf(b, ev.Content.Parts[0].FunctionResponse.Response))
			}
		}
		b.StopTimer()
		peak = max(peak, rssKiB("VmHWM")-before)
		b.StartTimer()
	}
	b.ReportMetric(float64(size), "response-bytes")
	b.ReportMetric(float64(peak)/1024, "peak-rss-growth-MiB")
}
