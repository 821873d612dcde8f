package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
)

const (
	appName = "adkskills_it"
	userID  = "tester"
)

// skillsDir is the repository's test skills folder.
func skillsDir(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "skills")
}

// call and say are the scripted model's steps the tests use most.
var (
	call = scripted.Call
	say  = scripted.Say
)

// lastResponse is the function response the request ends with.
func lastResponse(t *testing.T, req *model.LLMRequest, name string) map[string]any {
	t.Helper()
	require.NotEmpty(t, req.Contents)
	last := req.Contents[len(req.Contents)-1]
	for _, p := range last.Parts {
		if p.FunctionResponse != nil && p.FunctionResponse.Name == name {
			return p.FunctionResponse.Response
		}
	}
	t.Fatalf("the request does not end with a %s response: %s", name, jsonOf(t, last))
	return nil
}

func jsonOf(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

type harnessConfig struct {
	skills      string // the skills folder; "": testdata/skills
	opts        []skilltoolset.Option
	noArtifacts bool
	artifacts   artifact.Service // nil: a fresh in-memory service
	sessionID   string           // "": a new session's
	noExecutor  bool
	wrap        func(tool.Toolset) tool.Toolset
	extraTools  []tool.Tool
	steps       []scripted.Step
}

type harness struct {
	t         testing.TB
	model     *scripted.Model
	runner    *runner.Runner
	sessions  session.Service
	artifacts artifact.Service
	sessionID string
}

func newHarness(t testing.TB, cfg harnessConfig) *harness {
	t.Helper()
	ctx := context.Background()
	opts := cfg.opts
	if !cfg.noExecutor {
		opts = append([]skilltoolset.Option{skilltoolset.WithCodeExecutor(local.New())}, opts...)
	}
	dir := cfg.skills
	if dir == "" {
		dir = skillsDir(t)
	}
	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS(dir)), opts...)
	require.NoError(t, err)
	var set tool.Toolset = ts
	if cfg.wrap != nil {
		set = cfg.wrap(ts)
	}
	m := scripted.New("scripted-model", cfg.steps...)
	a, err := llmagent.New(llmagent.Config{
		Name:        "skills_agent",
		Model:       m,
		Instruction: "You are a test agent.",
		Toolsets:    []tool.Toolset{set},
		Tools:       cfg.extraTools,
	})
	require.NoError(t, err)
	h := &harness{t: t, model: m, sessions: session.InMemoryService()}
	if !cfg.noArtifacts {
		h.artifacts = cfg.artifacts
		if h.artifacts == nil {
			h.artifacts = artifact.InMemoryService()
		}
	}
	h.runner, err = runner.New(runner.Config{AppName: appName, Agent: a, SessionService: h.sessions, ArtifactService: h.artifacts})
	require.NoError(t, err)
	created, err := h.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: cfg.sessionID})
	require.NoError(t, err)
	h.sessionID = created.Session.ID()
	return h
}

// send runs one turn with msg and returns its events.
func (h *harness) send(msg *genai.Content) []*session.Event {
	h.t.Helper()
	return h.sendWith(msg, agent.RunConfig{})
}

// sendWith runs one turn with msg under cfg and returns its events.
func (h *harness) sendWith(msg *genai.Content, cfg agent.RunConfig) []*session.Event {
	h.t.Helper()
	var events []*session.Event
	for ev, err := range h.runner.Run(context.Background(), userID, h.sessionID, msg, cfg) {
		require.NoError(h.t, err)
		events = append(events, ev)
	}
	return events
}

// say sends user text.
func (h *harness) say(text string) []*session.Event {
	return h.send(genai.NewContentFromText(text, genai.RoleUser))
}

// responseEvent returns the event carrying the function response of name.
func responseEvent(t testing.TB, events []*session.Event, name string) (*session.Event, map[string]any) {
	t.Helper()
	for _, ev := range events {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionResponse != nil && p.FunctionResponse.Name == name {
				return ev, p.FunctionResponse.Response
			}
		}
	}
	t.Fatalf("no %s response among %d events", name, len(events))
	return nil, nil
}

// request is the i-th request the model received.
func (h *harness) request(i int) *model.LLMRequest {
	h.t.Helper()
	reqs := h.model.Requests()
	require.Greater(h.t, len(reqs), i, "the model was called %d times", len(reqs))
	return reqs[i]
}

// load reads an artifact of the harness's session.
func (h *harness) load(name string, version int64) *genai.Part {
	h.t.Helper()
	resp, err := h.artifacts.Load(context.Background(), &artifact.LoadRequest{
		AppName: appName, UserID: userID, SessionID: h.sessionID, FileName: name, Version: version,
	})
	require.NoError(h.t, err, "artifact %q v%d", name, version)
	return resp.Part
}

// storedSession is the session as the session service persisted it.
func (h *harness) storedSession() session.Session {
	h.t.Helper()
	resp, err := h.sessions.Get(context.Background(), &session.GetRequest{AppName: appName, UserID: userID, SessionID: h.sessionID})
	require.NoError(h.t, err)
	return resp.Session
}
