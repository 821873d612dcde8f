// Package scripted is kept only for codeexec/agentsandbox's tests, which the
// restructure moves: the scripted model is the public package
// github.com/adkskills/adkskills/model/scripted.
//
// Deprecated: import github.com/adkskills/adkskills/model/scripted.
package scripted

import "github.com/adkskills/adkskills/model/scripted"

// Aliases of the public package's names.
type (
	Model = scripted.Model
	Step  = scripted.Step
)

// Aliases of the public package's functions.
var (
	New  = scripted.New
	Call = scripted.Call
	Say  = scripted.Say
)
