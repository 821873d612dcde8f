package adkglue_test

import (
	"context"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/adktest"
)

// TestArtifacts checks, on tool contexts built as ADK's runner builds them,
// that Artifacts is nil exactly when there is no artifact service (under
// ADK v2 the context's own Artifacts() is not nil then), and that saves
// through it are tracked in the call's artifact delta.
func TestArtifacts(t *testing.T) {
	none, _ := adktest.ToolContext(t, nil, "inv")
	assert.Nil(t, adkglue.Artifacts(none))

	tc, _ := adktest.ToolContext(t, artifact.InMemoryService(), "inv")
	arts := adkglue.Artifacts(tc)
	require.NotNil(t, arts)
	resp, err := arts.Save(tc, "a.txt", genai.NewPartFromText("a"))
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"a.txt": resp.Version}, tc.Actions().ArtifactDelta)
}

// wrapper is a store wrapper of the shape ADK v2 builds around nothing.
type wrapper struct {
	agent.Artifacts
}

// TestArtifactsOfWrappers checks the one shape taken for "no store": a
// pointer to a struct embedding a nil agent.Artifacts, whose every method
// would panic.
func TestArtifactsOfWrappers(t *testing.T) {
	store, _ := adktest.ToolContext(t, artifact.InMemoryService(), "inv")
	for _, c := range []struct {
		name string
		arts agent.Artifacts
		none bool
	}{
		{"nil", nil, true},
		{"wrapper of nothing", &wrapper{}, true},
		{"wrapper of a store", &wrapper{Artifacts: store.Artifacts()}, false},
		{"wrapper value", wrapper{Artifacts: store.Artifacts()}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := adkglue.Artifacts(fixed{ToolContext: store, arts: c.arts})
			if c.none {
				assert.Nil(t, got)
			} else {
				assert.Equal(t, c.arts, got)
			}
		})
	}
}

// fixed is a tool context whose Artifacts() is arts.
type fixed struct {
	adkglue.ToolContext
	arts agent.Artifacts
}

func (f fixed) Artifacts() agent.Artifacts { return f.arts }

// TestSessionArtifacts checks that the adapter keeps to its session: what
// one session saves, another of the same store neither lists nor loads.
func TestSessionArtifacts(t *testing.T) {
	ctx := context.Background()
	svc := artifact.InMemoryService()
	a := adkglue.SessionArtifacts(svc, "app", "user", "a")
	b := adkglue.SessionArtifacts(svc, "app", "user", "b")
	for v := int64(1); v <= 2; v++ {
		resp, err := a.Save(ctx, "f.txt", genai.NewPartFromText(fmt.Sprint("v", v)))
		require.NoError(t, err)
		assert.Equal(t, v, resp.Version)
	}
	list, err := a.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"f.txt"}, list.FileNames)
	got, err := a.Load(ctx, "f.txt")
	require.NoError(t, err)
	assert.Equal(t, "v2", got.Part.Text)
	got, err = a.LoadVersion(ctx, "f.txt", 1)
	require.NoError(t, err)
	assert.Equal(t, "v1", got.Part.Text)
	list, err = b.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list.FileNames)
	_, err = b.Load(ctx, "f.txt")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
