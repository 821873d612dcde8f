package adkglue

import (
	"context"
	"reflect"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// Artifacts returns the session's artifacts as the tool sees them (saves
// are recorded in the call's artifact delta), or nil when the runner has no
// artifact service. Shared code asks for a tool's artifacts only through it.
//
// ADK v1 gives a nil tc.Artifacts() then. ADK v2 never does:
// agent.NewToolContext wraps the invocation's artifacts in a save-tracking
// struct that embeds them, nil or not, and every method of a wrapper around
// nil panics (a nil pointer inside its Save). Such a wrapper is recognized by
// its nil embedded Artifacts.
func Artifacts(tc ToolContext) agent.Artifacts {
	a := tc.Artifacts()
	if a == nil || wrapsNothing(a) {
		return nil
	}
	return a
}

// wrapsNothing reports whether a is a pointer to a struct whose embedded
// agent.Artifacts is nil: a wrapper with no store behind it.
func wrapsNothing(a agent.Artifacts) bool {
	v := reflect.ValueOf(a)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f, ok := v.Elem().Type().FieldByName("Artifacts")
	if !ok || !f.Anonymous || f.Type != reflect.TypeFor[agent.Artifacts]() {
		return false
	}
	return v.Elem().FieldByIndex(f.Index).IsNil()
}

// SessionArtifacts adapts svc to the files of one session, as ADK's runner
// does for the tools of its invocations: every request carries app, user
// and sessionID. Saves through it are not tracked in any artifact delta.
func SessionArtifacts(svc artifact.Service, app, user, sessionID string) agent.Artifacts {
	return &sessionArtifacts{svc: svc, app: app, user: user, sessionID: sessionID}
}

// sessionArtifacts is one session of an artifact.Service.
type sessionArtifacts struct {
	svc                  artifact.Service
	app, user, sessionID string
}

// Save implements agent.Artifacts.
func (a *sessionArtifacts) Save(ctx context.Context, name string, part *genai.Part) (*artifact.SaveResponse, error) {
	return a.svc.Save(ctx, &artifact.SaveRequest{AppName: a.app, UserID: a.user, SessionID: a.sessionID, FileName: name, Part: part})
}

// List implements agent.Artifacts.
func (a *sessionArtifacts) List(ctx context.Context) (*artifact.ListResponse, error) {
	return a.svc.List(ctx, &artifact.ListRequest{AppName: a.app, UserID: a.user, SessionID: a.sessionID})
}

// Load implements agent.Artifacts.
func (a *sessionArtifacts) Load(ctx context.Context, name string) (*artifact.LoadResponse, error) {
	return a.svc.Load(ctx, &artifact.LoadRequest{AppName: a.app, UserID: a.user, SessionID: a.sessionID, FileName: name})
}

// LoadVersion implements agent.Artifacts.
func (a *sessionArtifacts) LoadVersion(ctx context.Context, name string, version int) (*artifact.LoadResponse, error) {
	return a.svc.Load(ctx, &artifact.LoadRequest{AppName: a.app, UserID: a.user, SessionID: a.sessionID, FileName: name, Version: int64(version)})
}
