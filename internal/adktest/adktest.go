// Package adktest builds real ADK tool contexts for unit tests: a minimal
// agent.InvocationContext over a real in-memory session, so
// agent.NewToolContext tracks artifact saves and state exactly as the runner
// does.
package adktest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/internal/adkglue"
)

// App and User scope the sessions and artifacts ToolContext creates.
const (
	App  = "app"
	User = "user"
)

// invocation is a minimal agent.InvocationContext over a real in-memory
// session, for building real ToolContexts with agent.NewToolContext.
type invocation struct {
	context.Context
	sess session.Session
	arts agent.Artifacts
	id   string
}

func (c *invocation) Agent() agent.Agent          { return nil }
func (c *invocation) Artifacts() agent.Artifacts  { return c.arts }
func (c *invocation) Memory() agent.Memory        { return nil }
func (c *invocation) Session() session.Session    { return c.sess }
func (c *invocation) InvocationID() string        { return c.id }
func (c *invocation) Branch() string              { return "" }
func (c *invocation) UserContent() *genai.Content { return nil }
func (c *invocation) RunConfig() *agent.RunConfig { return &agent.RunConfig{} }
func (c *invocation) EndInvocation()              {}
func (c *invocation) Ended() bool                 { return false }

// WithContext implements agent.InvocationContext.
func (c *invocation) WithContext(ctx context.Context) agent.InvocationContext {
	cp := *c
	cp.Context = ctx
	return &cp
}

// Session is one real in-memory session, with its artifacts, whose tool
// contexts share its state: a tool call that asks for confirmation and the
// call that resumes it after the human's answer, in a later invocation.
type Session struct {
	sess session.Session
	arts agent.Artifacts
}

// NewSession creates a session over svc (nil: no artifact service).
func NewSession(t testing.TB, svc artifact.Service) *Session {
	t.Helper()
	created, err := session.InMemoryService().Create(context.Background(), &session.CreateRequest{AppName: App, UserID: User})
	require.NoError(t, err)
	s := &Session{sess: created.Session}
	if svc != nil {
		s.arts = adkglue.SessionArtifacts(svc, App, User, created.Session.ID())
	}
	return s
}

// ID is the session's ID.
func (s *Session) ID() string { return s.sess.ID() }

// ToolContext returns a real ToolContext for the function call "call-1" in
// the invocation invocationID of the session. A non-nil confirmation is the
// one the call resumes with.
func (s *Session) ToolContext(invocationID string, confirmation *toolconfirmation.ToolConfirmation) adkglue.ToolContext {
	inv := &invocation{Context: context.Background(), sess: s.sess, arts: s.arts, id: invocationID}
	return agent.NewToolContext(inv, "call-1", nil, confirmation)
}

// ToolContext returns a real ToolContext over svc (nil: no artifact
// service) in a fresh session, and the session's ID. A confirmation, when
// given, is the one the call resumes with.
func ToolContext(t testing.TB, svc artifact.Service, invocationID string, confirmation ...*toolconfirmation.ToolConfirmation) (adkglue.ToolContext, string) {
	t.Helper()
	s := NewSession(t, svc)
	var c *toolconfirmation.ToolConfirmation
	if len(confirmation) > 0 {
		c = confirmation[0]
	}
	return s.ToolContext(invocationID, c), s.ID()
}
