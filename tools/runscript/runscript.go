// Package runscript provides the two script tools: run_skill_script
// ([New]), which runs a script shipped in an Agent Skill's folder, and
// run_skill_inline_script ([NewInline]), which runs code the model wrote
// after a human approves it. Both run through a codeexec.Executor and
// answer with one [Response]: the exit code, the capped output, and the
// files the run wrote, saved as session artifacts and listed by name.
//
// Most agents get both from skilltoolset.New, which also declares ADK's
// list_skills, load_skill and load_skill_resource and tells the model how to
// use them; use this package directly to compose your own toolset.
package runscript

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/skilltoolset/skill"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adkglue"
)

// Name is the tool's name as the model sees it.
const Name = "run_skill_script"

// Config configures a script tool; run_skill_script and
// run_skill_inline_script share it.
type Config struct {
	// Source finds skills and their files. Required for run_skill_script;
	// optional for run_skill_inline_script (without it, skill_name is
	// refused).
	Source skill.Source
	// Executor runs the scripts and owns the interpreter table
	// (codeexec.InterpretersOf): it decides which scripts run and which inline
	// languages exist. Nil: every call answers NO_CODE_EXECUTOR. An
	// executor with a configuration error (codeexec.ConfigError) is
	// refused by New.
	Executor codeexec.Executor
	// Limits bound every run: the time limit, the cap on stdout and stderr,
	// the output files returned, the bytes staged. Zero fields mean the
	// codeexec defaults. The model cannot change them.
	Limits codeexec.Limits
	// InputLimits bound the files input_files passes into one run: how
	// many, how large each, how large in all. Zero fields mean the output
	// files' defaults (codeexec.DefaultMaxOutputFiles,
	// codeexec.DefaultMaxOutputFileBytes, codeexec.DefaultMaxOutputTotalBytes:
	// 100 files, 32 MiB each, 128 MiB in all); negative is invalid. A call
	// over a limit answers INVALID_ARGUMENTS and runs nothing. The inputs
	// also count against Limits.MaxSkillBytes, with the skill folder.
	InputLimits codeexec.FileLimits
	// Logger receives what the model must not see (host paths, executor
	// failures, save errors). Nil: slog.Default().
	Logger *slog.Logger
}

// Validate reports the first invalid value: a negative limit, or an
// executor with a configuration error. New and NewInline call it.
func (c *Config) Validate() error {
	if err := c.Limits.Validate(); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	if err := c.InputLimits.Validate(); err != nil {
		return fmt.Errorf("input limits: %w", err)
	}
	if c.Executor != nil {
		if err := codeexec.ConfigError(c.Executor); err != nil {
			return fmt.Errorf("the executor: %w", err)
		}
	}
	return nil
}

// New returns the run_skill_script tool.
func New(cfg Config) (tool.Tool, error) {
	if cfg.Source == nil {
		return nil, fmt.Errorf("runscript: a skill source is required")
	}
	r, err := newRunner(cfg)
	if err != nil {
		return nil, fmt.Errorf("runscript: %w", err)
	}
	return &runScript{r: r}, nil
}

type runScript struct {
	r *runner
}

func (t *runScript) Name() string { return Name }

func (t *runScript) Description() string { return scriptDescription }

// scriptDescription is run_skill_script's description.
const scriptDescription = "Runs a script from a skill's folder and returns its exit code, stdout and stderr (each capped), " +
	"and the files it wrote, saved as artifacts. The script runs with the skill's root folder as its working directory; " +
	"input_files places files of this session (uploads, earlier outputs) there first."

func (t *runScript) IsLongRunning() bool { return false }

func (t *runScript) Declaration() *genai.FunctionDeclaration { return t.r.scriptDeclaration() }

// scriptDeclaration declares run_skill_script, whatever its host.
func (r *runner) scriptDeclaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        Name,
		Description: scriptDescription,
		Parameters: &genai.Schema{
			Type: genai.TypeObject,
			Properties: map[string]*genai.Schema{
				"skill_name": {Type: genai.TypeString, Description: "The name of the skill, as listed in <available_skills>."},
				"script_path": {Type: genai.TypeString, Description: "The script's path relative to the skill's root folder, " +
					"e.g. \"scripts/report.py\". " + capitalized(r.table().Supported()) + "."},
				"args":        {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}, Description: "Command-line arguments, passed to the script as argv (no shell)."},
				"stdin":       {Type: genai.TypeString, Description: "Optional text for the script's standard input."},
				"input_files": inputFilesSchema(),
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
	return t.r.runScript(tc, t.r.session(tc), args)
}

// runScript is one call of run_skill_script, whatever its host: it validates
// the arguments, finds the skill and the script, stages the inputs and runs
// it.
func (r *runner) runScript(ctx context.Context, s Session, args any) *Response {
	a, err := parseArgs(args, "skill_name", "script_path", "args", "stdin", "input_files")
	if err != nil {
		return errorResponse(CodeInvalidArguments, err.Error())
	}
	name, err := a.String("skill_name", true, 1024)
	if err != nil {
		return errorResponse(CodeInvalidArguments, err.Error())
	}
	raw, err := a.String("script_path", true, 4096)
	if err != nil {
		return errorResponse(CodeInvalidArguments, err.Error())
	}
	script, err := cleanPath("script_path", raw)
	if err != nil {
		return errorResponse(CodeInvalidArguments, err.Error())
	}
	argv, err := a.Strings("args")
	if err != nil {
		return errorResponse(CodeInvalidArguments, err.Error())
	}
	stdin, err := a.String("stdin", false, MaxStdinBytes)
	if err != nil {
		return errorResponse(CodeInvalidArguments, err.Error())
	}
	inputs, err := r.inputEntries(a)
	if err != nil {
		return errorResponse(CodeInvalidArguments, err.Error())
	}
	if r.Executor == nil {
		return noExecutor()
	}
	if r.Source == nil {
		return errorResponse(CodeSkillNotFound, fmt.Sprintf("skill %q not found: no skills are configured", name))
	}
	sk, resp := r.loadSkill(ctx, name)
	if resp != nil {
		return resp
	}
	if !sk.has(script) {
		return r.miss(ctx, s, sk, script, raw)
	}
	in, resp := interpreter(ctx, r.Source, r.table(), name, script, raw)
	if resp != nil {
		return resp
	}
	ins, resp := r.resolveInputs(ctx, s, inputs, sk.paths)
	if resp != nil {
		return resp
	}
	files, resp := r.loadInputs(ctx, s, ins)
	if resp != nil {
		return resp
	}
	req := &codeexec.Request{Skill: sk.fsys, SkillName: sk.name, Files: files, Script: script, Interpreter: in, Args: argv}
	if stdin != "" {
		req.Stdin = []byte(stdin)
	}
	return r.run(ctx, s, Call{Tool: Name, Skill: name, Script: script, Inputs: len(files)}, req, ins)
}

// capitalized is s with its first letter in upper case.
func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
