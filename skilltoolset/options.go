package skilltoolset

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/tools/runscript"
)

// DefaultName is the toolset's name when WithName is not given.
const DefaultName = "adkskills"

// Option configures New. Options that receive an invalid value make New fail.
type Option func(*config) error

type config struct {
	name         string
	maxReadChars int
	inline       bool
	instruction  string
	tool         runscript.Config // what the script tools get
}

// WithCodeExecutor sets the executor that runs scripts. Without one, the
// script tools are not declared and the instruction says scripts cannot run.
// sandbox.New (codeexec/sandbox) isolates scripts; local.New
// (codeexec/local) runs them as plain host processes. The executor owns
// everything about how a script runs: its interpreter table decides which
// scripts run and which inline languages are offered, and its environment
// options what scripts see. New refuses an executor built with an invalid
// option (codeexec.ConfigError).
func WithCodeExecutor(e codeexec.Executor) Option {
	return func(c *config) error {
		if e == nil {
			return fmt.Errorf("WithCodeExecutor: the executor is nil")
		}
		c.tool.Executor = e
		return nil
	}
}

// WithMaxOutputChars caps stdout and stderr of a run, each, in characters
// (codeexec.Limits.MaxOutputChars; default codeexec.DefaultMaxOutputChars,
// 30,000; zero keeps the default, negative is an error). Longer output keeps
// its head and tail around a marker that counts what was cut. It is an
// operator control: the model cannot raise it.
func WithMaxOutputChars(n int) Option {
	return func(c *config) error {
		c.tool.Limits.MaxOutputChars = n
		return nil
	}
}

// WithMaxReadChars caps, in characters, the instructions load_skill
// answers and the content load_skill_resource answers (default
// DefaultMaxReadChars, 100,000; zero keeps the default, negative is an
// error). A longer SKILL.md or file keeps its head and tail around
// truncate's marker, the answer's warning says which characters were cut,
// and load_skill_resource's offset and length read them, at most this many
// at a time. It is an operator control: the model cannot raise it.
func WithMaxReadChars(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("WithMaxReadChars: %d is negative", n)
		}
		c.maxReadChars = n
		return nil
	}
}

// WithScriptTimeout sets the wall-clock limit of one run
// (codeexec.Limits.Timeout; default codeexec.DefaultTimeout, 2 minutes;
// zero keeps the default, negative is an error).
func WithScriptTimeout(d time.Duration) Option {
	return func(c *config) error {
		c.tool.Limits.Timeout = d
		return nil
	}
}

// WithInlineScripts declares run_skill_inline_script, which runs code the
// model writes after a human approves it through ADK's tool confirmation.
// Off by default; it needs a code executor.
func WithInlineScripts(enabled bool) Option {
	return func(c *config) error {
		c.inline = enabled
		return nil
	}
}

// WithName sets the toolset's name (default DefaultName).
func WithName(name string) Option {
	return func(c *config) error {
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("WithName: the name is empty")
		}
		c.name = name
		return nil
	}
}

// WithInstruction appends text to the system instruction the toolset gives
// the model (after the skill catalogue).
func WithInstruction(text string) Option {
	return func(c *config) error {
		c.instruction = text
		return nil
	}
}

// WithOutputLimits bounds the files one run may return as artifacts
// (codeexec.Limits.Output; zero fields keep the codeexec defaults: 100
// files, 32 MiB each, 128 MiB in all; negative is an error). Files over a
// limit are listed in the response's warning, not saved.
func WithOutputLimits(l codeexec.FileLimits) Option {
	return func(c *config) error {
		c.tool.Limits.Output = l
		return nil
	}
}

// WithInputLimits bounds the files a model passes into one run with
// input_files (runscript.Config.InputLimits; zero fields keep the output
// files' defaults: 100 files, 32 MiB each, 128 MiB in all; negative is an
// error). A call over a limit answers INVALID_ARGUMENTS, naming the entry,
// and runs nothing.
func WithInputLimits(l codeexec.FileLimits) Option {
	return func(c *config) error {
		c.tool.InputLimits = l
		return nil
	}
}

// WithStagingLimit bounds the bytes one run stages: the skill folder and
// the files passed in (codeexec.Limits.MaxSkillBytes; default
// codeexec.DefaultMaxSkillBytes, 256 MiB; zero keeps the default, negative
// is an error). A skill over it answers EXECUTION_ERROR and does not run.
func WithStagingLimit(bytes int64) Option {
	return func(c *config) error {
		c.tool.Limits.MaxSkillBytes = bytes
		return nil
	}
}

// WithLogger sets where details the model never sees go: host paths,
// executor failures, artifact save errors (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("WithLogger: the logger is nil")
		}
		c.tool.Logger = l
		return nil
	}
}
