package scriptrun

import (
	"encoding/json"
	"fmt"
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
	StatusSuccess = "success" // exit code 0, in time
	StatusError   = "error"   // a non-zero exit code
	StatusTimeout = "timeout" // the time limit was hit
	// StatusOutOfMemory: the run reached its memory bound and the kernel
	// killed it; Message says the bound.
	StatusOutOfMemory = "out_of_memory"
)

// Response is what run_skill_script and run_skill_inline_script answer: the
// one model-facing response of both tools, built in one place, printed by
// the command line and read by tests. A run that happened fills the first
// group of fields (a script that failed is such a run, with Status
// StatusError); a call that could not run a script fills only Error and
// ErrorCode.
//
// ADK wants a tool's result as a map: [Response.Map] is that conversion, and
// [ParseResponse] the way back. Its JSON form is the map's.
type Response struct {
	// Status is StatusSuccess, StatusError, StatusTimeout or
	// StatusOutOfMemory.
	Status string `json:"status,omitempty"`
	// ExitCode is the script's exit code; a death by signal n is 128+n.
	ExitCode int `json:"exit_code"`
	// TimedOut reports that the run hit its time limit.
	TimedOut bool `json:"timed_out"`
	// Stdout and Stderr are each capped at the toolset's MaxOutputChars
	// characters, head and tail kept around one marker.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// OutputFiles lists the files the run created or changed: a manifest,
	// never their bytes.
	OutputFiles []OutputFile `json:"output_files"`
	// DeletedFiles lists the input files the run deleted, renamed or moved
	// away: they are no longer files of the session (see SessionFiles).
	// Absent when there are none.
	DeletedFiles []DeletedFile `json:"deleted_files,omitempty"`
	// Message says how the executor ended a run the script did not end
	// itself ("out of memory: the run used its 512 MiB"); empty otherwise.
	Message string `json:"message,omitempty"`
	// Warning is set when the executor noticed something about the run
	// (the hosts the sandbox's network refused), files were not saved (no
	// artifact service, a save failed, a limit was hit) or part of the
	// response was cut.
	Warning string `json:"warning,omitempty"`

	// Error says why no script ran, without host details.
	Error string `json:"error,omitempty"`
	// ErrorCode is one of the Code constants.
	ErrorCode string `json:"error_code,omitempty"`
}

// OutputFile is one entry of Response.OutputFiles.
type OutputFile struct {
	// Name is the file's path relative to the skill root (the script's
	// working directory), "/"-separated, with invisible characters escaped
	// (see DisplayPath).
	Name string `json:"name"`
	// Artifact is the session artifact the file was saved as (see
	// ArtifactName); empty when it was not saved.
	Artifact string `json:"artifact,omitempty"`
	// Version is the artifact's version; 0 when it was not saved.
	Version int64 `json:"version,omitempty"`
	// MIMEType is the file's media type.
	MIMEType string `json:"mime_type"`
	// SizeBytes is the file's size.
	SizeBytes int64 `json:"size_bytes"`
}

// DeletedFile is one entry of Response.DeletedFiles.
type DeletedFile struct {
	// Name is the file's path relative to the skill root, as OutputFile's.
	Name string `json:"name"`
	// Artifact is the artifact the input was loaded from; its versions
	// stay loadable by name.
	Artifact string `json:"artifact,omitempty"`
}

// Failed reports whether no script ran (the response is an error).
func (r Response) Failed() bool { return r.ErrorCode != "" }

// ErrorResponse is the response of a call that could not run a script.
func ErrorResponse(code, msg string) *Response {
	return &Response{Error: msg, ErrorCode: code}
}

// Map is the response as ADK's tool result: the contract's keys with Go
// values (an error response has only "error" and "error_code").
func (r Response) Map() map[string]any {
	if r.Failed() {
		return map[string]any{"error": r.Error, "error_code": r.ErrorCode}
	}
	files := make([]map[string]any, 0, len(r.OutputFiles))
	for _, f := range r.OutputFiles {
		e := map[string]any{"name": f.Name, "mime_type": f.MIMEType, "size_bytes": f.SizeBytes}
		if f.Artifact != "" {
			e["artifact"] = f.Artifact
			e["version"] = f.Version
		}
		files = append(files, e)
	}
	m := map[string]any{
		"status":       r.Status,
		"exit_code":    r.ExitCode,
		"timed_out":    r.TimedOut,
		"stdout":       r.Stdout,
		"stderr":       r.Stderr,
		"output_files": files,
	}
	if len(r.DeletedFiles) > 0 {
		deleted := make([]map[string]any, 0, len(r.DeletedFiles))
		for _, f := range r.DeletedFiles {
			e := map[string]any{"name": f.Name}
			if f.Artifact != "" {
				e["artifact"] = f.Artifact
			}
			deleted = append(deleted, e)
		}
		m["deleted_files"] = deleted
	}
	if r.Message != "" {
		m["message"] = r.Message
	}
	if r.Warning != "" {
		m["warning"] = r.Warning
	}
	return m
}

// MarshalJSON encodes the response as its Map.
func (r Response) MarshalJSON() ([]byte, error) {
	return json.Marshal(r.Map())
}

// ParseResponse reads a function response of either tool back into a
// Response, whether it holds the Go values the tool built (an in-memory
// session) or their JSON round trip (numbers as float64, a persisted
// session).
func ParseResponse(m map[string]any) (*Response, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("runscript: response: %w", err)
	}
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("runscript: response: %w", err)
	}
	if r.ErrorCode == "" && r.Status == "" {
		return nil, fmt.Errorf("runscript: not a script tool's response: neither status nor error_code")
	}
	return &r, nil
}
