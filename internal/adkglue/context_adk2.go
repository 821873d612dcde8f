//go:build ignore

package adkglue

import "google.golang.org/adk/v2/agent"

// ToolContext is the context ADK hands a tool's Run and ProcessRequest:
// agent.Context in ADK v2 (this file), agent.ToolContext in ADK v1
// (context_adk1.go). Shared code names it through this alias.
type ToolContext = agent.Context

// OwnConfirmationsOnly reports whether ADK resumes a tool call only on the
// answer to a confirmation request this agent authored. ADK v2.2.0 does not:
// its request confirmation processor resumes the original call of any
// adk_request_confirmation call in the session, whoever authored it, so a
// tool that asks for confirmation must check the answer is to its own
// request.
const OwnConfirmationsOnly = false
