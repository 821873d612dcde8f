package adkglue

import (
	"reflect"

	"google.golang.org/adk/agent"
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
