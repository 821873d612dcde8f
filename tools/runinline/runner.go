package runinline

import (
	"context"

	"google.golang.org/genai"

	"github.com/adkskills/adkskills/tools/runscript"
)

// Runner runs calls of run_skill_inline_script for a host that asks for
// approval its own way, as the MCP server of package mcpskills does with an
// elicitation: Prepare the call, Check it, ask a human to approve its
// Prompt, then Run it. The arguments, the caps, the error codes and the
// response are those of the tool New returns.
type Runner struct {
	r runner
}

// NewRunner checks cfg (see runscript.Config.Validate) and returns a Runner
// over it. cfg.Source may be nil; then skill_name is refused.
func NewRunner(cfg runscript.Config) (*Runner, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	return &Runner{r: r}, nil
}

// Declaration declares run_skill_inline_script: its description and the
// schema of its arguments.
func (r *Runner) Declaration() *genai.FunctionDeclaration { return r.r.inlineDeclaration() }

// Prepare validates a call's arguments; the response is the refusal, when
// there is one. Nothing runs before a human approves the call's Prompt:
// Check it, ask, then Run.
func (r *Runner) Prepare(args any) (*Call, *runscript.Response) {
	return r.r.prepareInline(args)
}

// Check refuses, before a human is asked, a call whose skill does not exist
// or whose input files cannot be passed in; nil when it can be asked.
func (r *Runner) Check(ctx context.Context, s runscript.Session, c *Call) *runscript.Response {
	return r.r.checkInline(ctx, s, c)
}

// Run runs a call a human approved. The host checks the approval was for
// this call (Call.Digest); the skill and the input files are checked again
// as they are loaded.
func (r *Runner) Run(ctx context.Context, s runscript.Session, c *Call) *runscript.Response {
	return r.r.runInline(ctx, s, c)
}

// Rejected is the response to a call whose script the human did not
// approve: CONFIRMATION_REJECTED.
func Rejected() *runscript.Response { return rejected() }
