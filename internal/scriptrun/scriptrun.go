// Package scriptrun is the part both script tools share: argument parsing,
// staging a skill folder from a skill.Source, running a codeexec.Request, and
// building the one model-facing response, output files saved as artifacts
// (saveScriptOutputs).
package scriptrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/codeexec"
)

// Error codes of the model-facing contract, shared with adk-python and adk-js.
const (
	CodeInvalidArguments      = "INVALID_ARGUMENTS"
	CodeSkillNotFound         = "SKILL_NOT_FOUND"
	CodeScriptNotFound        = "SCRIPT_NOT_FOUND"
	CodeScriptNotFoundFatal   = "SCRIPT_NOT_FOUND_FATAL"
	CodeUnsupportedScriptType = "UNSUPPORTED_SCRIPT_TYPE"
	CodeNoCodeExecutor        = "NO_CODE_EXECUTOR"
	CodeExecutionError        = "EXECUTION_ERROR"
	CodeConfirmationRejected  = "CONFIRMATION_REJECTED"
)

// Statuses of a run that happened.
const (
	StatusSuccess = "success"
	StatusError   = "error"
	StatusTimeout = "timeout"
)

// DefaultMaxSkillBytes bounds the bytes of one skill folder staged for a run.
const DefaultMaxSkillBytes = 256 << 20

// scriptMissesKey counts SCRIPT_NOT_FOUND answers in invocation-scoped
// state: ADK drops "temp:" keys when the invocation ends.
const scriptMissesKey = "temp:adkskills:script_misses:"

// NoExecutor is the answer of a script tool without a code executor.
func NoExecutor() map[string]any {
	return ErrorResponse(CodeNoCodeExecutor, "no code executor is configured: scripts cannot run in this agent")
}

// ErrorResponse is the response of a tool call that could not run a script.
func ErrorResponse(code, msg string) map[string]any {
	return map[string]any{"error": msg, "error_code": code}
}

// Config configures the script tools (run_skill_script and
// run_skill_inline_script); the public packages re-export it as
// runscript.Config.
type Config struct {
	// Source finds skills and their files. Required for run_skill_script;
	// optional for run_skill_inline_script (then skill_name is refused).
	Source skill.Source
	// Executor runs the scripts and owns the interpreter table (see
	// codeexec.TableOf). Nil: every call answers NO_CODE_EXECUTOR.
	Executor codeexec.Executor
	// MaxOutputChars caps stdout and stderr each, in characters. Zero:
	// codeexec.DefaultMaxOutputChars.
	MaxOutputChars int
	// Timeout is the wall-clock limit of one run. Zero:
	// codeexec.DefaultTimeout.
	Timeout time.Duration
	// Env is added to every script's environment (the agent's own
	// environment never reaches a script).
	Env map[string]string
	// OutputLimits bounds the files a run returns. Zero fields: the codeexec
	// defaults.
	OutputLimits codeexec.OutputLimits
	// MaxSkillBytes bounds the bytes of one staged skill folder. Zero:
	// DefaultMaxSkillBytes.
	MaxSkillBytes int64
	// Logger receives what the model must not see (host paths, save
	// failures). Nil: slog.Default().
	Logger *slog.Logger
}

// Validate reports the first invalid value.
func (c *Config) Validate() error {
	switch l := c.OutputLimits; {
	case c.MaxOutputChars < 0:
		return fmt.Errorf("negative MaxOutputChars: %d", c.MaxOutputChars)
	case c.Timeout < 0:
		return fmt.Errorf("negative Timeout: %v", c.Timeout)
	case c.MaxSkillBytes < 0:
		return fmt.Errorf("negative MaxSkillBytes: %d", c.MaxSkillBytes)
	case l.MaxFiles < 0 || l.MaxFileBytes < 0 || l.MaxTotalBytes < 0:
		return fmt.Errorf("negative OutputLimits: %+v", l)
	}
	for k, v := range c.Env {
		if err := codeexec.CheckEnv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// Runner is what both script tools share: the configuration and the state
// that lives as long as the tool.
type Runner struct {
	Config

	missesMu   sync.Mutex
	noArtifact sync.Once
}

// New checks cfg and returns a Runner over it.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{Config: cfg}, nil
}

// Table returns the interpreter table in use: the executor's.
func (r *Runner) Table() codeexec.Interpreters {
	return codeexec.TableOf(r.Executor)
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.Default()
	}
	return r.Logger
}

// ScriptMiss records a SCRIPT_NOT_FOUND in this invocation and returns the
// response: the second miss in one invocation is SCRIPT_NOT_FOUND_FATAL,
// which tells the model to stop retrying.
func (r *Runner) ScriptMiss(tc agent.ToolContext, skillName, scriptPath string, available []string) map[string]any {
	r.missesMu.Lock()
	key := scriptMissesKey + tc.InvocationID()
	n := 0
	if v, err := tc.State().Get(key); err == nil {
		n, _ = v.(int)
	}
	n++
	_ = tc.State().Set(key, n)
	r.missesMu.Unlock()
	if n > 1 {
		return ErrorResponse(CodeScriptNotFoundFatal, fmt.Sprintf(
			"script %q not found in skill %q, and a script was already not found in this turn: stop retrying and report the problem to the user", scriptPath, skillName))
	}
	msg := fmt.Sprintf("script %q not found in skill %q", scriptPath, skillName)
	if len(available) > 0 {
		msg += fmt.Sprintf("; runnable files: %v", available)
	}
	return ErrorResponse(CodeScriptNotFound, msg)
}

// Skill is one skill folder, staged in memory.
type Skill struct {
	Name  string
	Files []codeexec.File
}

// Has reports whether p is one of the skill's files.
func (s *Skill) Has(p string) bool {
	return slices.ContainsFunc(s.Files, func(f codeexec.File) bool { return f.Path == p })
}

// Runnable lists the skill's files the interpreter table can run.
func (s *Skill) Runnable(t codeexec.Interpreters) []string {
	var out []string
	for _, f := range s.Files {
		if _, err := t.ForScript(f.Path); err == nil {
			out = append(out, f.Path)
		}
	}
	return out
}

// LoadSkill stages a skill folder: every file the source lists for it, byte
// for byte. A response is returned instead when the skill does not exist or
// cannot be read.
func (r *Runner) LoadSkill(ctx context.Context, name string) (*Skill, map[string]any) {
	if _, err := r.Source.LoadFrontmatter(ctx, name); err != nil {
		switch {
		case errors.Is(err, skill.ErrSkillNotFound):
			return nil, ErrorResponse(CodeSkillNotFound, fmt.Sprintf("skill %q not found%s", name, r.skillList(ctx)))
		case errors.Is(err, skill.ErrInvalidSkillName), errors.Is(err, skill.ErrInvalidFrontmatter):
			// The catalogue leaves such a skill out; say why it cannot run.
			r.logger().Warn("adkskills: a skill that cannot be loaded was asked for", "skill", name, "error", err)
			return nil, ErrorResponse(CodeSkillNotFound, fmt.Sprintf("skill %q cannot be used: it is missing or its SKILL.md is invalid%s", name, r.skillList(ctx)))
		default:
			r.logger().Error("adkskills: loading skill", "skill", name, "error", err)
			return nil, ErrorResponse(CodeExecutionError, fmt.Sprintf("skill %q could not be loaded", name))
		}
	}
	paths, err := r.Source.ListResources(ctx, name, "")
	if err != nil && !errors.Is(err, skill.ErrResourceNotFound) {
		r.logger().Error("adkskills: listing skill files", "skill", name, "error", err)
		return nil, ErrorResponse(CodeExecutionError, fmt.Sprintf("files of skill %q could not be listed", name))
	}
	limit := r.MaxSkillBytes
	if limit <= 0 {
		limit = DefaultMaxSkillBytes
	}
	s := &Skill{Name: name}
	var total int64
	for _, p := range paths {
		data, err := r.readResource(ctx, name, p, limit-total)
		if err != nil {
			r.logger().Error("adkskills: staging skill file", "skill", name, "path", p, "error", err)
			return nil, ErrorResponse(CodeExecutionError, fmt.Sprintf("skill %q could not be staged: %v", name, errors.Unwrap(err)))
		}
		total += int64(len(data))
		s.Files = append(s.Files, codeexec.File{Path: p, Data: data})
	}
	return s, nil
}

var errSkillTooLarge = errors.New("the skill folder is over the staging limit")

func (r *Runner) readResource(ctx context.Context, name, p string, budget int64) ([]byte, error) {
	rc, err := r.Source.LoadResource(ctx, name, p)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, budget+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if int64(len(data)) > budget {
		return nil, fmt.Errorf("%s: %w", p, errSkillTooLarge)
	}
	return data, nil
}

// skillList names the available skills, for SKILL_NOT_FOUND.
func (r *Runner) skillList(ctx context.Context) string {
	fms, err := r.Source.ListFrontmatters(ctx)
	if err != nil || len(fms) == 0 {
		return ""
	}
	names := make([]string, 0, len(fms))
	for _, fm := range fms {
		names = append(names, fm.Name)
	}
	return fmt.Sprintf("; available skills: %v", names)
}

// Run executes req and builds the model response, saving output files as
// artifacts. req's limits are filled from the Runner.
func (r *Runner) Run(tc agent.ToolContext, toolName string, req *codeexec.Request) map[string]any {
	if r.Executor == nil {
		return NoExecutor()
	}
	req.MaxOutputChars = r.MaxOutputChars
	req.Timeout = r.Timeout
	req.Limits = r.OutputLimits
	if len(r.Env) > 0 {
		env := maps.Clone(r.Env)
		maps.Copy(env, req.Env) // the request's own variables win
		req.Env = env
	}
	res, err := r.Executor.Execute(tc, req)
	if err != nil {
		r.logger().Error("adkskills: script execution failed", "tool", toolName, "script", req.Script, "error", err)
		if errors.Is(err, codeexec.ErrUnsupportedScript) {
			return ErrorResponse(CodeUnsupportedScriptType, fmt.Sprintf("no interpreter is configured for %q", req.Script))
		}
		return ErrorResponse(CodeExecutionError, executionMessage(err))
	}
	return r.respond(tc, res)
}

// executionMessage is the short, host-detail-free message of an
// infrastructure failure; the details are in the log.
func executionMessage(err error) string {
	switch {
	case errors.Is(err, codeexec.ErrSandboxUnavailable):
		return "the sandbox is not available on this host; the script did not run (details in the agent's log)"
	case errors.Is(err, codeexec.ErrStart):
		return "the script's interpreter could not be started (details in the agent's log)"
	case errors.Is(err, codeexec.ErrWorkspace):
		return "the script's workspace could not be prepared (details in the agent's log)"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "the call was cancelled before the script could run"
	default:
		return "the script could not be run (details in the agent's log)"
	}
}

// Status is the status word of a run that happened.
func Status(res *codeexec.Result) string {
	switch {
	case res.TimedOut:
		return StatusTimeout
	case res.ExitCode != 0:
		return StatusError
	default:
		return StatusSuccess
	}
}

// respond builds the success response of the contract.
func (r *Runner) respond(tc agent.ToolContext, res *codeexec.Result) map[string]any {
	files, warnings := r.saveScriptOutputs(tc, res.Files)
	for _, o := range res.Omitted {
		warnings = append(warnings, fmt.Sprintf("%s was not saved: %s", DisplayPath(o.Path), o.Reason))
	}
	resp := map[string]any{
		"status":       Status(res),
		"exit_code":    res.ExitCode,
		"timed_out":    res.TimedOut,
		"stdout":       res.Stdout.Text,
		"stderr":       res.Stderr.Text,
		"output_files": files,
	}
	if len(warnings) > 0 {
		resp["warning"] = joinWarnings(warnings)
	}
	return resp
}
