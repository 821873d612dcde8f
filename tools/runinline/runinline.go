// Package runinline provides run_skill_inline_script, the tool that runs code
// the model wrote (python, bash, node, or any language of the interpreter
// table), optionally inside a skill's staged folder, after a human approves
// it through ADK's tool confirmation. It shares its configuration, its
// response and the run itself with run_skill_script (package runscript).
package runinline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/truncate"
	"github.com/adkskills/adkskills/tools/internal/scriptrun"
	"github.com/adkskills/adkskills/tools/runscript"
)

// Name is the tool's name as the model sees it.
const Name = "run_skill_inline_script"

// InlineDir is the folder, under the skill root, where an inline script is
// staged. Staged files are inputs, so it never comes back as an output file.
const InlineDir = ".adkskills-inline"

// New returns the run_skill_inline_script tool, which runs code the model
// wrote (any language of the executor's interpreter table), optionally
// inside a skill's staged folder. Every call needs a human's approval
// through ADK's tool confirmation: the hint shows the language, the whole
// script and the arguments, and only the approved script runs. Under ADK
// v2, which resumes a confirmation request whoever put it in the session,
// the answer to a request this tool did not make runs nothing and asks
// again. cfg.Source may be nil; then skill_name is refused.
func New(cfg runscript.Config) (tool.Tool, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	if len(r.Table()) == 0 {
		return nil, fmt.Errorf("runinline: the interpreter table is empty")
	}
	return &runInline{r: r}, nil
}

// newRunner checks cfg and returns a runner over it.
func newRunner(cfg runscript.Config) (runner, error) {
	r, err := scriptrun.New(cfg)
	if err != nil {
		return runner{}, fmt.Errorf("runinline: %w", err)
	}
	return runner{r}, nil
}

// runner is the kit's runner with run_skill_inline_script's calls.
type runner struct{ *scriptrun.Runner }

type runInline struct {
	r runner
}

// approvalKey, followed by the function call ID, is the session state key
// under which a call that asked for confirmation records the digest of what
// the human was shown: the answer to that request runs only that call, once.
const approvalKey = "adkskills:inline_approval:"

// inlineArgs are one validated call's arguments: what the human approves
// and what runs.
type inlineArgs struct {
	Language   string   `json:"language"`
	Script     string   `json:"script"`
	Args       []string `json:"args"`
	Stdin      string   `json:"stdin,omitempty"`
	SkillName  string   `json:"skill_name,omitempty"`
	InputFiles []string `json:"input_files,omitempty"`
}

// digest identifies the call's content; the confirmation payload carries it
// so an approval applies to exactly this script.
func (c inlineArgs) digest() string {
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (t *runInline) Name() string { return Name }

func (t *runInline) Description() string { return inlineDescription }

// inlineDescription is run_skill_inline_script's description.
const inlineDescription = "Runs a short script you write, after a human approves it. Use it only when no skill script does the job. " +
	"Output files the script writes in its working directory come back as artifacts."

func (t *runInline) IsLongRunning() bool { return false }

func (t *runInline) Declaration() *genai.FunctionDeclaration { return t.r.inlineDeclaration() }

// inlineDeclaration declares run_skill_inline_script, whatever its host.
func (r runner) inlineDeclaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        Name,
		Description: inlineDescription,
		Parameters: &genai.Schema{
			Type: genai.TypeObject,
			Properties: map[string]*genai.Schema{
				"language":    {Type: genai.TypeString, Enum: r.Table().Languages(), Description: "The script's language."},
				"script":      {Type: genai.TypeString, Description: "The complete source code to run."},
				"args":        {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}, Description: "Command-line arguments (argv, no shell)."},
				"stdin":       {Type: genai.TypeString, Description: "Optional text for standard input."},
				"skill_name":  {Type: genai.TypeString, Description: "Optional: run inside this skill's folder, with its files available relative to the working directory."},
				"input_files": scriptrun.InputFilesSchema(),
			},
			Required: []string{"language", "script"},
		},
	}
}

func (t *runInline) ProcessRequest(_ adkglue.ToolContext, req *model.LLMRequest) error {
	return adkglue.PackTool(req, t)
}

func (r runner) parseInline(args any) (inlineArgs, *codeexec.Interpreter, error) {
	a, err := scriptrun.ParseArgs(args, "language", "script", "args", "stdin", "skill_name", "input_files")
	if err != nil {
		return inlineArgs{}, nil, err
	}
	var c inlineArgs
	if c.Language, err = a.String("language", true, 256); err != nil {
		return inlineArgs{}, nil, err
	}
	if c.Script, err = a.String("script", true, runscript.MaxScriptBytes); err != nil {
		return inlineArgs{}, nil, err
	}
	if c.Args, err = a.Strings("args"); err != nil {
		return inlineArgs{}, nil, err
	}
	if c.Stdin, err = a.String("stdin", false, runscript.MaxStdinBytes); err != nil {
		return inlineArgs{}, nil, err
	}
	if c.SkillName, err = a.String("skill_name", false, 1024); err != nil {
		return inlineArgs{}, nil, err
	}
	if c.InputFiles, err = r.InputEntries(a); err != nil {
		return inlineArgs{}, nil, err
	}
	in, err := r.Table().ForLanguage(c.Language)
	if err != nil {
		return inlineArgs{}, nil, fmt.Errorf("argument %q must be one of %s, got %q", "language", strings.Join(r.Table().Languages(), ", "), c.Language)
	}
	return c, &in, nil
}

// Run validates the call, asks for confirmation, and runs the approved
// script.
func (t *runInline) Run(tc adkglue.ToolContext, args any) (map[string]any, error) {
	resp, err := t.call(tc, args)
	if err != nil {
		return nil, err
	}
	return resp.Map(), nil
}

// call is Run with the typed response; its error is ADK's confirmation
// request.
func (t *runInline) call(tc adkglue.ToolContext, args any) (*runscript.Response, error) {
	s := t.r.ToolSession(tc)
	ic, resp := t.r.prepareInline(args)
	if resp != nil {
		return resp, nil
	}
	key := approvalKey + tc.FunctionCallID()
	asked, err := tc.State().Get(key) // the digest; "" once answered
	requested := err == nil && asked != ""
	conf := tc.ToolConfirmation()
	switch {
	case conf == nil:
	case err == nil && asked == "":
		conf = nil // this call's request was answered already: ask again
	case !requested && !adkglue.OwnConfirmationsOnly:
		// An answer to a confirmation request this tool never made: ADK v2
		// resumes a request whoever put it in the session, so this one may
		// have shown the human anything. Ask again, showing what runs.
		conf = nil
	}
	if conf == nil {
		if resp := t.r.checkInline(tc, s, ic); resp != nil {
			return resp, nil
		}
		c := ic.c
		payload := map[string]any{
			"language": c.Language, "script": c.Script, "args": c.Args,
			"stdin": c.Stdin, "skill_name": c.SkillName, "input_files": c.InputFiles, "sha256": ic.digest,
		}
		if err := tc.RequestConfirmation(ic.Prompt(), payload); err != nil {
			return nil, err
		}
		if err := tc.State().Set(key, ic.digest); err != nil {
			return nil, fmt.Errorf("tool %q: recording the confirmation request: %w", Name, err)
		}
		return nil, fmt.Errorf("tool %q %w", Name, tool.ErrConfirmationRequired)
	}
	if requested {
		_ = tc.State().Set(key, "") // one request, one answer
	}
	if !conf.Confirmed {
		return rejected(), nil
	}
	if d, ok := payloadDigest(conf.Payload); requested && asked != ic.digest || ok && d != ic.digest {
		return scriptrun.ErrorResponse(runscript.CodeConfirmationRejected, "the approved script differs from this call; nothing ran"), nil
	}
	return t.r.runInline(tc, s, ic), nil
}

// rejected is the answer to a call whose script the human did not approve.
func rejected() *runscript.Response {
	return scriptrun.ErrorResponse(runscript.CodeConfirmationRejected, "the user rejected running this script; do not retry it unchanged")
}

// Call is one validated call of run_skill_inline_script: what a human
// approves and, once approved, what runs. Runner.Prepare makes it.
type Call struct {
	c      inlineArgs
	in     *codeexec.Interpreter
	script string // where the script is staged
	digest string
}

// Prompt is what the human reads before approving: the language, where it
// runs, the whole script, the arguments, stdin and the input files, with
// characters that would not display as themselves escaped, so the text
// approved is the text that runs.
func (ic *Call) Prompt() string { return hint(ic.c) }

// Digest identifies the call's content (language, script, args, stdin,
// skill, input files): an approval applies to the call of this digest only.
func (ic *Call) Digest() string { return ic.digest }

// prepareInline validates a call's arguments; the response is the refusal,
// when there is one.
func (r runner) prepareInline(args any) (*Call, *runscript.Response) {
	c, in, err := r.parseInline(args)
	if err != nil {
		return nil, scriptrun.ErrorResponse(runscript.CodeInvalidArguments, err.Error())
	}
	if r.Executor == nil {
		return nil, scriptrun.NoExecutor()
	}
	if c.SkillName != "" && r.Source == nil {
		return nil, scriptrun.ErrorResponse(runscript.CodeSkillNotFound, "no skills are configured, so skill_name cannot be used")
	}
	// The digest covers up to MaxScriptBytes and MaxStdinBytes: once.
	return &Call{c: c, in: in, script: InlineDir + "/script" + firstExt(*in), digest: c.digest()}, nil
}

// checkInline refuses, before a human is asked to approve, an unknown skill
// and input files that cannot be passed in. An approved call meets the same
// checks when runInline loads them.
func (r runner) checkInline(ctx context.Context, s runscript.Session, ic *Call) *runscript.Response {
	c := ic.c
	if c.SkillName != "" {
		if _, err := r.Source.LoadFrontmatter(ctx, c.SkillName); err != nil {
			_, resp := r.LoadSkill(ctx, c.SkillName)
			return resp
		}
	}
	if len(c.InputFiles) > 0 {
		if _, resp := r.inlineInputs(ctx, s, c, ic.script, false); resp != nil {
			return resp
		}
	}
	return nil
}

// runInline runs an approved call: its skill folder and input files are
// loaded, and checked, now.
func (r runner) runInline(ctx context.Context, s runscript.Session, ic *Call) *runscript.Response {
	c := ic.c
	req := &codeexec.Request{Script: ic.script, Interpreter: ic.in, Args: c.Args}
	sk, resp := r.inlineInputs(ctx, s, c, ic.script, true)
	if resp != nil {
		return resp
	}
	if sk.skill != nil {
		req.Skill, req.SkillName = sk.skill.FS, sk.skill.Name
	}
	req.Files = append([]codeexec.File{{Path: ic.script, Data: []byte(c.Script)}}, sk.inputs...)
	if c.Stdin != "" {
		req.Stdin = []byte(c.Stdin)
	}
	return r.Run(ctx, s, scriptrun.Call{Tool: Name, Skill: c.SkillName, Language: c.Language, Inputs: len(sk.inputs)}, req, sk.staged)
}

// inlineRun is what an inline call runs in besides its script: the skill
// folder, if any, and the input files, loaded once approved.
type inlineRun struct {
	skill  *scriptrun.Skill
	inputs []codeexec.File
	staged []scriptrun.InputFile // what inputs were loaded from
}

// inlineInputs loads the call's skill and checks its input files against
// the session, the skill's files and the script; with load set (after
// approval), it also loads them.
func (r runner) inlineInputs(ctx context.Context, s runscript.Session, c inlineArgs, script string, load bool) (inlineRun, *runscript.Response) {
	var run inlineRun
	have := []string{script}
	if c.SkillName != "" {
		sk, resp := r.LoadSkill(ctx, c.SkillName)
		if resp != nil {
			return run, resp
		}
		run.skill = sk
		have = append(have, sk.Paths...)
	}
	ins, resp := r.ResolveInputs(ctx, s, c.InputFiles, have)
	if resp != nil || !load {
		return run, resp
	}
	run.inputs, resp = r.LoadInputs(ctx, s, ins)
	run.staged = ins
	return run, resp
}

// hintStdinChars caps the stdin shown in the hint; the payload carries it
// whole.
const hintStdinChars = 2_000

// hint is what the human reads before approving: the language, where it
// runs, the whole script, the arguments and stdin, with characters that
// would not display as themselves (terminal escapes, bidirectional
// overrides) escaped, so the text approved is the text that runs.
func hint(c inlineArgs) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Approve running this %s script", c.Language)
	if c.SkillName != "" {
		fmt.Fprintf(&b, " in skill %q", c.SkillName)
	}
	fmt.Fprintf(&b, "?\n\n--- script ---\n%s\n--- end of script ---\nargs: %q\n", scriptrun.EscapeHidden(c.Script), c.Args)
	if c.Stdin != "" {
		fmt.Fprintf(&b, "--- stdin (%d bytes) ---\n%s\n--- end of stdin ---\n", len(c.Stdin), truncate.String(scriptrun.EscapeHidden(c.Stdin), hintStdinChars))
	}
	if len(c.InputFiles) > 0 {
		fmt.Fprintf(&b, "input files (from this session, latest versions): %s\n", scriptrun.EscapeHidden(fmt.Sprintf("%q", c.InputFiles)))
	}
	return b.String()
}

// payloadDigest reads the digest back from a confirmation payload, whether
// it is the Go value (in-memory session) or its JSON round trip.
func payloadDigest(p any) (string, bool) {
	switch m := p.(type) {
	case map[string]any:
		d, ok := m["sha256"].(string)
		return d, ok
	case nil:
		return "", false
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return "", false
		}
		var mm map[string]any
		if json.Unmarshal(b, &mm) != nil {
			return "", false
		}
		d, ok := mm["sha256"].(string)
		return d, ok
	}
}

func firstExt(in codeexec.Interpreter) string {
	if len(in.Extensions) > 0 {
		return in.Extensions[0]
	}
	return ""
}
