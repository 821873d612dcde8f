package scriptrun

import (
	"fmt"
	"log/slog"

	"github.com/adkskills/adkskills/codeexec"
	"google.golang.org/adk/tool/skilltoolset/skill"
)

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
// executor with a configuration error. New calls it.
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
