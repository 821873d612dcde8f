package codeexec

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/adkskills/adkskills/internal/valid"
)

// LocalOption configures a [Local].
type LocalOption interface {
	applyLocal(*Local)
}

// Option configures what every host executor shares. An Option is a
// [LocalOption] (and a SandboxOption).
type Option func(*config)

func (o Option) applyLocal(l *Local) { o(&l.cfg) }

// config is the configuration every host executor shares.
type config struct {
	interpreters Interpreters      // nil: DefaultInterpreters()
	workspaceDir string            // "": os.TempDir() at each Execute
	env          map[string]string // added to the allowlist
	passEnv      []string          // host variables passed through when set
	waitDelay    time.Duration     // 0: DefaultWaitDelay
	cacheBytes   int64             // 0: DefaultCacheBytes; <0: no snapshot cache
	errs         []error           // invalid option values, reported by Err and Execute
}

// defaultPassEnv are the host variables every run sees when they are set:
// they locate interpreters (a pyenv shim left unresolved still works) and
// carry no secrets.
var defaultPassEnv = []string{"PYENV_ROOT", "PYENV_VERSION"}

// WithInterpreters replaces the interpreter table (default
// [DefaultInterpreters]; nil restores it). The table is copied; an invalid
// table (see [Interpreters.Validate]) is a configuration error
// ([ErrInvalidConfig]).
func WithInterpreters(t Interpreters) Option {
	t = t.Clone()
	return func(c *config) {
		if err := t.Validate(); err != nil {
			c.errs = append(c.errs, fmt.Errorf("WithInterpreters: %w", err))
		}
		c.interpreters = t
	}
}

// WithWorkspaceDir sets the directory in which each run creates its private
// workspace (default [os.TempDir] at each Execute). It must be an absolute
// path to an existing directory; a relative one is invalid, so a run never
// lands in the process working directory.
func WithWorkspaceDir(dir string) Option {
	return func(c *config) {
		if !filepath.IsAbs(dir) {
			c.errs = append(c.errs, fmt.Errorf("WithWorkspaceDir(%q): not an absolute path", dir))
		}
		c.workspaceDir = dir
	}
}

// WithEnv adds variables to every run's environment, above the allowlist
// and the host variables passed through, below [Request.Env]. Use it for
// what the operator wants every script to see (a proxy, an API key meant
// for scripts). Calls accumulate; a later value for a name wins.
func WithEnv(env map[string]string) Option {
	return func(c *config) {
		for k, v := range env {
			if err := valid.Env(k, v); err != nil {
				c.errs = append(c.errs, fmt.Errorf("WithEnv: %w", err))
			}
		}
		if c.env == nil {
			c.env = map[string]string{}
		}
		maps.Copy(c.env, env)
	}
}

// WithPassEnv passes the named host variables through to every run when
// they are set in the agent's process at Execute time, in addition to the
// allowlist (PYENV_ROOT and PYENV_VERSION are always passed). Calls
// accumulate.
func WithPassEnv(names ...string) Option {
	return func(c *config) {
		for _, n := range names {
			if err := valid.Env(n, ""); err != nil {
				c.errs = append(c.errs, fmt.Errorf("WithPassEnv: %w", err))
			}
		}
		c.passEnv = append(c.passEnv, names...)
	}
}

// WithWaitDelay bounds how long a process that escaped the script's process
// group (setsid) can hold a finished run open through an inherited stdout or
// stderr (default [DefaultWaitDelay]). After the script exits and its group
// is killed, the executor reads its output to the end however long that
// takes while no other process holds the pipes; a pipe an escapee holds is
// closed once it has stayed empty for the WaitDelay, or after 20 times the
// WaitDelay if the escapee keeps writing. Zero means the default; negative
// is invalid.
func WithWaitDelay(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithWaitDelay(%v): negative", d))
		}
		c.waitDelay = d
	}
}

// WithSnapshotCache bounds the snapshot cache (see the package
// documentation of staging at scale in cache.go: prepared copies of skill
// folders kept beside the workspaces, so that a run's cost does not grow
// with its skill's size), in bytes; default [DefaultCacheBytes]. Negative
// turns the cache off: every run then copies its skill folder.
func WithSnapshotCache(bytes int64) Option {
	return func(c *config) { c.cacheBytes = bytes }
}

// cache returns the snapshot cache a run staged with mode uses, or nil for
// none (turned off, or the cache directory cannot be used: the run copies).
func (c *config) cache(mode stageMode) *cache {
	if mode == stageCopy || c.cacheBytes < 0 {
		return nil
	}
	limit := c.cacheBytes
	if limit == 0 {
		limit = DefaultCacheBytes
	}
	sc, err := cacheFor(c.workspaceParent(), mode == stageLink, limit)
	if err != nil {
		return nil
	}
	return sc
}

// err reports the first invalid option value, wrapping ErrInvalidConfig.
func (c *config) err() error {
	if len(c.errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, c.errs[0])
	}
	return nil
}

// interpreterFor chooses req's interpreter (Interpreters.ForRequest).
func (c *config) interpreterFor(req *Request) (Interpreter, error) {
	if c.interpreters == nil {
		return DefaultInterpreters().ForRequest(req)
	}
	return c.interpreters.ForRequest(req)
}

// workspaceParent is the directory workspaces are created in.
func (c *config) workspaceParent() string {
	if c.workspaceDir != "" {
		return c.workspaceDir
	}
	return os.TempDir()
}

// waitDelayOrDefault is the WaitDelay of a run.
func (c *config) waitDelayOrDefault() time.Duration {
	if c.waitDelay > 0 {
		return c.waitDelay
	}
	return DefaultWaitDelay
}

// passed returns the host variables passed through, read now.
func (c *config) passed() map[string]string {
	m := map[string]string{}
	for _, names := range [][]string{defaultPassEnv, c.passEnv} {
		for _, n := range names {
			if v, ok := os.LookupEnv(n); ok {
				m[n] = v
			}
		}
	}
	return m
}

// Clone returns a deep copy of t (nil stays nil), so that later edits of
// one do not reach the other.
func (t Interpreters) Clone() Interpreters {
	if t == nil {
		return nil
	}
	out := make(Interpreters, len(t))
	for i, in := range t {
		in.Extensions = append([]string(nil), in.Extensions...)
		in.Command = append([]string(nil), in.Command...)
		out[i] = in
	}
	return out
}
