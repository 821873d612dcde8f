package skilltoolset

import (
	"fmt"
	"log/slog"
	"maps"
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
	name        string
	inline      bool
	instruction string
	tool        runscript.Config // what the script tools get
}

// WithCodeExecutor sets the executor that runs scripts. Without one, the
// script tools are not declared and the instruction says scripts cannot run.
// codeexec.NewSandbox isolates scripts; codeexec.NewLocal runs them as plain
// host processes. The executor's interpreter table (codeexec.WithInterpreters)
// decides which scripts run and which inline languages are offered.
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
// (default codeexec.DefaultMaxOutputChars, 30,000). Longer output keeps its
// head and tail around a marker that counts what was cut. It must be
// positive. It is an operator control: the model cannot raise it.
func WithMaxOutputChars(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxOutputChars: %d is not a positive number of characters", n)
		}
		c.tool.MaxOutputChars = n
		return nil
	}
}

// WithScriptTimeout sets the wall-clock limit of one run (default
// codeexec.DefaultTimeout, 2 minutes). It must be positive.
func WithScriptTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithScriptTimeout: %v is not a positive duration", d)
		}
		c.tool.Timeout = d
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

// WithEnv adds variables to every script's environment. The agent process's
// own environment never reaches scripts, so this is how an operator passes a
// credential a skill needs. Names must be non-empty, without '=' or NUL.
func WithEnv(env map[string]string) Option {
	return func(c *config) error {
		for k, v := range env {
			if err := codeexec.CheckEnv(k, v); err != nil {
				return fmt.Errorf("WithEnv: %w", err)
			}
		}
		if c.tool.Env == nil {
			c.tool.Env = map[string]string{}
		}
		maps.Copy(c.tool.Env, env)
		return nil
	}
}

// WithOutputLimits bounds the files one run may return as artifacts (zero
// fields keep the codeexec defaults: 100 files, 32 MiB each, 128 MiB in all).
// Files over a limit are listed in the response's warning, not saved.
func WithOutputLimits(l codeexec.OutputLimits) Option {
	return func(c *config) error {
		if l.MaxFiles < 0 || l.MaxFileBytes < 0 || l.MaxTotalBytes < 0 {
			return fmt.Errorf("WithOutputLimits: negative limit in %+v", l)
		}
		c.tool.OutputLimits = l
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
