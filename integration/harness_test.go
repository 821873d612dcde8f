package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"sync"
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

	"github.com/adkskills/adkskills/codeexec"
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

// step is one scripted model turn: it sees the request and answers.
type step func(t testing.TB, req *model.LLMRequest) *genai.Content

// scriptedModel answers with its steps in order and records every request;
// a call past the last step is an error that surfaces from runner.Run.
type scriptedModel struct {
	t        testing.TB
	mu       sync.Mutex
	steps    []step
	requests []*model.LLMRequest
}

func (m *scriptedModel) Name() string { return "scripted-model" }

func (m *scriptedModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		m.mu.Lock()
		i := len(m.requests)
		m.requests = append(m.requests, req)
		m.mu.Unlock()
		if i >= len(m.steps) {
			yield(nil, fmt.Errorf("scripted model: unexpected call %d (only %d steps)", i+1, len(m.steps)))
			return
		}
		yield(&model.LLMResponse{Content: m.steps[i](m.t, req)}, nil)
	}
}

func (m *scriptedModel) request(i int) *model.LLMRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Greater(m.t, len(m.requests), i, "the model was called %d times", len(m.requests))
	return m.requests[i]
}

// call is a step that calls one tool.
func call(name string, args map[string]any) step {
	return func(testing.TB, *model.LLMRequest) *genai.Content {
		return genai.NewContentFromFunctionCall(name, args, genai.RoleModel)
	}
}

// say is a step that ends the turn with text.
func say(text string) step {
	return func(testing.TB, *model.LLMRequest) *genai.Content {
		return genai.NewContentFromText(text, genai.RoleModel)
	}
}

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
	opts        []skilltoolset.Option
	noArtifacts bool
	noExecutor  bool
	wrap        func(tool.Toolset) tool.Toolset
	extraTools  []tool.Tool
	steps       []step
}

type harness struct {
	t         testing.TB
	model     *scriptedModel
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
		opts = append([]skilltoolset.Option{skilltoolset.WithCodeExecutor(codeexec.NewLocal())}, opts...)
	}
	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS(skillsDir(t))), opts...)
	require.NoError(t, err)
	var set tool.Toolset = ts
	if cfg.wrap != nil {
		set = cfg.wrap(ts)
	}
	m := &scriptedModel{t: t, steps: cfg.steps}
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
		h.artifacts = artifact.InMemoryService()
	}
	h.runner, err = runner.New(runner.Config{AppName: appName, Agent: a, SessionService: h.sessions, ArtifactService: h.artifacts})
	require.NoError(t, err)
	created, err := h.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID})
	require.NoError(t, err)
	h.sessionID = created.Session.ID()
	return h
}

// send runs one turn with msg and returns its events.
func (h *harness) send(msg *genai.Content) []*session.Event {
	h.t.Helper()
	var events []*session.Event
	for ev, err := range h.runner.Run(context.Background(), userID, h.sessionID, msg, agent.RunConfig{}) {
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
