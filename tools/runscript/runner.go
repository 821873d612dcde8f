package runscript

import (
	"context"
	"fmt"

	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/tools/internal/scriptrun"
)

// Runner runs calls of run_skill_script for any host: the tool New returns
// is built on it, and so is the MCP server of package mcpskills
// (runinline.Runner is its inline peer). The arguments, the caps, the error
// codes and the response are the same wherever a call comes from.
type Runner struct {
	r runner
}

// NewRunner checks cfg (see Config.Validate) and returns a Runner over it.
// cfg.Source may be nil: run_skill_script then answers SKILL_NOT_FOUND.
func NewRunner(cfg Config) (*Runner, error) {
	r, err := scriptrun.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("runscript: %w", err)
	}
	return &Runner{r: runner{r}}, nil
}

// Interpreters is the interpreter table in use: the executor's.
func (r *Runner) Interpreters() codeexec.Interpreters { return r.r.Table() }

// ScriptDeclaration declares run_skill_script: its description and the
// schema of its arguments.
func (r *Runner) ScriptDeclaration() *genai.FunctionDeclaration { return r.r.scriptDeclaration() }

// RunScript is one call of run_skill_script with the arguments args (a
// JSON object decoded into a map[string]any, as a tool receives it).
func (r *Runner) RunScript(ctx context.Context, s Session, args any) *Response {
	return r.r.runScript(ctx, s, args)
}
