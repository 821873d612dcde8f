// Package sandbox runs skill scripts like codeexec/local, through the same
// host pipeline, inside a bubblewrap sandbox: no network, a read-only
// system, only the run's workspace writable, no capabilities, a seccomp
// filter, an unprivileged uid of the run's own even when the agent is root,
// its own PID, IPC, UTS, user and network namespaces, and resource limits.
// It fails closed: where it cannot isolate, the script does not run.
//
// docs/security.md says what a script can and cannot do inside, and why.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/egress"
	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// Defaults of an Executor's limits; each is an option.
const (
	// DefaultMemory is the address-space limit (RLIMIT_AS) of each process
	// of a run: 2 GiB. Node.js needs about 1 GiB of address space to start.
	DefaultMemory int64 = 2 << 30
	// DefaultProcesses is the process limit (RLIMIT_NPROC) of a run, which
	// has a user namespace of its own.
	DefaultProcesses = 256
	// DefaultFileSize is the largest file a run can write (RLIMIT_FSIZE).
	DefaultFileSize int64 = 128 << 20
	// DefaultCPUTime is the CPU time each process of a run may use
	// (RLIMIT_CPU), on top of the wall-clock timeout.
	DefaultCPUTime = 2 * time.Minute
	// DefaultFirstUID is the first of the host uids a root agent's runs
	// take, one uid (and the gid of the same number) per run.
	DefaultFirstUID = 59000
	// DefaultUIDCount is how many uids follow DefaultFirstUID: as many runs
	// can be alive at once on one host.
	DefaultUIDCount = 1000
)

// Executor runs scripts in a bubblewrap sandbox. It needs Linux,
// bubblewrap 0.8.0 or later, prlimit and, when the agent runs as root,
// setpriv (both from util-linux), and unprivileged user namespaces; check
// with [Executor.Probe] at start-up. Elsewhere Probe and Execute return an
// error wrapping [codeexec.ErrSandboxUnavailable].
//
// An Executor is not a VM: a kernel bug reachable through the system calls
// its filter allows breaks it. An Executor is safe for concurrent use.
type Executor struct {
	cfg          host.Config
	bwrap        string // WithBwrapPath; "": "bwrap" in PATH
	network      bool
	memory       int64 // 0: default; <0: no limit
	procs        int
	fileSize     int64
	cpu          time.Duration
	tmpSize      int64
	uid, gid     int // WithUser; 0: a uid per run
	firstUID     int // WithUIDs; 0 with uidCount: the defaults
	uidCount     int
	readOnlyArgs []string // WithReadOnlyPaths, as given
	readOnly     []bind   // resolved by New
	egressArgs   []string // WithEgress, as given
	egressOn     bool     // WithEgress was given
	// egress is the parsed allowlist (nil: no egress); egressLimits bound
	// each run's proxy (tests lower them).
	egress       *egress.Policy
	egressLimits egress.Limits //lint:ignore U1000 only the Linux implementation reads it
	// probeCache is WithProbeCache's file ("": none).
	probeCache string //lint:ignore U1000 only the Linux implementation reads it
	// prepared is WithPrepared's count, when preparedSet.
	prepared    int  //lint:ignore U1000 only the Linux implementation reads it
	preparedSet bool //lint:ignore U1000 only the Linux implementation reads it

	// noFilter runs scripts without the seccomp filter: tests set it to show
	// what the filter stops. Nothing else does.
	noFilter bool //lint:ignore U1000 only the Linux implementation reads it

	state sandboxState //lint:ignore U1000 what probing found: only Linux has a machine to probe
}

// New returns an Executor configured by opts. It does not fail and
// touches the system only to resolve WithReadOnlyPaths: an invalid option
// is reported by Err, Probe and every Execute, wrapping
// [codeexec.ErrInvalidConfig].
func New(opts ...Option) *Executor {
	s := &Executor{}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	s.resolveReadOnly()
	s.resolveEgress()
	return s
}

// Option configures an [Executor].
type Option func(*Executor)

// Err reports the first invalid option New was given, wrapping
// [codeexec.ErrInvalidConfig], or nil.
func (s *Executor) Err() error { return s.cfg.Err() }

// Close releases the prepared sandboxes (see WithPrepared), waits until
// the workspaces of the runs s has executed are removed (Execute has them
// removed after it returns) and returns nil. s stays usable, without
// preparing sandboxes. Call it before removing s's workspace directory or exiting, so
// that no finished run's files are left for the next process's sweep.
func (s *Executor) Close() error {
	s.closePrepared()
	s.cfg.WaitRemovals()
	return nil
}

// WithProbeCache has a successful Probe remembered in the file path (made
// with its directory, the agent's user's only) and a later process's Probe
// skip the trial sandbox while nothing that decides the trial changed:
// the boot, bubblewrap and its version, the helpers, the agent's
// executable and user, the executor's options (docs/limits.md). ""
// (default) remembers nothing. [DefaultProbeCache] is the conventional
// file.
func WithProbeCache(path string) Option {
	return func(s *Executor) {
		if path != "" && !filepath.IsAbs(path) {
			s.invalid("WithProbeCache(%q): not an absolute path", path)
		}
		s.probeCache = path
	}
}

// DefaultProbeCache returns the conventional probe cache of the agent's
// user (below os.UserCacheDir), or "" when there is no cache directory.
func DefaultProbeCache() string {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		return ""
	}
	return probeCacheFile(dir)
}

// WithPrepared sets how many sandboxes the executor keeps made ahead for
// the next runs (default 1; 0 turns them off; negative is invalid): the
// whole chain of helpers up to the script, its workspace bound and its
// uid leased, made once a run is over (beside the run when runs come back
// to back), released after an idle 30 s and by Close. Each serves one
// run. docs/limits.md says what one holds and which runs start a sandbox
// the usual way instead.
func WithPrepared(n int) Option {
	return func(s *Executor) {
		if n < 0 {
			s.invalid("WithPrepared(%d): negative", n)
		}
		s.prepared, s.preparedSet = n, true
	}
}

// Interpreters returns a copy of the table s runs scripts with.
func (s *Executor) Interpreters() codeexec.Interpreters { return s.cfg.Interpreters() }

// invalid records an invalid option value.
func (s *Executor) invalid(format string, args ...any) {
	s.cfg.Invalid(fmt.Errorf(format, args...))
}

// WithInterpreters replaces the interpreter table (default
// [codeexec.DefaultInterpreters]; nil restores it); the table is copied.
func WithInterpreters(t codeexec.Interpreters) Option {
	return func(s *Executor) { s.cfg.SetInterpreters(t) }
}

// WithWorkspaceDir sets the absolute path of an existing directory in which
// each run creates its private workspace (default [os.TempDir]).
func WithWorkspaceDir(dir string) Option {
	return func(s *Executor) { s.cfg.SetWorkspaceDir(dir) }
}

// WithEnv adds variables to every run's environment, above the allowlist,
// below [codeexec.Request.Env]. Calls accumulate; a later value wins.
func WithEnv(env map[string]string) Option {
	return func(s *Executor) { s.cfg.AddEnv(env) }
}

// WithPassEnv passes the named host variables through to every run when
// they are set (PYENV_ROOT and PYENV_VERSION always are). Calls accumulate.
func WithPassEnv(names ...string) Option {
	return func(s *Executor) { s.cfg.AddPassEnv(names...) }
}

// WithWaitDelay bounds how long a process that left the run's process
// group can hold a finished run open through its output pipes (default
// [codeexec.DefaultWaitDelay]; negative is invalid).
func WithWaitDelay(d time.Duration) Option {
	return func(s *Executor) { s.cfg.SetWaitDelay(d) }
}

// WithDependencies sets whether the dependencies a script declares (a PEP
// 723 block, a requirements.txt, a package.json with its lock) are
// installed when missing (default true); off, a missing one is an error
// naming it (codeexec.ErrDependencies) and the script does not run.
// Installing runs pip or npm as the agent, with its own configuration
// (PIP_*, pip.conf, .npmrc), outside any sandbox. docs/dependencies.md.
func WithDependencies(install bool) Option {
	return func(s *Executor) { s.cfg.SetDependencies(install) }
}

// WithDependencyStore sets the absolute directory dependency environments
// are kept in (default ~/.cache/adkskills/deps) and the bytes kept there
// (default 4 GiB; the least recently used go first); "" and zero keep the
// defaults.
func WithDependencyStore(dir string, maxBytes int64) Option {
	return func(s *Executor) { s.cfg.SetDependencyStore(dir, maxBytes) }
}

// WithSourceBuilds lets pip build a declared package from source when no
// wheel fits, running that package's build code on the host (default
// false: wheels only).
func WithSourceBuilds(allow bool) Option {
	return func(s *Executor) { s.cfg.SetSourceBuilds(allow) }
}

// WithSnapshotCache bounds the cache of prepared skill folders in bytes
// (default 1 GiB); negative turns it off.
func WithSnapshotCache(bytes int64) Option {
	return func(s *Executor) { s.cfg.SetSnapshotCache(bytes) }
}

// WithNetwork gives scripts the host's whole network when enabled (default
// false: a network namespace with only loopback), the host's own 127.0.0.1
// services included.
func WithNetwork(enabled bool) Option {
	return func(s *Executor) { s.network = enabled }
}

// WithEgress lets scripts reach the listed hosts, and nothing else,
// through a proxy in the agent: each entry is HOST:PORT, a host name (with
// an optional "*." wildcard, which covers the names below it) or a literal
// address ("[2001:db8::1]:443" for IPv6). The script keeps a network
// namespace with only loopback and finds the proxy in HTTP_PROXY,
// HTTPS_PROXY and NO_PROXY; names are resolved by the proxy, and loopback,
// link-local, private and the agent's own addresses are refused unless
// listed. A run's refused hosts are in its Result.Warnings. Calls
// accumulate; with no entries, every request is refused (and reported). It
// excludes WithNetwork(true); a malformed entry is invalid. docs/egress.md.
func WithEgress(hostPorts ...string) Option {
	hostPorts = append([]string(nil), hostPorts...)
	return func(s *Executor) {
		s.egressArgs = append(s.egressArgs, hostPorts...)
		s.egressOn = true
	}
}

// resolveEgress parses the WithEgress entries, once, recording what is
// invalid.
func (s *Executor) resolveEgress() {
	if !s.egressOn {
		return
	}
	p, err := egress.Parse(s.egressArgs...)
	switch {
	case err != nil:
		s.invalid("WithEgress: %w", err)
	case s.network:
		s.invalid("WithEgress and WithNetwork(true) exclude each other: the allowlist needs the sandbox's own network namespace")
	default:
		s.egress = p
	}
	for _, b := range s.readOnly {
		if hookPath == b.dst || strings.HasPrefix(hookPath, b.dst+"/") {
			s.invalid("WithReadOnlyPaths(%q) would cover %s, where WithEgress shows the sandbox its hook", b.dst, hookPath)
		}
	}
}

// hookPath is where a sandbox with an egress allowlist sees the agent's own
// executable, which it starts as the egress hook before the script.
const hookPath = "/run/adkskills/egress-hook"

// WithMemoryLimit bounds the memory of a run, in bytes (default
// [DefaultMemory]; zero: the default; negative: no limit).
func WithMemoryLimit(bytes int64) Option {
	return func(s *Executor) { s.memory = bytes }
}

// WithProcessLimit bounds how many processes a run may have at once
// (default [DefaultProcesses]; zero: the default; negative: no limit).
func WithProcessLimit(n int) Option {
	return func(s *Executor) { s.procs = n }
}

// WithFileSizeLimit bounds the largest file a run can write, in bytes
// (RLIMIT_FSIZE; default [DefaultFileSize]; zero: the default; negative: no
// limit).
func WithFileSizeLimit(bytes int64) Option {
	return func(s *Executor) { s.fileSize = bytes }
}

// WithCPULimit bounds the CPU time of each process of a run (RLIMIT_CPU,
// whole seconds; default [DefaultCPUTime]; zero: the default; negative: no
// limit, the wall-clock timeout still applies).
func WithCPULimit(d time.Duration) Option {
	return func(s *Executor) { s.cpu = d }
}

// WithTmpSize makes the run's /tmp and /dev/shm each a tmpfs of that many
// bytes (default zero: both are the workspace's temporary folder). A tmpfs
// is memory, and its files pin kernel memory no size counts: use it only
// under a memory limit. Negative is invalid.
func WithTmpSize(bytes int64) Option {
	return func(s *Executor) {
		if bytes < 0 {
			s.invalid("WithTmpSize(%d): negative", bytes)
		}
		s.tmpSize = bytes
	}
}

// WithReadOnlyPaths shows more host paths to scripts, read-only at the same
// paths. Each must be absolute and exist when New runs; links are resolved
// then, and a path that resolves to "/" or to a directory holding the
// workspaces is invalid. Calls accumulate.
func WithReadOnlyPaths(paths ...string) Option {
	paths = append([]string(nil), paths...)
	return func(s *Executor) {
		s.readOnlyArgs = append(s.readOnlyArgs, paths...)
	}
}

// resolveReadOnly resolves the WithReadOnlyPaths values into binds,
// recording each that cannot be shown.
func (s *Executor) resolveReadOnly() {
	workspaces, err := filepath.EvalSymlinks(s.cfg.WorkspaceParent())
	if err != nil {
		workspaces = filepath.Clean(s.cfg.WorkspaceParent())
	}
	for _, p := range s.readOnlyArgs {
		if !filepath.IsAbs(p) {
			s.invalid("WithReadOnlyPaths(%q): not an absolute path", p)
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		switch {
		case err != nil:
			s.invalid("WithReadOnlyPaths(%q): %v", p, host.ErrText(err))
		case real == "/":
			s.invalid("WithReadOnlyPaths(%q): resolves to /, which would show the whole host", p)
		case real == workspaces || strings.HasPrefix(workspaces, real+"/"):
			s.invalid("WithReadOnlyPaths(%q): resolves to %s, which holds the executor's workspaces", p, real)
		default:
			s.readOnly = append(s.readOnly, bind{src: real, dst: filepath.Clean(p)})
		}
	}
}

// bind is a host path bound read-only in the sandbox at dst.
type bind struct {
	src, dst string // src: dst with symbolic links resolved
}

// WithUIDs sets the host uids a root agent's runs take, one of first to
// first+count-1 per run, as uid and gid (default [DefaultFirstUID],
// [DefaultUIDCount]): give a range nothing else on the host uses; nobody
// (65534) is refused. An unprivileged agent's scripts run as the agent.
func WithUIDs(first, count int) Option {
	return func(s *Executor) {
		switch last := int64(first) + int64(count) - 1; {
		case first <= 0 || count <= 0:
			s.invalid("WithUIDs(%d, %d): the first uid and the count must be positive", first, count)
		case last > maxUID:
			s.invalid("WithUIDs(%d, %d): uids past %d", first, count, maxUID)
		case first <= nobodyUID && nobodyUID <= last:
			s.invalid("WithUIDs(%d, %d): the range holds %d, nobody, whom other processes share", first, count, nobodyUID)
		}
		s.firstUID, s.uidCount = first, count
		s.uid, s.gid = 0, 0
	}
}

// nobodyUID is nobody's uid, which many host processes share.
const nobodyUID = 65534

// maxUID is the highest uid a range may reach.
const maxUID = 1<<31 - 1

// WithUser makes every run of a root agent use the host user uid:gid (both
// positive) instead of a uid per run; runs at the same time then share it
// and can reach each other. An unprivileged agent's scripts run as the
// agent.
func WithUser(uid, gid int) Option {
	return func(s *Executor) {
		if uid <= 0 || gid <= 0 {
			s.invalid("WithUser(%d, %d): uid and gid must be positive", uid, gid)
		}
		s.uid, s.gid = uid, gid
	}
}

// WithBwrapPath sets the bubblewrap executable (default "bwrap" in PATH).
func WithBwrapPath(path string) Option {
	return func(s *Executor) {
		if path == "" {
			s.invalid("WithBwrapPath: empty path")
		}
		s.bwrap = path
	}
}
