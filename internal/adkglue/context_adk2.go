//go:build ignore

package adkglue

import (
	"reflect"

	"google.golang.org/adk/v2/agent"
)

// ToolContext is the context ADK hands a tool's Run and ProcessRequest:
// agent.Context in ADK v2 (this file), agent.ToolContext in ADK v1
// (context_adk1.go). Shared code names it through this alias.
type ToolContext = agent.Context

// Artifacts returns the session's artifacts as the tool sees them (saves
// are recorded in the call's artifact delta), or nil when the runner has no
// artifact service.
//
// In ADK v2, tc.Artifacts() is never nil: agent.NewToolContext wraps the
// invocation's artifacts in a save-tracking struct that embeds them, nil or
// not, and every method of a wrapper around nil panics (a nil pointer inside
// its Save). Such a wrapper is recognized by its nil embedded Artifacts.
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

// OwnConfirmationsOnly reports whether ADK resumes a tool call only on the
// answer to a confirmation request this agent authored. ADK v2.2.0 does not:
// its request confirmation processor resumes the original call of any
// adk_request_confirmation call in the session, whoever authored it, so a
// tool that asks for confirmation must check the answer is to its own
// request.
const OwnConfirmationsOnly = false
