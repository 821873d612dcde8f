// Package runscript provides run_skill_script ([New]), which runs a script
// shipped in an Agent Skill's folder, and the contract it shares with
// run_skill_inline_script (package runinline): the [Config], the
// [Response] both answer with (the exit code, the capped output, and the
// files the run wrote, saved as session artifacts and listed by name), the
// error codes, the session's files and their artifact names.
//
// Most agents get both tools from skilltoolset.New, which also declares ADK's
// list_skills, load_skill and load_skill_resource and tells the model how to
// use them; use this package directly to compose your own toolset.
package runscript

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/tools/internal/scriptrun"
)

// Name is the tool's name as the model sees it.
const Name = "run_skill_script"

// New returns the run_skill_script tool.
func New(cfg Config) (tool.Tool, error) {
	if cfg.Source == nil {
		return nil, fmt.Errorf("runscript: a skill source is required")
	}
	r, err := scriptrun.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("runscript: %w", err)
	}
	return &runScript{r: runner{r}}, nil
}

type runScript struct {
	r runner
}

// runner is the kit's runner with run_skill_script's calls.
type runner struct{ *scriptrun.Runner }

func (t *runScript) Name() string { return Name }

func (t *runScript) Description() string { return scriptDescription }

// scriptDescription is run_skill_script's description.
const scriptDescription = "Runs a script from a skill's folder and returns its exit code, stdout and stderr (each capped), " +
	"and the files it wrote, saved as artifacts. The script runs with the skill's root folder as its working directory; " +
	"input_files places files of this session (uploads, earlier outputs) there first."

func (t *runScript) IsLongRunning() bool { return false }

func (t *runScript) Declaration() *genai.FunctionDeclaration { return t.r.scriptDeclaration() }

// scriptDeclaration declares run_skill_script, whatever its host.
func (r runner) scriptDeclaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        Name,
		Description: scriptDescription,
		Parameters: &genai.Schema{
			Type: genai.TypeObject,
			Properties: map[string]*genai.Schema{
				"skill_name": {Type: genai.TypeString, Description: "The name of the skill, as listed in <available_skills>."},
				"script_path": {Type: genai.TypeString, Description: "The script's path relative to the skill's root folder, " +
					"e.g. \"scripts/report.py\". " + capitalized(r.Table().Supported()) + "."},
				"args":        {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}, Description: "Command-line arguments, passed to the script as argv (no shell)."},
				"stdin":       {Type: genai.TypeString, Description: "Optional text for the script's standard input."},
				"input_files": scriptrun.InputFilesSchema(),
			},
			Required: []string{"skill_name", "script_path"},
		},
	}
}

func (t *runScript) ProcessRequest(_ adkglue.ToolContext, req *model.LLMRequest) error {
	return adkglue.PackTool(req, t)
}

// Run validates the arguments, finds the skill and runs the script.
func (t *runScript) Run(tc adkglue.ToolContext, args any) (map[string]any, error) {
	return t.call(tc, args).Map(), nil
}

// call is Run with the typed response.
func (t *runScript) call(tc adkglue.ToolContext, args any) *Response {
	return t.r.runScript(tc, t.r.ToolSession(tc), args)
}

// runScript is one call of run_skill_script, whatever its host: it validates
// the arguments, finds the skill and the script, stages the inputs and runs
// it.
func (r runner) runScript(ctx context.Context, s Session, args any) *Response {
	a, err := scriptrun.ParseArgs(args, "skill_name", "script_path", "args", "stdin", "input_files")
	if err != nil {
		return scriptrun.ErrorResponse(CodeInvalidArguments, err.Error())
	}
	name, err := a.String("skill_name", true, 1024)
	if err != nil {
		return scriptrun.ErrorResponse(CodeInvalidArguments, err.Error())
	}
	raw, err := a.String("script_path", true, 4096)
	if err != nil {
		return scriptrun.ErrorResponse(CodeInvalidArguments, err.Error())
	}
	script, err := scriptrun.CleanPath("script_path", raw)
	if err != nil {
		return scriptrun.ErrorResponse(CodeInvalidArguments, err.Error())
	}
	argv, err := a.Strings("args")
	if err != nil {
		return scriptrun.ErrorResponse(CodeInvalidArguments, err.Error())
	}
	stdin, err := a.String("stdin", false, MaxStdinBytes)
	if err != nil {
		return scriptrun.ErrorResponse(CodeInvalidArguments, err.Error())
	}
	inputs, err := r.InputEntries(a)
	if err != nil {
		return scriptrun.ErrorResponse(CodeInvalidArguments, err.Error())
	}
	if r.Executor == nil {
		return scriptrun.NoExecutor()
	}
	if r.Source == nil {
		return scriptrun.ErrorResponse(CodeSkillNotFound, fmt.Sprintf("skill %q not found: no skills are configured", name))
	}
	sk, resp := r.LoadSkill(ctx, name)
	if resp != nil {
		return resp
	}
	if !sk.Has(script) {
		return r.miss(ctx, s, sk, script, raw)
	}
	in, resp := interpreter(ctx, r.Source, r.Table(), name, script, raw)
	if resp != nil {
		return resp
	}
	ins, resp := r.ResolveInputs(ctx, s, inputs, sk.Paths)
	if resp != nil {
		return resp
	}
	files, resp := r.LoadInputs(ctx, s, ins)
	if resp != nil {
		return resp
	}
	req := &codeexec.Request{Skill: sk.FS, SkillName: sk.Name, Files: files, Script: script, Interpreter: in, Args: argv}
	if stdin != "" {
		req.Stdin = []byte(stdin)
	}
	return r.Run(ctx, s, scriptrun.Call{Tool: Name, Skill: name, Script: script, Inputs: len(files)}, req, ins)
}

// capitalized is s with its first letter in upper case.
func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
