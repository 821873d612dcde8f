// Package codeexec defines how adkskills runs a skill's script: the
// [Executor] contract, the request and result it exchanges, the interpreter
// table, and two executors: [Local], a plain host subprocess, and [Sandbox],
// the same pipeline isolated with bubblewrap.
//
// Data flows one way: a tool builds a [Request] (the files of the skill
// folder, the entry point, argv, stdin), an Executor stages the files in a
// fresh private workspace, runs the script with bounded streaming capture of
// its output, collects the files the run wrote, removes the workspace, and
// returns a [Result]. Nothing in a Result points back into the workspace.
package codeexec

import (
	"context"
	"errors"
	"io/fs"
	"time"
)

// Executor runs one script request. Implementations must be safe for
// concurrent use: each Execute gets its own workspace.
//
// A script that runs and fails is not an error: Execute returns a Result with
// a non-zero ExitCode (or TimedOut). Errors are for requests that could not be
// run at all; callers branch on them with errors.Is and the sentinels below.
type Executor interface {
	Execute(ctx context.Context, req *Request) (*Result, error)
}

// Defaults used when a Request leaves a limit at its zero value.
const (
	// DefaultMaxOutputChars caps each of stdout and stderr, in characters.
	DefaultMaxOutputChars = 30_000
	// DefaultTimeout is the wall-clock limit of one run.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxOutputFiles is how many output files one run may return.
	DefaultMaxOutputFiles = 100
	// DefaultMaxOutputFileBytes is the largest single output file returned.
	DefaultMaxOutputFileBytes = 32 << 20
	// DefaultMaxOutputTotalBytes bounds the bytes of all output files of a run.
	DefaultMaxOutputTotalBytes = 128 << 20
	// DefaultWaitDelay bounds how long a process that left the script's
	// process group (setsid) can keep a finished run open by holding its
	// output pipes. See WithWaitDelay.
	DefaultWaitDelay = 500 * time.Millisecond
)

// Sentinel errors returned (wrapped) by executors.
var (
	// ErrInvalidRequest: the request itself is malformed (a file path that
	// escapes the skill root, a script that is not among the files, a nil
	// request), or an option the executor was built with is invalid (the
	// constructors do not fail; Execute reports it).
	ErrInvalidRequest = errors.New("codeexec: invalid request")
	// ErrUnsupportedScript: no interpreter is configured for the script's
	// extension or the requested language.
	ErrUnsupportedScript = errors.New("codeexec: unsupported script type")
	// ErrWorkspace: the private workspace could not be created or staged.
	ErrWorkspace = errors.New("codeexec: workspace")
	// ErrStart: the interpreter could not be found or started.
	ErrStart = errors.New("codeexec: start")
	// ErrSandboxUnavailable: the sandbox cannot isolate on this machine;
	// the run did not happen (a Sandbox never falls back to running
	// unsandboxed).
	ErrSandboxUnavailable = errors.New("codeexec: sandbox unavailable")
)

// Encodings a File may declare for its Data.
const (
	// EncodingRaw (the zero value): Data holds the file's bytes.
	EncodingRaw = ""
	// EncodingUTF8: Data holds the bytes of UTF-8 text, taken as is.
	EncodingUTF8 = "utf-8"
	// EncodingBase64: Data holds standard base64 of the file's bytes (remote
	// executors that return files inside JSON use this).
	EncodingBase64 = "base64"
)

// File is one file of a skill folder (in a Request) or one file a run wrote
// (in a Result).
type File struct {
	// Path is relative to the skill root, with "/" separators, e.g.
	// "scripts/report.py" or "dist/report.zip". Never absolute, never "..".
	Path string
	// Data is the content, in the declared Encoding.
	Data []byte
	// Encoding declares how Data is encoded: EncodingRaw, EncodingUTF8 or
	// EncodingBase64. Local and Sandbox always return raw bytes.
	Encoding string
	// Mode holds the permission bits to stage the file with. Zero means
	// 0o644 (0o755 for the request's Script).
	Mode fs.FileMode
}

// OmittedFile is an output file the run wrote that the Result leaves out,
// with the reason (a limit, a symlink, an unreadable entry).
//
// Result.Omitted lists at most a thousand entries; when a run leaves out
// more, one last entry with an empty Path counts the rest in its Reason and
// sums their Size.
type OmittedFile struct {
	Path   string
	Size   int64
	Reason string
}

// OutputLimits bounds the output files one run returns. A zero field means
// its Default constant.
type OutputLimits struct {
	MaxFiles      int
	MaxFileBytes  int64
	MaxTotalBytes int64
}

// Request is one script run.
type Request struct {
	// Files is the skill folder to stage, byte for byte (binary included).
	// Local and Sandbox stage Data as is: a file declaring EncodingBase64
	// is an invalid request (decode it first).
	Files []File
	// Script is the entry point, relative to the skill root ("scripts/x.py");
	// it must be one of Files.
	Script string
	// Interpreter runs Script. Nil: the executor chooses by Script's
	// extension from its interpreter table.
	Interpreter *Interpreter
	// Args are passed as argv after the script path, never through a shell.
	Args []string
	// Stdin is the script's standard input. Nil: an empty stdin.
	Stdin []byte
	// Env is added to the allowlisted environment (and wins over it).
	Env map[string]string
	// Timeout is the wall-clock limit; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxOutputChars caps stdout and stderr each, in characters; zero or
	// negative means DefaultMaxOutputChars.
	MaxOutputChars int
	// Limits bounds the output files returned.
	Limits OutputLimits
}

// Stream is one captured output stream, already capped.
type Stream struct {
	// Text is the kept content: the whole stream when it fit, else head and
	// tail around the truncation marker. Always valid UTF-8.
	Text string
	// TotalChars counts every character the stream produced.
	TotalChars int64
	// Truncated reports whether Text is elided.
	Truncated bool
}

// Result is what one run produced.
type Result struct {
	// ExitCode is the process exit code; a death by signal n is 128+n, as
	// shells report it.
	ExitCode int
	// TimedOut reports that the run hit its time limit (or the context was
	// cancelled) and its process tree was killed.
	TimedOut bool
	// Duration is the wall-clock time of the run.
	Duration time.Duration
	// Stdout and Stderr are the capped streams.
	Stdout, Stderr Stream
	// Files are the regular files the run created or modified under the
	// skill root, sorted by Path, with raw bytes.
	Files []File
	// Omitted are the files the run wrote that Files leaves out, and why.
	Omitted []OmittedFile
}
