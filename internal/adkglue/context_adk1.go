package adkglue

import "google.golang.org/adk/agent"

// ToolContext is the context ADK hands a tool's Run and ProcessRequest:
// agent.ToolContext in ADK v1 (this file), agent.Context in ADK v2
// (context_adk2.go). Shared code names it through this alias.
type ToolContext = agent.ToolContext

// OwnConfirmationsOnly reports whether ADK resumes a tool call only on the
// answer to a confirmation request this agent authored. ADK v1.7.0 does: its
// request confirmation processor skips requests other authors put in the
// session (an A2A peer's converted response) and refuses a call ID two
// requests disagree on.
const OwnConfirmationsOnly = true
