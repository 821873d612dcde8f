// Package runscript provides run_skill_script, the tool that runs a script
// shipped in an Agent Skill's folder through a codeexec.Executor and returns
// its exit code, capped output and the files it wrote (saved as session
// artifacts, listed by name in the response).
//
// Most agents get it from skilltoolset.New, which also declares ADK's
// list_skills, load_skill and load_skill_resource and tells the model how to
// use them; use this package directly to compose your own toolset.
package runscript

import (
	"fmt"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/scriptrun"
)

// Name is the tool's name as the model sees it.
const Name = "run_skill_script"

// Config configures a script tool; run_skill_script and
// run_skill_inline_script share it. The executor owns the interpreter table
// (codeexec.TableOf): it decides which scripts run.
type Config = scriptrun.Config

// New returns the run_skill_script tool.
func New(cfg Config) (tool.Tool, error) {
	if cfg.Source == nil {
		return nil, fmt.Errorf("runscript: a skill source is required")
	}
	r, err := scriptrun.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("runscript: %w", err)
	}
	return &runScript{r: r}, nil
}

type runScript struct {
	r *scriptrun.Runner
}

func (t *runScript) Name() string { return Name }

func (t *runScript) Description() string {
	return "Runs a script from a skill's folder and returns its exit code, stdout and stderr (each capped), " +
		"and the files it wrote, saved as artifacts. The script runs with the skill's root folder as its working directory."
}

func (t *runScript) IsLongRunning() bool { return false }

func (t *runScript) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        Name,
		Description: t.Description(),
		Parameters: &genai.Schema{
			Type: genai.TypeObject,
			Properties: map[string]*genai.Schema{
				"skill_name": {Type: genai.TypeString, Description: "The name of the skill, as listed in <available_skills>."},
				"script_path": {Type: genai.TypeString, Description: "The script's path relative to the skill's root folder, " +
					"e.g. \"scripts/report.py\". Supported: " + extensionsText(t.r.Table()) + "."},
				"args":  {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}, Description: "Command-line arguments, passed to the script as argv (no shell)."},
				"stdin": {Type: genai.TypeString, Description: "Optional text for the script's standard input."},
			},
			Required: []string{"skill_name", "script_path"},
		},
	}
}

func (t *runScript) ProcessRequest(_ agent.ToolContext, req *model.LLMRequest) error {
	return adkglue.PackTool(req, t)
}

// Run validates the arguments, stages the skill and runs the script.
func (t *runScript) Run(tc agent.ToolContext, args any) (map[string]any, error) {
	a, err := scriptrun.ParseArgs(args, "skill_name", "script_path", "args", "stdin")
	if err != nil {
		return scriptrun.ErrorResponse(scriptrun.CodeInvalidArguments, err.Error()), nil
	}
	name, err := a.String("skill_name", true, 1024)
	if err != nil {
		return scriptrun.ErrorResponse(scriptrun.CodeInvalidArguments, err.Error()), nil
	}
	raw, err := a.String("script_path", true, 4096)
	if err != nil {
		return scriptrun.ErrorResponse(scriptrun.CodeInvalidArguments, err.Error()), nil
	}
	script, err := scriptrun.CleanPath("script_path", raw)
	if err != nil {
		return scriptrun.ErrorResponse(scriptrun.CodeInvalidArguments, err.Error()), nil
	}
	argv, err := a.Strings("args")
	if err != nil {
		return scriptrun.ErrorResponse(scriptrun.CodeInvalidArguments, err.Error()), nil
	}
	stdin, err := a.String("stdin", false, scriptrun.MaxStdinBytes)
	if err != nil {
		return scriptrun.ErrorResponse(scriptrun.CodeInvalidArguments, err.Error()), nil
	}
	if t.r.Executor == nil {
		return scriptrun.NoExecutor(), nil
	}
	sk, resp := t.r.LoadSkill(tc, name)
	if resp != nil {
		return resp, nil
	}
	if !sk.Has(script) {
		return t.r.ScriptMiss(tc, name, raw, sk.Runnable(t.r.Table())), nil
	}
	in, err := t.r.Table().ForScript(script)
	if err != nil {
		return scriptrun.ErrorResponse(scriptrun.CodeUnsupportedScriptType, fmt.Sprintf(
			"%q cannot be run: supported extensions are %s", raw, extensionsText(t.r.Table()))), nil
	}
	req := &codeexec.Request{Files: sk.Files, Script: script, Interpreter: &in, Args: argv}
	if stdin != "" {
		req.Stdin = []byte(stdin)
	}
	return t.r.Run(tc, Name, req), nil
}

func extensionsText(t codeexec.Interpreters) string {
	return strings.Join(t.Extensions(), ", ")
}
