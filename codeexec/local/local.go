// Package local runs skill scripts as plain subprocesses of the host, through
// the host pipeline every executor shares: a fresh private workspace per run,
// an allowlisted environment, bounded output, the whole process group killed
// on timeout, and output files read without following links.
//
// Local provides NO ISOLATION: a script runs with the agent's own user, files
// and network, and can read anything the agent can (a non-root agent makes
// itself undumpable, so not its environment or memory through /proc). Use
// it for code you trust; use codeexec/sandbox for code you do not.
// docs/security.md says more.
package local

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// Executor runs scripts as host subprocesses. It is safe for concurrent use;
// its configuration is fixed by [New].
type Executor struct {
	cfg    host.Config
	memory int64 // WithMemoryLimit; 0: none
	procs  int   // WithProcessLimit; 0: none
	// dumpable: WithDumpableAgent
	dumpable bool
}

// New returns an Executor configured by opts. It does not fail and does not
// touch the system: an invalid option is reported by [Executor.Err] and by
// every Execute, wrapping [codeexec.ErrInvalidConfig].
//
// Local runs scripts on Linux, macOS and the BSDs. On Windows, Execute
// returns an error wrapping [codeexec.ErrStart]: there is no process-group
// kill, so a timeout could not stop a script's children.
func New(opts ...Option) *Executor {
	l := &Executor{}
	for _, o := range opts {
		if o != nil {
			o(l)
		}
	}
	return l
}

// Option configures an [Executor].
type Option func(*Executor)

// WithInterpreters replaces the interpreter table (default
// [codeexec.DefaultInterpreters]; nil restores it); the table is copied.
func WithInterpreters(t codeexec.Interpreters) Option {
	return func(l *Executor) { l.cfg.SetInterpreters(t) }
}

// WithWorkspaceDir sets the absolute path of an existing directory in which
// each run creates its private workspace (default [os.TempDir]).
func WithWorkspaceDir(dir string) Option {
	return func(l *Executor) { l.cfg.SetWorkspaceDir(dir) }
}

// WithEnv adds variables to every run's environment, above the allowlist,
// below [codeexec.Request.Env]. Calls accumulate; a later value wins.
func WithEnv(env map[string]string) Option {
	return func(l *Executor) { l.cfg.AddEnv(env) }
}

// WithPassEnv passes the named host variables through to every run when
// they are set (PYENV_ROOT and PYENV_VERSION always are). Calls accumulate.
func WithPassEnv(names ...string) Option {
	return func(l *Executor) { l.cfg.AddPassEnv(names...) }
}

// WithWaitDelay bounds how long a process that left the run's process
// group can hold a finished run open through its output pipes (default
// [codeexec.DefaultWaitDelay]; negative is invalid).
func WithWaitDelay(d time.Duration) Option {
	return func(l *Executor) { l.cfg.SetWaitDelay(d) }
}

// WithDependencies sets whether the dependencies a script declares (a PEP
// 723 block, a requirements.txt, a package.json with its lock) are
// installed when missing (default true); off, a missing one is an error
// naming it (codeexec.ErrDependencies) and the script does not run.
// Installing runs pip or npm as the agent, with its own configuration
// (PIP_*, pip.conf, .npmrc), outside any sandbox. docs/dependencies.md.
func WithDependencies(install bool) Option {
	return func(l *Executor) { l.cfg.SetDependencies(install) }
}

// WithDependencyStore sets the absolute directory dependency environments
// are kept in (default ~/.cache/adkskills/deps) and the bytes kept there
// (default 4 GiB; the least recently used go first); "" and zero keep the
// defaults.
func WithDependencyStore(dir string, maxBytes int64) Option {
	return func(l *Executor) { l.cfg.SetDependencyStore(dir, maxBytes) }
}

// WithSourceBuilds lets pip build a declared package from source when no
// wheel fits, running that package's build code on the host (default
// false: wheels only).
func WithSourceBuilds(allow bool) Option {
	return func(l *Executor) { l.cfg.SetSourceBuilds(allow) }
}

// WithSnapshotCache bounds the cache of prepared skill folders in bytes
// (default 1 GiB); negative turns it off.
func WithSnapshotCache(bytes int64) Option {
	return func(l *Executor) { l.cfg.SetSnapshotCache(bytes) }
}

// WithMemoryLimit bounds the memory of a run, in bytes: every process it
// starts, and the tmpfs, memfd and page-cache pages they touch, where the
// host lets the agent make cgroups (docs/security.md); a run past it is
// killed and answers out of memory. Zero or negative: no bound (default).
func WithMemoryLimit(bytes int64) Option {
	return func(l *Executor) { l.memory = bytes }
}

// WithProcessLimit bounds how many processes a run may have at once, where
// the host lets the agent make cgroups. Zero or negative: no bound
// (default).
func WithProcessLimit(n int) Option {
	return func(l *Executor) { l.procs = n }
}

// WithDumpableAgent keeps the agent's process dumpable. By default the
// first Execute of an agent that does not run as root makes it undumpable,
// so that a script, which runs as the agent's user, cannot read the agent's
// environment (its API keys) or memory through /proc; that also turns off
// the agent's core dumps and attaching a debugger to it as its own user.
func WithDumpableAgent(dumpable bool) Option {
	return func(l *Executor) { l.dumpable = dumpable }
}

// Describe says how this host bounds a run's memory and processes: a
// cgroup of the run's own, or none (then only the OOM score applies).
func (l *Executor) Describe() string {
	return "memory and processes: " + host.CgroupReport()
}

// Err reports the first invalid option New was given, wrapping
// [codeexec.ErrInvalidConfig], or nil.
func (l *Executor) Err() error { return l.cfg.Err() }

// Interpreters returns a copy of the table l runs scripts with.
func (l *Executor) Interpreters() codeexec.Interpreters { return l.cfg.Interpreters() }

// Close waits until the workspaces of the runs l has executed are removed
// (Execute has them removed after it returns) and returns nil. l stays
// usable. Call it before removing l's workspace directory or exiting, so
// that no finished run's files are left for the next process's sweep.
func (l *Executor) Close() error {
	l.cfg.WaitRemovals()
	return nil
}

// Execute runs req as a host subprocess. See [codeexec.Executor].
func (l *Executor) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	if err := host.Supported(); err != nil {
		return nil, err
	}
	if !l.dumpable {
		if err := host.ProtectAgent(); err != nil {
			return nil, fmt.Errorf("%w: making the agent undumpable: %w", codeexec.ErrStart, err)
		}
	}
	return host.Execute(ctx, &l.cfg, launcher{mem: l.memory, procs: l.procs}, req)
}

// launcher starts the interpreter directly on the host.
type launcher struct {
	mem   int64
	procs int
}

// Bounds is the run's memory and process bound (a cgroup of its own holds
// the run where the host allows one, bounded or not).
func (l launcher) Bounds() (int64, int) { return max(l.mem, 0), max(l.procs, 0) }

// StageMode: clones of the snapshot where the file system makes them, else
// hard links; the cache checks them before it hands them out again.
func (launcher) StageMode() host.StageMode { return host.StageCloneOrLink }

// RecordsGroup: the script leads a process group of the host's, which the
// sweep after a dead agent may have to kill.
func (launcher) RecordsGroup() {}

// Prepare has nothing to do: the child runs as the agent.
func (launcher) Prepare(*host.Workspace) error { return nil }

// Command runs the resolved argv in the skill root.
func (launcher) Command(ctx context.Context, p *host.Plan) (*exec.Cmd, error) {
	return host.DirectCommand(ctx, p), nil
}
