package runscript

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/adk/agent"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adkglue"
)

// Session is what a call of either script tool needs from the host it runs
// in, besides its context: the session's files and the turn it belongs to.
// ADK's tool context is one host (the tools New and NewInline return adapt
// it); an MCP session is another (package mcpskills). A Runner takes it.
type Session interface {
	// ArtifactStore returns the session's files, or nil without an artifact
	// store: output files are then listed, not saved, and input_files is
	// refused. Output files are saved through it, and inputs loaded.
	ArtifactStore() agent.Artifacts
	// ScriptMissed records one SCRIPT_NOT_FOUND answer and returns how many
	// the current turn has had, this one included: from the second on, the
	// answer is SCRIPT_NOT_FOUND_FATAL, which tells the model to stop
	// retrying. What a turn is, is the host's: ADK's invocation.
	ScriptMissed() int
}

// scriptMissesKey counts SCRIPT_NOT_FOUND answers in invocation-scoped
// state: ADK drops "temp:" keys when the invocation ends.
const scriptMissesKey = "temp:adkskills:script_misses:"

// toolSession is ADK's tool context as a Session: artifacts through
// adkglue.Artifacts, misses counted in the invocation's state.
type toolSession struct {
	tc adkglue.ToolContext
	mu *sync.Mutex // serializes the count's read and write across parallel calls
}

func (s toolSession) ArtifactStore() agent.Artifacts { return adkglue.Artifacts(s.tc) }

func (s toolSession) ScriptMissed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := scriptMissesKey + s.tc.InvocationID()
	n := 0
	if v, err := s.tc.State().Get(key); err == nil {
		n, _ = v.(int)
	}
	n++
	_ = s.tc.State().Set(key, n)
	return n
}

// Runner runs calls of both script tools for any host: the tools New and
// NewInline return are built on it, and so is the MCP server of package
// mcpskills. The arguments, the caps, the error codes and the response are
// the same wherever a call comes from.
type Runner struct {
	r *runner
}

// NewRunner checks cfg (see Config.Validate) and returns a Runner over it.
// cfg.Source may be nil: run_skill_script then answers SKILL_NOT_FOUND and
// run_skill_inline_script refuses skill_name.
func NewRunner(cfg Config) (*Runner, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, fmt.Errorf("runscript: %w", err)
	}
	return &Runner{r: r}, nil
}

// Interpreters is the interpreter table in use: the executor's.
func (r *Runner) Interpreters() codeexec.Interpreters { return r.r.table() }

// ScriptDeclaration declares run_skill_script: its description and the
// schema of its arguments.
func (r *Runner) ScriptDeclaration() *genai.FunctionDeclaration { return r.r.scriptDeclaration() }

// InlineDeclaration declares run_skill_inline_script.
func (r *Runner) InlineDeclaration() *genai.FunctionDeclaration { return r.r.inlineDeclaration() }

// RunScript is one call of run_skill_script with the arguments args (a
// JSON object decoded into a map[string]any, as a tool receives it).
func (r *Runner) RunScript(ctx context.Context, s Session, args any) *Response {
	return r.r.runScript(ctx, s, args)
}

// PrepareInline validates a call of run_skill_inline_script; the response
// is the refusal, when there is one. Nothing runs before the human approves
// the call's Prompt: check it with CheckInline, ask, then RunInline.
func (r *Runner) PrepareInline(args any) (*InlineCall, *Response) {
	return r.r.prepareInline(args)
}

// CheckInline refuses, before a human is asked, a call whose skill does not
// exist or whose input files cannot be passed in; nil when it can be asked.
func (r *Runner) CheckInline(ctx context.Context, s Session, ic *InlineCall) *Response {
	return r.r.checkInline(ctx, s, ic)
}

// RunInline runs a call a human approved. The host checks the approval was
// for this call (InlineCall.Digest); the skill and the input files are
// checked again as they are loaded.
func (r *Runner) RunInline(ctx context.Context, s Session, ic *InlineCall) *Response {
	return r.r.runInline(ctx, s, ic)
}

// Rejected is the response to a call whose script the human did not
// approve: CONFIRMATION_REJECTED.
func Rejected() *Response { return rejected() }
