package runscript

import (
	"context"

	"google.golang.org/adk/agent"

	"github.com/adkskills/adkskills/tools/internal/scriptrun"
)

// The script tools' contract is built in tools/internal/scriptrun, the kit
// run_skill_script and run_skill_inline_script (package runinline) share;
// these are its public names.

// Config configures a script tool; run_skill_script and
// run_skill_inline_script share it. Source finds the skills, Executor runs
// the scripts and owns the interpreter table, Limits and InputLimits bound
// every run (zero fields mean the codeexec defaults), Logger receives what
// the model must not see. Config.Validate reports the first invalid value.
type Config = scriptrun.Config

// Response is what run_skill_script and run_skill_inline_script answer: the
// exit code, the capped stdout and stderr, the files the run wrote (saved as
// artifacts) and deleted, or, when no script ran, Error and ErrorCode.
// Response.Map is the result ADK wants, and ParseResponse the way back.
type Response = scriptrun.Response

// OutputFile is one entry of Response.OutputFiles.
type OutputFile = scriptrun.OutputFile

// DeletedFile is one entry of Response.DeletedFiles.
type DeletedFile = scriptrun.DeletedFile

// SessionFile is a file of the session that input_files can pass in: an
// artifact and the path, relative to the skill root, it is staged at.
type SessionFile = scriptrun.SessionFile

// Session is what a call of either script tool needs from the host it runs
// in, besides its context: the session's files (ArtifactStore) and the turn
// it belongs to (ScriptMissed). ADK's tool context is one host; an MCP
// session is another (package mcpskills). A Runner takes it.
type Session = scriptrun.Session

// Error codes of the model-facing contract, shared with adk-python and adk-js.
const (
	CodeInvalidArguments      = scriptrun.CodeInvalidArguments      // "INVALID_ARGUMENTS"
	CodeSkillNotFound         = scriptrun.CodeSkillNotFound         // "SKILL_NOT_FOUND"
	CodeScriptNotFound        = scriptrun.CodeScriptNotFound        // "SCRIPT_NOT_FOUND"
	CodeScriptNotFoundFatal   = scriptrun.CodeScriptNotFoundFatal   // "SCRIPT_NOT_FOUND_FATAL"
	CodeUnsupportedScriptType = scriptrun.CodeUnsupportedScriptType // "UNSUPPORTED_SCRIPT_TYPE"
	CodeNoCodeExecutor        = scriptrun.CodeNoCodeExecutor        // "NO_CODE_EXECUTOR"
	CodeExecutionError        = scriptrun.CodeExecutionError        // "EXECUTION_ERROR"
	CodeConfirmationRejected  = scriptrun.CodeConfirmationRejected  // "CONFIRMATION_REJECTED"
)

// Statuses of a run that happened.
const (
	StatusSuccess     = scriptrun.StatusSuccess     // "success": exit code 0, in time
	StatusError       = scriptrun.StatusError       // "error": a non-zero exit code
	StatusTimeout     = scriptrun.StatusTimeout     // "timeout": the time limit was hit
	StatusOutOfMemory = scriptrun.StatusOutOfMemory // "out_of_memory": killed at its memory bound; Message says it
)

// Bounds on what the model may pass. They keep one call from pinning memory
// or the argv limit of the kernel; a legitimate script needs far less.
const (
	MaxArgs          = scriptrun.MaxArgs          // argv entries a call may pass: 1024
	MaxArgBytes      = scriptrun.MaxArgBytes      // the bytes of all args together: 1 MiB
	MaxArgEntryBytes = scriptrun.MaxArgEntryBytes // one argument: 128 KiB - 1, Linux's MAX_ARG_STRLEN
	MaxStdinBytes    = scriptrun.MaxStdinBytes    // stdin: 16 MiB
	MaxScriptBytes   = scriptrun.MaxScriptBytes   // an inline script: 1 MiB
)

// TracerName ("github.com/adkskills/adkskills") is the instrumentation
// scope of the script-run spans.
const TracerName = scriptrun.TracerName

// Attribute keys of a script-run span ("adkskills.tool", "adkskills.status",
// …). No key holds a script's output, its arguments, its stdin or a file's
// content.
const (
	AttrTool          = scriptrun.AttrTool
	AttrSkill         = scriptrun.AttrSkill
	AttrScript        = scriptrun.AttrScript
	AttrLanguage      = scriptrun.AttrLanguage
	AttrInline        = scriptrun.AttrInline
	AttrExecutor      = scriptrun.AttrExecutor
	AttrStatus        = scriptrun.AttrStatus
	AttrExitCode      = scriptrun.AttrExitCode
	AttrTimedOut      = scriptrun.AttrTimedOut
	AttrDurationMs    = scriptrun.AttrDurationMs
	AttrStdoutBytes   = scriptrun.AttrStdoutBytes
	AttrStdoutChars   = scriptrun.AttrStdoutChars
	AttrStdoutCut     = scriptrun.AttrStdoutCut
	AttrStderrBytes   = scriptrun.AttrStderrBytes
	AttrStderrChars   = scriptrun.AttrStderrChars
	AttrStderrCut     = scriptrun.AttrStderrCut
	AttrFilesSaved    = scriptrun.AttrFilesSaved
	AttrFilesNotSaved = scriptrun.AttrFilesNotSaved
	AttrFilesOmitted  = scriptrun.AttrFilesOmitted
	AttrFilesInput    = scriptrun.AttrFilesInput
)

// DeletedArtifact ("~adkskills-deleted.json") is the artifact that records
// which files of a session's tree runs deleted; no file's artifact name is
// this one.
const DeletedArtifact = scriptrun.DeletedArtifact

// ErrIntegrity marks a skill whose files are not what its source vouched
// for (a file that does not match the digest a remote server advertised, a
// manifest without digests): a skill.Source returns it, wrapped, and the
// tools answer EXECUTION_ERROR saying so, running nothing.
var ErrIntegrity = scriptrun.ErrIntegrity

// ParseResponse reads a function response of either tool back into a
// Response, whether it holds the Go values the tool built (an in-memory
// session) or their JSON round trip (a persisted session).
func ParseResponse(m map[string]any) (*Response, error) { return scriptrun.ParseResponse(m) }

// ArtifactName maps an output file's path (relative to the skill root, "/"
// separators) to the artifact name it is saved under, a name safe to put raw
// into a URL path: "dist/report.zip" becomes "dist∕report.zip" (U+2215), and
// characters a URL or a terminal would not carry as themselves become "~" and
// two hex digits. The mapping is injective; ArtifactPath inverts it.
func ArtifactName(p string) string { return scriptrun.ArtifactName(p) }

// ArtifactPath inverts ArtifactName (and the "%"-escaped names of earlier
// releases): the output file path an artifact name stands for; ok is false
// for a name ArtifactName does not make (a user's upload, say).
func ArtifactPath(name string) (p string, ok bool) { return scriptrun.ArtifactPath(name) }

// DisplayPath is how an output file's path is shown to the model and in
// warnings: "%", bytes that are not UTF-8, and control and format characters
// percent-escaped byte by byte, so every name displays as what it is and
// distinct paths stay distinct.
func DisplayPath(p string) string { return scriptrun.DisplayPath(p) }

// EscapeHidden escapes, as \xNN or \uNNNN, the characters of s that would
// not show as themselves on a terminal or in a review (control characters,
// terminal escapes, bidirectional overrides, zero-width and line-separator
// characters), keeping newlines and tabs: what a human reads is what s is.
func EscapeHidden(s string) string { return scriptrun.EscapeHidden(s) }

// SessionFiles lists, sorted by path, the files input_files can pass in
// from arts: every artifact of the session with a path inside the skill
// root that no run deleted (see DeletedFiles). User-scoped artifacts are
// left out. A nil arts has no files.
func SessionFiles(ctx context.Context, arts agent.Artifacts) ([]SessionFile, error) {
	return scriptrun.SessionFiles(ctx, arts)
}

// DeletedFiles lists, sorted by path, the files runs deleted from the
// session's tree: each path and the artifact that held it, whose versions
// are all still there. SessionFiles leaves them out.
func DeletedFiles(ctx context.Context, arts agent.Artifacts) ([]SessionFile, error) {
	return scriptrun.DeletedFiles(ctx, arts)
}

// Restore puts paths (relative to the skill root) back into the session's
// tree: a host that saves a file into the session outside the script tools
// (the command line's --input does) calls it after the save, so that a path
// an earlier run deleted is offered again.
func Restore(ctx context.Context, arts agent.Artifacts, paths ...string) error {
	return scriptrun.Restore(ctx, arts, paths...)
}
