package codeexec

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of a Sandbox's limits. Every limit is an option; see
// [NewSandbox].
const (
	// DefaultSandboxMemory is the address-space limit (RLIMIT_AS) of each
	// process of a run: 2 GiB. Node.js needs about 1 GiB of address space
	// just to start.
	DefaultSandboxMemory int64 = 2 << 30
	// DefaultSandboxProcesses is the process limit (RLIMIT_NPROC) of a run.
	// Each run has its own user namespace, so the count is per run: one
	// run's fork storm does not starve another.
	DefaultSandboxProcesses = 256
	// DefaultSandboxFileSize is the largest file a run can write
	// (RLIMIT_FSIZE): 128 MiB.
	DefaultSandboxFileSize int64 = 128 << 20
	// DefaultSandboxCPUTime is the CPU time each process of a run may use
	// (RLIMIT_CPU), on top of the wall-clock Timeout.
	DefaultSandboxCPUTime = 2 * time.Minute
	// DefaultSandboxTmpSize is a size for [WithTmpSize]: 64 MiB.
	//
	// Deprecated: a run's /tmp and /dev/shm are its workspace's temporary
	// folder unless WithTmpSize asks for tmpfs mounts, so no size applies by
	// default.
	DefaultSandboxTmpSize int64 = 64 << 20
	// DefaultSandboxFirstUID is the first of the host uids a root agent's
	// runs take, one uid (and the gid of the same number) per run, none
	// shared with another run or, in the default range, with anything else
	// on the host (see [WithSandboxUIDs]).
	DefaultSandboxFirstUID = 59000
	// DefaultSandboxUIDCount is how many uids follow DefaultSandboxFirstUID
	// (59000 to 59999): as many runs can be alive at once on one host.
	DefaultSandboxUIDCount = 1000
)

// Sandbox runs scripts like [Local] (same pipeline, same [Result]) inside a
// bubblewrap (bwrap) sandbox. It needs bubblewrap 0.8.0 or later, prlimit
// and, when the agent runs as root, setpriv (both from util-linux), and
// unprivileged user namespaces.
//
// What a sandboxed script gets:
//   - no network: a network namespace with only a loopback interface (host
//     services on 127.0.0.1 and abstract Unix sockets are unreachable, and
//     the helpers that watch the script have one of their own too, so their
//     /proc/PID/net shows nothing of the host), unless [WithNetwork](true);
//   - a file system of its own: /usr, /etc (and /bin, /sbin, /lib* as on
//     the host) read-only, the interpreters of the executor's table (a
//     pyenv interpreter's prefix, found by asking the interpreter)
//     read-only at their host paths, [WithReadOnlyPaths]; its workspace
//     read-write at /workspace (cwd /workspace/skill); /tmp and /dev/shm
//     (Python's multiprocessing needs the latter) are the workspace's
//     temporary folder, unless [WithTmpSize] makes them tmpfs; a /dev
//     with null, zero, full, random, urandom and tty but no
//     pseudo-terminals (see [WithTmpSize] and the README's limits);
//     nothing else of the host: not the agent's home, not other runs'
//     workspaces, not /var, /run, /home or /sys;
//   - no privileges: all capabilities dropped (effective, permitted,
//     bounding, ambient), no_new_privs, no further user namespaces, a
//     seccomp filter refusing the system calls sandbox escapes and kernel
//     exploits reach for, and an unprivileged host uid: the agent's own uid
//     when it is not root, else a uid of the run's own (see
//     [WithSandboxUIDs]; the script sees itself as nobody);
//   - its own PID, IPC, UTS and (where possible) cgroup namespaces, and a
//     user and a network namespace nested below the helpers': it sees only
//     the run's processes, cannot trace or write to the helpers that watch
//     it, and when the script's main process exits or the run is killed,
//     every process it started dies with the namespace, including those
//     that called setsid;
//   - limits (rlimits, through prlimit): address space, processes, file
//     size, CPU time; no core dumps;
//   - the same environment allowlist as Local, seen at the sandbox's paths
//     (HOME=/workspace/home, TMPDIR=/workspace/tmp, PYTHONPATH=SKILL_DIR=
//     /workspace/skill), plus PWD; PATH keeps the host entries that exist
//     in the sandbox, after the directories of the interpreters bound for
//     it (so "python3" inside is the executor's python3, not a shim). The
//     environment is the script's alone: the helpers that build the
//     sandbox on the host start with an empty one, so a Request's Env
//     (LD_PRELOAD, say) never acts outside;
//   - a /proc of the run's PID namespace, where the kernel's lists of keys
//     and of the host's timers and tasks (/proc/keys, /proc/key-users,
//     /proc/timer_list, /proc/sched_debug) read as empty.
//
// Output files come back exactly as from Local: read as the agent, after
// every process of the run is dead, through an [os.Root] that never follows
// a link the script planted. When the agent is root, the part of each run's
// workspace the sandbox sees is handed to the run's uid for the run and
// removed by root afterwards. That part lies in a directory of the agent's,
// 0700 and never shown to the sandbox, so whatever modes a script gives its
// files, other host users cannot reach them.
//
// Two bubblewraps build a run. The outer one creates the mount, PID, IPC
// and UTS namespaces and the file system; when the agent runs as root it
// starts privileged (so it can bind an interpreter under root's home),
// drops every capability but the three setpriv needs, and setpriv switches
// to the run's uid; otherwise it starts in a user namespace of its own.
// The inner, unprivileged one creates the script's user and network
// namespaces below the outer's, applies the environment and installs the
// seccomp filter. The script cannot trace or write to the PID namespace's
// init, whose death (with the agent's, even by SIGKILL) ends the run.
//
// A Sandbox fails closed: when it cannot isolate (bubblewrap missing or too
// old, user namespaces disabled, a trial sandbox that does not isolate),
// Execute returns an error wrapping [ErrSandboxUnavailable] that says why
// and how to fix it, and the script does not run. Use [Sandbox.Probe] to
// check at start-up. A run whose own sandbox bubblewrap fails to set up
// after a successful probe (a bind it cannot make, say) returns such an
// error too, with bubblewrap's message, rather than a Result with exit
// code 1.
//
// A Sandbox is not a VM: a kernel bug reachable from an unprivileged
// process through the calls the filter allows breaks it. For hostile,
// multi-tenant code use a VM-grade sandbox (gVisor, Firecracker) or a
// remote executor.
//
// A Sandbox is safe for concurrent use; its configuration is fixed by
// [NewSandbox].
type Sandbox struct {
	cfg          config
	bwrap        string // WithBwrapPath; "": "bwrap" in PATH
	network      bool
	memory       int64 // 0: default; <0: no limit
	procs        int
	fileSize     int64
	cpu          time.Duration
	tmpSize      int64
	uid, gid     int // WithSandboxUser; 0: a uid per run
	firstUID     int // WithSandboxUIDs; 0 with uidCount: the defaults
	uidCount     int
	readOnlyArgs []string // WithReadOnlyPaths, as given
	readOnly     []bind   // resolved by NewSandbox

	// noFilter runs scripts without the seccomp filter: tests set it to show
	// what the filter stops. Nothing else does.
	noFilter bool //lint:ignore U1000 only the Linux implementation reads it

	state sandboxState //lint:ignore U1000 what probing found: only the Linux implementation has a machine to probe
}

// NewSandbox returns a Sandbox configured by opts: the shared options
// ([WithInterpreters], [WithWorkspaceDir], [WithEnv], [WithPassEnv],
// [WithWaitDelay]) and the sandbox's own, whose defaults are:
//
//	WithNetwork(false)                         no network
//	WithMemoryLimit(DefaultSandboxMemory)      2 GiB of address space per process
//	WithProcessLimit(DefaultSandboxProcesses)  256 processes per run
//	WithFileSizeLimit(DefaultSandboxFileSize)  128 MiB per file
//	WithCPULimit(DefaultSandboxCPUTime)        2 min of CPU per process
//	WithTmpSize(0)                             /tmp and /dev/shm in the workspace
//	WithSandboxUIDs(DefaultSandboxFirstUID, DefaultSandboxUIDCount)
//	                                           a host uid per run when the agent is root
//	WithBwrapPath("bwrap")                     looked up in PATH
//
// NewSandbox does not fail and touches the system only to resolve
// WithReadOnlyPaths: an invalid option value is reported by [Sandbox.Err], [Sandbox.Probe] and every Execute as
// an error wrapping [ErrInvalidConfig], and the machine is checked by
// [Sandbox.Probe] or the first Execute.
//
// The sandbox needs Linux: elsewhere NewSandbox builds, and Probe and
// Execute return an error wrapping [ErrSandboxUnavailable].
func NewSandbox(opts ...SandboxOption) *Sandbox {
	s := &Sandbox{}
	for _, o := range opts {
		if o != nil {
			o.applySandbox(s)
		}
	}
	s.resolveReadOnly()
	return s
}

// SandboxOption configures a [Sandbox]. The shared [Option] values are
// SandboxOptions too.
type SandboxOption interface {
	applySandbox(*Sandbox)
}

func (o Option) applySandbox(s *Sandbox) { o(&s.cfg) }

// sandboxOption is an option only a Sandbox takes.
type sandboxOption func(*Sandbox)

func (o sandboxOption) applySandbox(s *Sandbox) { o(s) }

// Err reports the first invalid option NewSandbox was given, wrapping
// [ErrInvalidConfig], or nil.
func (s *Sandbox) Err() error { return s.cfg.err() }

// invalid records an invalid option value, reported by Err and Execute.
func (s *Sandbox) invalid(format string, args ...any) {
	s.cfg.errs = append(s.cfg.errs, fmt.Errorf(format, args...))
}

// WithNetwork gives scripts the host's network when enabled (default
// false: a private network namespace with only loopback). With the network
// on, a script can reach everything the host can, including services
// listening on the host's 127.0.0.1.
func WithNetwork(enabled bool) SandboxOption {
	return sandboxOption(func(s *Sandbox) { s.network = enabled })
}

// WithMemoryLimit sets the address-space limit (RLIMIT_AS) of each process
// of a run, in bytes (default [DefaultSandboxMemory]). Zero means the
// default; negative means no limit. An allocation past it fails (Python
// raises MemoryError). Node.js needs about 1 GiB to start.
func WithMemoryLimit(bytes int64) SandboxOption {
	return sandboxOption(func(s *Sandbox) { s.memory = bytes })
}

// WithProcessLimit sets how many processes a run may have at once
// (RLIMIT_NPROC, counted per run; default [DefaultSandboxProcesses]). Zero
// means the default; negative means no limit.
func WithProcessLimit(n int) SandboxOption {
	return sandboxOption(func(s *Sandbox) { s.procs = n })
}

// WithFileSizeLimit sets the largest file a run can write, in bytes
// (RLIMIT_FSIZE; default [DefaultSandboxFileSize]). A write past it fails
// with EFBIG (or kills a process that does not ignore SIGXFSZ). Zero means
// the default; negative means no limit.
func WithFileSizeLimit(bytes int64) SandboxOption {
	return sandboxOption(func(s *Sandbox) { s.fileSize = bytes })
}

// WithCPULimit sets the CPU time each process of a run may use (RLIMIT_CPU,
// whole seconds, rounded up; default [DefaultSandboxCPUTime]); a process
// past it is killed by SIGXCPU. Zero means the default; negative means no
// limit (the wall-clock timeout still applies).
func WithCPULimit(d time.Duration) SandboxOption {
	return sandboxOption(func(s *Sandbox) { s.cpu = d })
}

// WithTmpSize makes each of the run's /tmp and /dev/shm a tmpfs of that
// many bytes. By default (zero) both are the workspace's temporary folder
// (TMPDIR), on the workspace directory's file system, removed with the
// workspace and bounded like it (see the README's limits). A tmpfs is faster but is memory, and it bounds the
// bytes of its files, not their number: every file, even an empty one,
// pins about a kilobyte of kernel memory that neither this size nor any
// rlimit counts, so a script can make millions (so does the workspace
// itself when [WithWorkspaceDir] is on a tmpfs, as the OS temporary
// directory is on some systems). Use it only where the agent runs under a
// memory limit (a container's, systemd's MemoryMax), which the kernel
// charges these files to. Negative is invalid.
func WithTmpSize(bytes int64) SandboxOption {
	return sandboxOption(func(s *Sandbox) {
		if bytes < 0 {
			s.invalid("WithTmpSize(%d): negative", bytes)
		}
		s.tmpSize = bytes
	})
}

// WithReadOnlyPaths shows more host files or directories to scripts,
// read-only at the same paths (a tool under /opt, a data set, a virtual
// environment under /tmp). Each must be an absolute path that exists when
// NewSandbox runs; symbolic links are resolved then, once, and what the
// path resolves to may be neither "/" nor a directory holding the
// executor's workspaces (WithWorkspaceDir, else the temporary directory);
// anything else is a configuration error. Calls accumulate.
func WithReadOnlyPaths(paths ...string) SandboxOption {
	paths = append([]string(nil), paths...)
	return sandboxOption(func(s *Sandbox) {
		s.readOnlyArgs = append(s.readOnlyArgs, paths...)
	})
}

// resolveReadOnly resolves the WithReadOnlyPaths values into binds,
// recording each that cannot be shown.
func (s *Sandbox) resolveReadOnly() {
	workspaces, err := filepath.EvalSymlinks(s.cfg.workspaceParent())
	if err != nil {
		workspaces = filepath.Clean(s.cfg.workspaceParent())
	}
	for _, p := range s.readOnlyArgs {
		if !filepath.IsAbs(p) {
			s.invalid("WithReadOnlyPaths(%q): not an absolute path", p)
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		switch {
		case err != nil:
			s.invalid("WithReadOnlyPaths(%q): %v", p, errText(err))
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

// WithSandboxUIDs sets the host uids a root agent's runs take: each run
// gets one of first to first+count-1, as its uid and as its gid, for its
// own (default [DefaultSandboxFirstUID], [DefaultSandboxUIDCount]). No
// other run has it while the run lives, across every agent of the host
// that keeps its leases in the same /run (or, without a /run, temporary
// directory), so no run, and no other host process, can signal, trace or
// read another through /proc. Give a range no account or service of the
// host uses; nobody (65534) is refused. The script sees itself as nobody.
// A run that finds every uid taken fails with [ErrSandboxUnavailable].
// When the agent is not root, scripts run as the agent's own uid and this
// option is unused.
func WithSandboxUIDs(first, count int) SandboxOption {
	return sandboxOption(func(s *Sandbox) {
		switch last := int64(first) + int64(count) - 1; {
		case first <= 0 || count <= 0:
			s.invalid("WithSandboxUIDs(%d, %d): the first uid and the count must be positive", first, count)
		case last > maxUID:
			s.invalid("WithSandboxUIDs(%d, %d): uids past %d", first, count, maxUID)
		case first <= nobodyUID && nobodyUID <= last:
			s.invalid("WithSandboxUIDs(%d, %d): the range holds %d, nobody, whom other processes share", first, count, nobodyUID)
		}
		s.firstUID, s.uidCount = first, count
		s.uid, s.gid = 0, 0
	})
}

// nobodyUID is nobody's uid, which many host processes share.
const nobodyUID = 65534

// maxUID is the highest uid a range may reach.
const maxUID = 1<<31 - 1

// WithSandboxUser makes every run of a root agent use the host user and
// group uid:gid, instead of a uid per run ([WithSandboxUIDs]). Both must be
// positive: a sandbox never runs scripts as root. Runs at the same time
// then share a uid, and with it anything else of the host running as that
// user: each can signal, trace and read the others through /proc (their
// environment, their workspace). Use it only for one run at a time, with a
// user of its own. When the agent is not root, scripts run as the agent's
// own uid and this option is unused.
func WithSandboxUser(uid, gid int) SandboxOption {
	return sandboxOption(func(s *Sandbox) {
		if uid <= 0 || gid <= 0 {
			s.invalid("WithSandboxUser(%d, %d): uid and gid must be positive", uid, gid)
		}
		s.uid, s.gid = uid, gid
	})
}

// WithBwrapPath sets the bubblewrap executable (default "bwrap", looked up
// in PATH).
func WithBwrapPath(path string) SandboxOption {
	return sandboxOption(func(s *Sandbox) {
		if path == "" {
			s.invalid("WithBwrapPath: empty path")
		}
		s.bwrap = path
	})
}
