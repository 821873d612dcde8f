// Package codeexec is the contract between adkskills' tools and the
// executors that run a skill's script: the [Executor] interface, the
// [Request] and [Result] it exchanges, the limits, the sentinel errors and
// the interpreter table. It touches no ADK: both ADK majors use this very
// module.
//
// A tool builds a Request (the skill folder as an fs.FS, extra files, the
// entry point, argv, stdin, limits); an executor stages the folder in a
// fresh private workspace, runs the script with bounded output, collects
// the files the run created or changed, removes the workspace, and returns
// a Result. Nothing in a Result points back into the workspace.
//
// The executors are packages of their own: codeexec/local (a host
// subprocess), codeexec/sandbox (bubblewrap) and codeexec/agentsandbox
// (Kubernetes pods). Every executor, a third party's included, proves it
// keeps the contract with the suite in codeexec/codeexectest.
package codeexec

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/adkskills/adkskills/internal/encoding"
)

// Executor runs one script request. Implementations must be safe for
// concurrent use: each Execute gets its own workspace.
//
// A script that runs and fails is not an error: Execute returns a Result with
// a non-zero ExitCode (or TimedOut). Errors are for requests that could not be
// run at all; callers branch on them with errors.Is and the sentinels below.
//
// An executor whose construction can go wrong reports it from an
// Err() error method; see [ConfigError]. One that runs a table of
// interpreters reports it from an Interpreters() method; see
// [InterpretersOf].
type Executor interface {
	Execute(ctx context.Context, req *Request) (*Result, error)
}

// ConfigError returns e's configuration error: the result of its Err()
// method when it has one, else nil. skilltoolset.New refuses an executor
// whose ConfigError is not nil.
func ConfigError(e Executor) error {
	if c, ok := e.(interface{ Err() error }); ok {
		return c.Err()
	}
	return nil
}

// Defaults used when a Request's [Limits] leave a field at its zero value.
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
	// DefaultMaxSkillBytes bounds the bytes a run stages: the skill folder
	// and the request's extra files.
	DefaultMaxSkillBytes = 256 << 20
	// DefaultWaitDelay bounds how long a process that left the script's
	// process group (setsid) can keep a finished run open by holding its
	// output pipes.
	DefaultWaitDelay = 500 * time.Millisecond
)

// Sentinel errors returned (wrapped) by executors.
var (
	// ErrInvalidRequest: the request itself is malformed (a file path that
	// escapes the skill root, a script that is not among the files, an
	// extra file that would replace one of the skill's, a nil request).
	ErrInvalidRequest = errors.New("codeexec: invalid request")
	// ErrTooLarge: the skill folder and the request's files are over the
	// staging limit (Limits.MaxSkillBytes). It comes wrapped with
	// ErrInvalidRequest, and the script does not run.
	ErrTooLarge = errors.New("codeexec: over the staging limit")
	// ErrDependencies: the script's declared dependencies (a PEP 723
	// block, a requirements.txt, a package.json) are malformed, refused or
	// cannot be installed; the error names the packages and why, and the
	// script does not run.
	ErrDependencies = errors.New("codeexec: dependencies unavailable")
	// ErrInvalidConfig: the executor was built with an invalid option value.
	// Its Err method and every Execute report it.
	ErrInvalidConfig = errors.New("codeexec: invalid configuration")
	// ErrUnsupportedScript: no interpreter is configured for the script's
	// extension or the requested language.
	ErrUnsupportedScript = errors.New("codeexec: unsupported script type")
	// ErrWorkspace: the private workspace could not be created or staged.
	ErrWorkspace = errors.New("codeexec: workspace")
	// ErrStart: the interpreter could not be found or started, or this
	// platform cannot run scripts with this executor.
	ErrStart = errors.New("codeexec: start")
	// ErrSandboxUnavailable: the sandbox cannot isolate on this machine;
	// the run did not happen (a sandbox never falls back to running
	// unsandboxed).
	ErrSandboxUnavailable = errors.New("codeexec: sandbox unavailable")
)

// Encodings a File may declare for its Data.
const (
	// EncodingRaw (the zero value): Data holds the file's bytes.
	EncodingRaw = encoding.Raw
	// EncodingUTF8: Data holds the bytes of UTF-8 text, taken as is.
	EncodingUTF8 = encoding.UTF8
	// EncodingBase64: Data holds standard base64 of the file's bytes (remote
	// executors that return files inside JSON use this).
	EncodingBase64 = encoding.Base64
)

// File is one file held in memory: an extra file of a Request (an input, an
// inline script) or one file a run wrote (in a Result).
type File struct {
	// Path is relative to the skill root, with "/" separators, e.g.
	// "scripts/report.py" or "dist/report.zip". Never absolute, never "..".
	Path string
	// Data is the content, in the declared Encoding.
	Data []byte
	// Encoding declares how Data is encoded: EncodingRaw, EncodingUTF8 or
	// EncodingBase64. The host executors always return raw bytes.
	Encoding string
	// Mode holds the permission bits to stage the file with. Zero means
	// 0o644 (0o755 for the request's Script).
	Mode fs.FileMode
}

// OmittedFile is an output file the run wrote that the Result leaves out,
// with the reason (a limit, a symlink, an unreadable entry). Reasons never
// name a host path.
//
// Result.Omitted lists at most a thousand entries; when a run leaves out
// more, one last entry with an empty Path counts the rest in its Reason and
// sums their Size. An entry with Path "." concerns the skill root itself (a
// script that replaced its working directory: nothing of it is returned).
type OmittedFile struct {
	Path   string
	Size   int64
	Reason string
}

// Stream is one captured output stream, already capped.
type Stream struct {
	// Text is the kept content: the whole stream when it fit, else head and
	// tail around the truncation marker. Always valid UTF-8.
	Text string
	// TotalChars counts every character the stream produced.
	TotalChars int64
	// TotalBytes counts every byte the stream produced.
	TotalBytes int64
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
	// OutOfMemory reports that the run reached its memory bound and the
	// kernel killed a process of it.
	OutOfMemory bool
	// Note says, in a sentence for the model, what the executor knows of
	// how the run ended that its streams do not say: that it ended the run
	// ("out of memory: the run used its 512 MiB"), or that the script
	// failed on a module nothing installed; empty otherwise.
	Note string
	// Warnings are what the executor noticed about the run that the model
	// should see beside its output, one sentence each: the hosts the
	// sandbox's network refused (see codeexec/sandbox.WithEgress).
	Warnings []string
	// Duration is the wall-clock time of the run.
	Duration time.Duration
	// Stdout and Stderr are the capped streams.
	Stdout, Stderr Stream
	// Files are the regular files the run created or modified under the
	// skill root, sorted by Path, with raw bytes. Files of the request
	// (the skill's and the extra ones) that the run left unchanged are not
	// among them.
	Files []File
	// Omitted are the files the run wrote that Files leaves out, and why.
	Omitted []OmittedFile
	// Deleted are the paths of the request's extra files (Request.Files)
	// that are no longer regular files when the run ends, sorted: deleted,
	// renamed or moved away, or replaced by a folder, a symbolic link or
	// anything else (what took the place is reported as any other entry).
	// A renamed or moved file is thus a path here and a new one in Files.
	// Files of Skill a run deletes are not listed: every run starts from
	// the skill's own files. Nothing is listed when the skill root itself
	// was replaced (see Omitted), nor a path the executor could not look
	// at (an unreadable folder, a collection that stopped early).
	Deleted []string
}
