package host

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"sync"

	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/adkskills/adkskills/codeexec/internal/deps"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/valid"
)

// Config is the configuration every host executor shares. The executors'
// options set it through its methods, which record an invalid value instead
// of failing: Err reports the first one.
type Config struct {
	interpreters codeexec.Interpreters // nil: DefaultInterpreters()
	workspaceDir string                // "": os.TempDir() at each Execute
	env          map[string]string     // added to the allowlist
	passEnv      []string              // host variables passed through when set
	waitDelay    time.Duration         // 0: DefaultWaitDelay
	cacheBytes   int64                 // 0: DefaultCacheBytes; <0: no snapshot cache
	errs         []error               // invalid option values

	// depsCfg configures the dependency store, made at the first run that
	// declares dependencies (deps, or why not in depsErr).
	depsCfg  deps.Config
	depsOnce sync.Once
	deps     *deps.Store
	depsErr  error

	// removals counts the workspaces of finished runs not yet removed
	// (see RemoveLater).
	removals sync.WaitGroup
}

// defaultPassEnv are the host variables every run sees when they are set:
// they locate interpreters (a pyenv shim left unresolved still works) and
// carry no secrets.
var defaultPassEnv = []string{"PYENV_ROOT", "PYENV_VERSION"}

// Invalid records an invalid option value.
func (c *Config) Invalid(err error) { c.errs = append(c.errs, err) }

// SetInterpreters replaces the interpreter table with a copy of t (nil
// restores the default); an invalid table is recorded.
func (c *Config) SetInterpreters(t codeexec.Interpreters) {
	t = t.Clone()
	if err := t.Validate(); err != nil {
		c.Invalid(fmt.Errorf("WithInterpreters: %w", err))
	}
	c.interpreters = t
}

// SetWorkspaceDir sets the parent of the run workspaces; it must be absolute.
func (c *Config) SetWorkspaceDir(dir string) {
	if !filepath.IsAbs(dir) {
		c.Invalid(fmt.Errorf("WithWorkspaceDir(%q): not an absolute path", dir))
	}
	c.workspaceDir = dir
}

// AddEnv adds variables to every run's environment; a later value wins.
func (c *Config) AddEnv(env map[string]string) {
	for k, v := range env {
		if err := valid.Env(k, v); err != nil {
			c.Invalid(fmt.Errorf("WithEnv: %w", err))
		}
	}
	if c.env == nil {
		c.env = map[string]string{}
	}
	maps.Copy(c.env, env)
}

// AddPassEnv names host variables passed through to every run when set.
func (c *Config) AddPassEnv(names ...string) {
	for _, n := range names {
		if err := valid.Env(n, ""); err != nil {
			c.Invalid(fmt.Errorf("WithPassEnv: %w", err))
		}
	}
	c.passEnv = append(c.passEnv, names...)
}

// SetWaitDelay sets the WaitDelay (zero: the default; negative is invalid).
func (c *Config) SetWaitDelay(d time.Duration) {
	if d < 0 {
		c.Invalid(fmt.Errorf("WithWaitDelay(%v): negative", d))
	}
	c.waitDelay = d
}

// SetSnapshotCache bounds the snapshot cache in bytes (zero: the default;
// negative: no cache).
func (c *Config) SetSnapshotCache(bytes int64) { c.cacheBytes = bytes }

// SetDependencies sets how declared dependencies are met: install them (on,
// the default) or only find them (off: a missing one is an error).
func (c *Config) SetDependencies(on bool) { c.depsCfg.NoInstall = !on }

// SetDependencyStore sets where dependency environments live (an absolute
// directory; "" keeps the default) and how many bytes of them are kept
// (zero keeps the default).
func (c *Config) SetDependencyStore(dir string, maxBytes int64) {
	if dir != "" && !filepath.IsAbs(dir) {
		c.Invalid(fmt.Errorf("WithDependencyStore(%q): not an absolute path", dir))
	}
	if maxBytes < 0 {
		c.Invalid(fmt.Errorf("WithDependencyStore: %d bytes: negative", maxBytes))
	}
	c.depsCfg.Dir, c.depsCfg.MaxBytes = dir, maxBytes
}

// SetSourceBuilds lets pip build packages from source (running their build
// code) when no wheel fits.
func (c *Config) SetSourceBuilds(on bool) { c.depsCfg.AllowSourceBuilds = on }

// dependencies resolves the environment the staged skill's script needs
// when in (an absolute host path) runs it; nil when it declares nothing.
// Errors wrap codeexec.ErrDependencies with a message for the model.
func (c *Config) dependencies(ctx context.Context, skill fs.FS, script, language, in string) (*deps.Env, error) {
	c.depsOnce.Do(func() { c.deps, c.depsErr = deps.New(c.depsCfg) })
	if c.depsErr != nil {
		if d, err := deps.Declared(skill, script, language); err == nil && d == nil {
			return nil, nil // nothing declared: no store needed
		}
		// The first line is for the model; the cause, with host paths, for
		// the agent's log.
		return nil, errors.Join(fmt.Errorf("%w: the agent's dependency store cannot be used (details in the agent's log)", codeexec.ErrDependencies), c.depsErr)
	}
	env, err := c.deps.Resolve(ctx, skill, script, deps.Interpreter{Language: language, Path: in})
	var ie *deps.InstallError
	switch {
	case err == nil:
		return env, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &ie):
		return nil, fmt.Errorf("%w: %s could not install %s: %s", codeexec.ErrDependencies, ie.Tool, strings.Join(ie.Packages, ", "), ie.Reason)
	}
	return nil, fmt.Errorf("%w: %w", codeexec.ErrDependencies, err)
}

// Err reports the first invalid option value, wrapping ErrInvalidConfig.
func (c *Config) Err() error {
	if len(c.errs) > 0 {
		return fmt.Errorf("%w: %w", codeexec.ErrInvalidConfig, c.errs[0])
	}
	return nil
}

// Interpreters returns a copy of the table runs use.
func (c *Config) Interpreters() codeexec.Interpreters {
	if c.interpreters == nil {
		return codeexec.DefaultInterpreters()
	}
	return c.interpreters.Clone()
}

// WorkspaceParent is the directory workspaces are created in.
func (c *Config) WorkspaceParent() string {
	if c.workspaceDir != "" {
		return filepath.Clean(c.workspaceDir)
	}
	return filepath.Clean(os.TempDir())
}

// cache returns the snapshot cache a run staged with mode uses, or nil for
// none (turned off, or the cache directory cannot be used: the run copies).
func (c *Config) cache(mode StageMode) *cache {
	if mode == StageCopy || c.cacheBytes < 0 {
		return nil
	}
	limit := c.cacheBytes
	if limit == 0 {
		limit = DefaultCacheBytes
	}
	sc, err := cacheFor(c.WorkspaceParent(), mode == StageLink, limit)
	if err != nil {
		return nil
	}
	return sc
}

// InterpreterFor chooses req's interpreter (Interpreters.ForRequest).
func (c *Config) InterpreterFor(req *codeexec.Request) (codeexec.Interpreter, error) {
	if c.interpreters == nil {
		return codeexec.DefaultInterpreters().ForRequest(req)
	}
	return c.interpreters.ForRequest(req)
}

// waitDelay is the WaitDelay of a run.
func (c *Config) waitDelayOrDefault() time.Duration {
	if c.waitDelay > 0 {
		return c.waitDelay
	}
	return codeexec.DefaultWaitDelay
}

// Env returns a copy of the variables WithEnv added.
func (c *Config) Env() map[string]string { return maps.Clone(c.env) }

// EnvLayers returns the operator's environment layers, lowest precedence
// first: the host variables passed through (read now), then WithEnv's.
func (c *Config) EnvLayers() []map[string]string {
	return []map[string]string{c.passed(), c.env}
}

// passed returns the host variables passed through, read now.
func (c *Config) passed() map[string]string {
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
