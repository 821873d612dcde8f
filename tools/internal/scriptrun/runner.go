// Package scriptrun is the kit both script tools share, run_skill_script
// (tools/runscript) and run_skill_inline_script (tools/runinline): the
// configuration and its check, reading the arguments, loading and staging a
// skill, input_files, the run, saving the output files as artifacts, the
// session's tree of deletions, the response and its telemetry. Package
// runscript exports what its users need of it.
package scriptrun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/internal/truncate"
)

// Runner is what both script tools share: the configuration and the state
// that lives as long as the tool.
type Runner struct {
	Config

	missesMu   sync.Mutex
	noArtifact sync.Once
}

// ToolSession is ADK's tool context as the Session of one call.
func (r *Runner) ToolSession(tc adkglue.ToolContext) Session {
	return toolSession{tc: tc, mu: &r.missesMu}
}

// New checks cfg (see Config.Validate) and returns a Runner over it.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{Config: cfg}, nil
}

// Table returns the interpreter table in use: the executor's.
func (r *Runner) Table() codeexec.Interpreters {
	return codeexec.InterpretersOf(r.Executor)
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.Default()
	}
	return r.Logger
}

// ErrIntegrity marks a skill whose files are not what its source vouched
// for (a file that does not match the digest a remote server advertised, a
// manifest without digests): a skill.Source returns it, wrapped, and the
// tools answer EXECUTION_ERROR saying so, running nothing.
var ErrIntegrity = errors.New("the skill failed its integrity check")

// NoExecutor is the answer of a script tool without a code executor.
func NoExecutor() *Response {
	return ErrorResponse(CodeNoCodeExecutor, "no code executor is configured: scripts cannot run in this agent")
}

// ScriptMiss records a SCRIPT_NOT_FOUND in the session's turn and returns
// the response: reason says what is wrong with the path ("script "x.py" not
// found in skill "s""), runnable (if any) names what can run instead. The
// second miss in one turn is SCRIPT_NOT_FOUND_FATAL, which tells the model
// to stop retrying.
func (r *Runner) ScriptMiss(s Session, skillName, scriptPath, reason, runnable string) *Response {
	if s.ScriptMissed() > 1 {
		return ErrorResponse(CodeScriptNotFoundFatal, fmt.Sprintf(
			"script %q not found in skill %q, and a script was already not found in this turn: stop retrying and report the problem to the user", scriptPath, skillName))
	}
	msg := reason
	if runnable != "" {
		msg += "; runnable files: " + runnable
	}
	return ErrorResponse(CodeScriptNotFound, msg)
}

// Skill is one skill folder, ready to hand to an executor: its files
// are listed, not read.
type Skill struct {
	Name  string
	FS    fs.FS
	Paths []string // every file, relative to the skill root
}

// Has reports whether p is one of the skill's files.
func (s *Skill) Has(p string) bool { return slices.Contains(s.Paths, p) }

// LoadSkill finds a skill folder and lists its files, without reading
// them. A response is returned instead when the skill does not exist or
// cannot be read.
func (r *Runner) LoadSkill(ctx context.Context, name string) (*Skill, *Response) {
	if _, err := r.Source.LoadFrontmatter(ctx, name); err != nil {
		switch {
		case errors.Is(err, ErrIntegrity):
			return nil, r.refused(name, err)
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
	if errors.Is(err, ErrIntegrity) {
		return nil, r.refused(name, err)
	}
	if err != nil && !errors.Is(err, skill.ErrResourceNotFound) {
		r.logger().Error("adkskills: listing skill files", "skill", name, "error", err)
		return nil, ErrorResponse(CodeExecutionError, fmt.Sprintf("files of skill %q could not be listed", name))
	}
	s := &Skill{Name: name, Paths: paths}
	if src, ok := r.Source.(*skillfs.Source); ok {
		if s.FS, err = src.FS(name); err != nil {
			r.logger().Error("adkskills: opening skill folder", "skill", name, "error", err)
			return nil, ErrorResponse(CodeExecutionError, fmt.Sprintf("skill %q could not be opened", name))
		}
	} else {
		s.FS = newSourceFS(ctx, r.Source, name, paths)
	}
	return s, nil
}

// maxListedSkillsChars bounds the names SKILL_NOT_FOUND lists: a source
// with thousands of skills names what fits and counts the rest.
const maxListedSkillsChars = 2_000

// refused is the answer for a skill that failed its integrity check. The
// error says which file and which digests; it names no host path.
func (r *Runner) refused(name string, err error) *Response {
	r.logger().Error("adkskills: a skill failed its integrity check", "skill", name, "error", err)
	return ErrorResponse(CodeExecutionError, fmt.Sprintf("skill %q was refused, and nothing ran: %v", name, err))
}

// skillList names the available skills, for SKILL_NOT_FOUND, within
// maxListedSkillsChars.
func (r *Runner) skillList(ctx context.Context) string {
	fms, err := r.Source.ListFrontmatters(ctx)
	if err != nil || len(fms) == 0 {
		return ""
	}
	names := make([]string, 0, len(fms))
	used := 0
	for _, fm := range fms {
		used += utf8.RuneCountInString(fm.Name) + 1
		if used > maxListedSkillsChars && len(names) > 0 {
			return fmt.Sprintf("; available skills: %v and %d more (list_skills lists them)", names, len(fms)-len(names))
		}
		names = append(names, fm.Name)
	}
	return fmt.Sprintf("; available skills: %v", names)
}

// Run executes req and builds the model response, saving output files as
// the session's artifacts and recording which of ins (the input files
// staged) the run deleted. req's limits are the configuration's. The run is
// an OpenTelemetry span (see startSpan) described by call.
func (r *Runner) Run(ctx context.Context, s Session, call Call, req *codeexec.Request, ins []InputFile) *Response {
	if r.Executor == nil {
		return NoExecutor()
	}
	req.Limits = r.Limits
	runCtx, span := startSpan(ctx, call, r.Executor)
	res, err := r.Executor.Execute(runCtx, req)
	if err != nil {
		endSpanError(span, err)
		r.logger().Error("adkskills: script execution failed", "tool", call.Tool, "script", req.Script, "error", err)
		if errors.Is(err, codeexec.ErrUnsupportedScript) {
			return ErrorResponse(CodeUnsupportedScriptType, fmt.Sprintf("no interpreter is configured for %q", req.Script))
		}
		if errors.Is(err, codeexec.ErrDependencies) {
			// The executor's first line names the packages and why, for
			// the model; anything after it is for the log.
			msg, _, _ := strings.Cut(err.Error(), "\n")
			if _, after, ok := strings.Cut(msg, codeexec.ErrDependencies.Error()+": "); ok {
				msg = after
			}
			return ErrorResponse(CodeExecutionError, "the script's declared dependencies are not available, so it did not run: "+msg)
		}
		if errors.Is(err, codeexec.ErrTooLarge) {
			return ErrorResponse(CodeExecutionError, fmt.Sprintf("the skill and its input files are over the %d-byte staging limit, so the script did not run", req.Limits.WithDefaults().MaxSkillBytes))
		}
		return ErrorResponse(CodeExecutionError, executionMessage(err))
	}
	resp := r.respond(ctx, s, res, ins)
	endSpan(span, res, resp)
	return resp
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
	case errors.Is(err, codeexec.ErrInvalidRequest):
		return "the skill could not be staged for this run (details in the agent's log)"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "the call was cancelled before the script could run"
	default:
		return "the script could not be run (details in the agent's log)"
	}
}

// status is the status word of a run that happened.
func status(res *codeexec.Result) string {
	switch {
	case res.OutOfMemory:
		return StatusOutOfMemory
	case res.TimedOut:
		return StatusTimeout
	case res.ExitCode != 0:
		return StatusError
	default:
		return StatusSuccess
	}
}

// respond builds the success response of the contract.
//
// Beside stdout and stderr (each capped at the output cap), what the model
// reads is bounded by the same cap, however many files a run writes and
// however long their names: the manifest lists files until their entries
// fill it (every file is saved all the same, and the warning says how many
// are not listed), and the warning is cut at it, around truncate's marker.
func (r *Runner) respond(ctx context.Context, s Session, res *codeexec.Result, ins []InputFile) *Response {
	files, warnings := r.saveScriptOutputs(ctx, s, res.Files)
	deleted, warning := r.recordDeletions(ctx, s, res, files, ins)
	if warning != "" {
		warnings = append(warnings, warning)
	}
	budget := r.Limits.WithDefaults().MaxOutputChars
	listed := listedWithin(files, budget)
	if n := len(files) - len(listed); n > 0 {
		warnings = append([]string{fmt.Sprintf("%d more output file(s) are not listed here: the list is bounded at %d characters", n, budget)}, warnings...)
	}
	listedDeleted := deletedWithin(deleted, budget)
	if n := len(deleted) - len(listedDeleted); n > 0 {
		warnings = append([]string{fmt.Sprintf("%d more deleted file(s) are not listed here: the list is bounded at %d characters", n, budget)}, warnings...)
	}
	for _, o := range res.Omitted {
		warnings = append(warnings, fmt.Sprintf("%s was not saved: %s", DisplayPath(o.Path), o.Reason))
	}
	// What the executor saw (the hosts the sandbox's network refused)
	// comes first: the files' warnings are bounded in number.
	warnings = append(slices.Clip(res.Warnings), warnings...)
	return &Response{
		Status:       status(res),
		ExitCode:     res.ExitCode,
		TimedOut:     res.TimedOut,
		Stdout:       res.Stdout.Text,
		Stderr:       res.Stderr.Text,
		Message:      res.Note,
		OutputFiles:  listed,
		DeletedFiles: listedDeleted,
		Warning:      truncate.String(joinWarnings(warnings), budget),
	}
}

// manifestEntryChars is what an entry of output_files costs beyond its
// strings (keys, punctuation, the numbers).
const manifestEntryChars = 80

// deletedEntryChars is what an entry of deleted_files costs beyond its
// strings.
const deletedEntryChars = 30

// deletedWithin returns the first files whose deleted_files entries fit in
// budget characters.
func deletedWithin(files []DeletedFile, budget int) []DeletedFile {
	used := 0
	for i, f := range files {
		used += deletedEntryChars + utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Artifact)
		if used > budget {
			return files[:i]
		}
	}
	return files
}

// listedWithin returns the first files whose manifest entries fit in budget
// characters.
func listedWithin(files []OutputFile, budget int) []OutputFile {
	used := 0
	for i, f := range files {
		used += manifestEntryChars + utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Artifact) + len(f.MIMEType)
		if used > budget {
			return files[:i]
		}
	}
	return files
}
