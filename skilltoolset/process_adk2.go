//go:build ignore

package skilltoolset

import (
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
)

// ProcessRequest adds the toolset's system instruction and the catalogue of
// skills to the request, once. ADK calls it only when the toolset sits
// directly in llmagent.Config.Toolsets; each of the toolset's tools does the
// same from its own ProcessRequest, so the instruction still reaches the
// model when the toolset is wrapped (tool.FilterToolset,
// tool.WithConfirmation), and never twice.
func (ts *SkillToolset) ProcessRequest(ctx agent.Context, req *model.LLMRequest) error {
	return ts.processRequest(ctx, req)
}
