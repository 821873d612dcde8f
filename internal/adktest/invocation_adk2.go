//go:build ignore

package adktest

import (
	"google.golang.org/adk/v2/agent"
)

// The methods ADK v2 added to agent.InvocationContext.

// IsolationScope implements agent.InvocationContext: unscoped.
func (c *invocation) IsolationScope() string { return "" }

// ResumedInput implements agent.InvocationContext: a tool call never resumes
// a workflow interrupt here.
func (c *invocation) ResumedInput(string) (any, bool) { return nil, false }

// WithICDelta implements agent.InvocationContext. Only a new Go context is
// supported: the fake has no agent, branch, scope or user content to change,
// and a test that needs them should fail loudly rather than run on wrong
// values.
func (c *invocation) WithICDelta(d *agent.InvocationContextDelta) agent.InvocationContext {
	if d == nil {
		return c
	}
	if d.UserContent != nil || d.Agent != nil || d.Branch != nil || d.IsolationScope != nil {
		panic("adktest: WithICDelta supports only a new Context")
	}
	cp := *c
	if d.Context != nil {
		cp.Context = *d.Context
	}
	return &cp
}
