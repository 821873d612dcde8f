package codeexec

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adkskills/adkskills/internal/valid"
)

// DefaultSkillName is the name of the staged folder of a Request that sets
// no SkillName.
const DefaultSkillName = "skill"

// maxSkillNameBytes bounds Request.SkillName (a single file-name component).
const maxSkillNameBytes = 255

// Request is one script run.
type Request struct {
	// Skill is the skill folder to stage, read lazily: an executor opens
	// each file as it stages it (byte for byte, binary included) and never
	// holds the folder in memory. Paths are relative to the skill root.
	// Only directories and regular files are staged; symbolic links and
	// other types are skipped. Nil means an empty folder.
	Skill fs.FS
	// SkillName names the staged folder: the script's working directory is
	// a folder of this name, so a script that packs "." sees the skill's
	// own name. It is one path element, not "." or "..", and does not start
	// with "."; empty means DefaultSkillName.
	SkillName string
	// Files are staged over Skill before the run: the session's input files,
	// an inline script. A path that Skill also has makes the request
	// invalid: an extra file never replaces a file of the skill. The host
	// executors stage Data as is, so a file declaring EncodingBase64 is an
	// invalid request (decode it first).
	Files []File
	// Script is the entry point, relative to the skill root
	// ("scripts/x.py"); it must be a file of Skill or of Files.
	Script string
	// Interpreter runs Script. Nil: the executor chooses by Script's
	// extension, else its #! line, from its interpreter table
	// (Interpreters.ForFile).
	Interpreter *Interpreter
	// Args are passed as argv after the script path, never through a shell.
	Args []string
	// Stdin is the script's standard input. Nil: an empty stdin.
	Stdin []byte
	// Env is added to the script's allowlisted environment (and wins over
	// it). It is the script's alone: the executor finds and inspects the
	// interpreter with its own environment (the host's PATH, WithEnv,
	// WithPassEnv), so a PATH or PYENV_VERSION here does not choose which
	// host program runs, and a sandbox starts its helpers without it.
	Env map[string]string
	// Limits bound the run.
	Limits Limits
}

// Limits bound one run. A zero field means its Default constant; a negative
// one is invalid. They are the operator's: a model never sets them.
type Limits struct {
	// Timeout is the wall-clock limit (DefaultTimeout).
	Timeout time.Duration
	// MaxOutputChars caps stdout and stderr each, in characters
	// (DefaultMaxOutputChars).
	MaxOutputChars int
	// Output bounds the files a run returns.
	Output FileLimits
	// MaxSkillBytes bounds the bytes staged for the run: the skill folder
	// and the extra files together (DefaultMaxSkillBytes).
	MaxSkillBytes int64
}

// FileLimits bounds a set of files: how many, how large each, how large in
// all. A zero field means its default (for output files,
// DefaultMaxOutputFiles, DefaultMaxOutputFileBytes,
// DefaultMaxOutputTotalBytes).
type FileLimits struct {
	MaxFiles      int
	MaxFileBytes  int64
	MaxTotalBytes int64
}

// Validate reports a negative limit.
func (l Limits) Validate() error {
	switch {
	case l.Timeout < 0:
		return fmt.Errorf("negative timeout %v", l.Timeout)
	case l.MaxOutputChars < 0:
		return fmt.Errorf("negative output cap %d", l.MaxOutputChars)
	case l.MaxSkillBytes < 0:
		return fmt.Errorf("negative staging limit %d", l.MaxSkillBytes)
	}
	return l.Output.Validate()
}

// Validate reports a negative limit.
func (l FileLimits) Validate() error {
	if l.MaxFiles < 0 || l.MaxFileBytes < 0 || l.MaxTotalBytes < 0 {
		return fmt.Errorf("negative file limit %+v", l)
	}
	return nil
}

// WithDefaults returns l with every zero field replaced by its Default.
func (l Limits) WithDefaults() Limits {
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxOutputChars == 0 {
		l.MaxOutputChars = DefaultMaxOutputChars
	}
	if l.MaxSkillBytes == 0 {
		l.MaxSkillBytes = DefaultMaxSkillBytes
	}
	l.Output = l.Output.WithDefaults(FileLimits{
		MaxFiles:      DefaultMaxOutputFiles,
		MaxFileBytes:  DefaultMaxOutputFileBytes,
		MaxTotalBytes: DefaultMaxOutputTotalBytes,
	})
	return l
}

// WithDefaults returns l with every zero field replaced by def's.
func (l FileLimits) WithDefaults(def FileLimits) FileLimits {
	if l.MaxFiles == 0 {
		l.MaxFiles = def.MaxFiles
	}
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = def.MaxFileBytes
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = def.MaxTotalBytes
	}
	return l
}

// Validate reports the first malformed part of r that can be seen without
// reading r.Skill, wrapping ErrInvalidRequest: a nil request; a skill name
// that is not one plain path element; an extra file whose path is empty,
// absolute, not clean, has a ".." element, a backslash or a NUL, or that is
// named twice or is both a file and a directory; content in an encoding
// host executors do not stage; a script path of the same kind; an argument
// or environment variable a process cannot carry; a negative limit.
// Executors call it first; staging then checks what only the skill folder
// can tell (the script is there, no extra file replaces a skill file).
func (r *Request) Validate() error {
	if r == nil {
		return fmt.Errorf("%w: nil request", ErrInvalidRequest)
	}
	if err := checkSkillName(r.SkillName); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	files := make(map[string]bool, len(r.Files))
	dirs := map[string]bool{}
	for _, f := range r.Files {
		if err := valid.FilePath(f.Path); err != nil {
			return fmt.Errorf("%w: file: %w", ErrInvalidRequest, err)
		}
		if files[f.Path] {
			return fmt.Errorf("%w: file %q named twice", ErrInvalidRequest, f.Path)
		}
		if dirs[f.Path] {
			return fmt.Errorf("%w: %q is both a file and a directory", ErrInvalidRequest, f.Path)
		}
		files[f.Path] = true
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if files[d] {
				return fmt.Errorf("%w: %q is both a file and a directory", ErrInvalidRequest, d)
			}
			dirs[d] = true
		}
		switch f.Encoding {
		case EncodingRaw, EncodingUTF8:
		default:
			return fmt.Errorf("%w: file %q: encoding %q: host executors stage raw bytes (decode it first)", ErrInvalidRequest, f.Path, f.Encoding)
		}
		if f.Mode&^fs.ModePerm != 0 {
			return fmt.Errorf("%w: file %q: mode %v: only permission bits may be set", ErrInvalidRequest, f.Path, f.Mode)
		}
	}
	if err := valid.FilePath(r.Script); err != nil {
		return fmt.Errorf("%w: script: %w", ErrInvalidRequest, err)
	}
	if r.Skill == nil && !files[r.Script] {
		return fmt.Errorf("%w: script %q is not among the request's files", ErrInvalidRequest, r.Script)
	}
	for i, a := range r.Args {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("%w: argument %d contains NUL", ErrInvalidRequest, i)
		}
	}
	for k, v := range r.Env {
		if err := valid.Env(k, v); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
		}
	}
	if err := r.Limits.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return nil
}

// checkSkillName reports why name cannot name the staged folder. Names that
// start with "." are refused so that no skill can take the workspace's own
// folders (.home, .tmp).
func checkSkillName(name string) error {
	switch {
	case name == "":
		return nil
	case len(name) > maxSkillNameBytes:
		return fmt.Errorf("skill name of %d bytes: at most %d", len(name), maxSkillNameBytes)
	case !utf8.ValidString(name) || strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("skill name %q must be valid UTF-8 without '/', '\\' or NUL", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("skill name %q must not start with '.'", name)
	}
	return nil
}
