package codeexec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
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
	// DefaultSandboxTmpSize is the size of each of the run's private /tmp
	// and /dev/shm (tmpfs, so memory): 64 MiB. TMPDIR points into the
	// workspace, on disk.
	DefaultSandboxTmpSize int64 = 64 << 20
	// DefaultSandboxUID is the unprivileged host user a run uses when the
	// agent's process is root: nobody.
	DefaultSandboxUID = 65534
	// DefaultSandboxGID is the group that goes with DefaultSandboxUID:
	// nogroup.
	DefaultSandboxGID = 65534
)

// sandboxWorkspace is where a sandboxed run sees its workspace: the skill
// root is sandboxWorkspace/skill, HOME sandboxWorkspace/home, TMPDIR
// sandboxWorkspace/tmp.
const sandboxWorkspace = "/workspace"

// Sandbox runs scripts like [Local] (same pipeline, same [Result]) inside a
// bubblewrap (bwrap) sandbox. It needs bubblewrap 0.8.0 or later, prlimit
// and, when the agent runs as root, setpriv (both from util-linux), and
// unprivileged user namespaces.
//
// What a sandboxed script gets:
//   - no network: a network namespace with only a loopback interface (host
//     services on 127.0.0.1 and abstract Unix sockets are unreachable),
//     unless [WithNetwork](true);
//   - a file system of its own: /usr, /etc (and /bin, /sbin, /lib* as on
//     the host) read-only, the interpreters of the executor's table (a
//     pyenv interpreter's prefix, found by asking the interpreter)
//     read-only at their host paths, [WithReadOnlyPaths]; its workspace
//     read-write at /workspace (cwd /workspace/skill); a private /tmp and
//     /dev/shm (small tmpfs: Python's multiprocessing needs the latter);
//     nothing else of the host: not the agent's home, not other runs'
//     workspaces, not /var, /run, /home or /sys;
//   - no privileges: all capabilities dropped (effective, permitted,
//     bounding, ambient), no_new_privs, no further user namespaces, and an
//     unprivileged host uid: the agent's own uid when it is not root, else
//     [DefaultSandboxUID] (see [WithSandboxUser]);
//   - its own PID, IPC, UTS and (where possible) cgroup namespaces: it sees
//     only its own processes, and when the script's main process exits or
//     the run is killed, every process it started dies with the namespace,
//     including those that called setsid;
//   - limits (rlimits, through prlimit): address space, processes, file
//     size, CPU time; no core dumps;
//   - the same environment allowlist as Local, seen at the sandbox's paths
//     (HOME=/workspace/home, TMPDIR=/workspace/tmp, PYTHONPATH=SKILL_DIR=
//     /workspace/skill), plus PWD; PATH keeps the host entries that exist
//     in the sandbox, after the directories of the interpreters bound for
//     it (so "python3" inside is the executor's python3, not a shim).
//
// Output files come back exactly as from Local: read as the agent, after
// every process of the run is dead, through an [os.Root] that never follows
// a link the script planted. When the agent is root, the part of each run's
// workspace the sandbox sees is handed to the sandbox user for the run and
// removed by root afterwards. That part lies in a directory of the agent's,
// 0700 and never shown to the sandbox, so whatever modes a script gives its
// files, other host users cannot reach them.
//
// When the agent runs as root, bubblewrap starts privileged to build the
// mounts (so it can bind an interpreter under root's home), drops every
// capability but the three setpriv needs, setpriv switches to the
// unprivileged uid, and a second, unprivileged bubblewrap creates the user
// namespace. When the agent is not root, one unprivileged bubblewrap does
// it all.
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
// process (the sandbox installs no seccomp filter) breaks it. For hostile,
// multi-tenant code use a VM-grade sandbox (gVisor, Firecracker) or a
// remote executor.
//
// A Sandbox is safe for concurrent use; its configuration is fixed by
// [NewSandbox].
type Sandbox struct {
	cfg       config
	bwrap     string // WithBwrapPath; "": "bwrap" in PATH
	network   bool
	timeout   time.Duration // 0: DefaultTimeout
	memory    int64         // 0: default; <0: no limit
	procs     int
	fileSize  int64
	cpu       time.Duration
	tmpSize   int64
	uid, gid  int
	readOnly  []string
	probeOnce sync.Mutex
	host      *sandboxHost // set by the first successful probe

	interpMu sync.Mutex
	interps  map[string]*interpEntry // by interpreter path and pyenv variables
}

// NewSandbox returns a Sandbox configured by opts: the shared options
// ([WithInterpreters], [WithWorkspaceDir], [WithEnv], [WithPassEnv],
// [WithWaitDelay]) and the sandbox's own, whose defaults are:
//
//	WithNetwork(false)                         no network
//	WithDefaultTimeout(DefaultTimeout)         2 min wall clock when Request.Timeout is 0
//	WithMemoryLimit(DefaultSandboxMemory)      2 GiB of address space per process
//	WithProcessLimit(DefaultSandboxProcesses)  256 processes per run
//	WithFileSizeLimit(DefaultSandboxFileSize)  128 MiB per file
//	WithCPULimit(DefaultSandboxCPUTime)        2 min of CPU per process
//	WithTmpSize(DefaultSandboxTmpSize)         64 MiB each for /tmp and /dev/shm
//	WithSandboxUser(65534, 65534)              host uid:gid when the agent is root
//	WithBwrapPath("bwrap")                     looked up in PATH
//
// NewSandbox does not fail and does not touch the system: an invalid option
// value is reported by every Execute as an error wrapping
// [ErrInvalidRequest], and the machine is checked by [Sandbox.Probe] or the
// first Execute.
func NewSandbox(opts ...SandboxOption) *Sandbox {
	s := &Sandbox{uid: DefaultSandboxUID, gid: DefaultSandboxGID}
	for _, o := range opts {
		if o != nil {
			o.applySandbox(s)
		}
	}
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

// invalid records an invalid option value, reported by Execute.
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

// WithDefaultTimeout sets the wall-clock limit of a request whose Timeout
// is zero (default [DefaultTimeout]). Negative is invalid.
func WithDefaultTimeout(d time.Duration) SandboxOption {
	return sandboxOption(func(s *Sandbox) {
		if d < 0 {
			s.invalid("WithDefaultTimeout(%v): negative", d)
		}
		s.timeout = d
	})
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

// WithTmpSize sets the size of each of the run's private /tmp and /dev/shm
// in bytes (default [DefaultSandboxTmpSize]). They are tmpfs: memory. Zero
// means the default; negative is invalid.
func WithTmpSize(bytes int64) SandboxOption {
	return sandboxOption(func(s *Sandbox) {
		if bytes < 0 {
			s.invalid("WithTmpSize(%d): negative", bytes)
		}
		s.tmpSize = bytes
	})
}

// WithReadOnlyPaths shows more host files or directories to scripts,
// read-only at the same paths (a tool under /opt, a data set). Each must be
// an absolute path that exists at Execute time, and may be neither "/" nor
// a directory holding the executor's workspaces. Calls accumulate.
func WithReadOnlyPaths(paths ...string) SandboxOption {
	paths = append([]string(nil), paths...)
	return sandboxOption(func(s *Sandbox) {
		for _, p := range paths {
			if !filepath.IsAbs(p) || filepath.Clean(p) == "/" {
				s.invalid("WithReadOnlyPaths(%q): want an absolute path other than /", p)
			}
		}
		s.readOnly = append(s.readOnly, paths...)
	})
}

// WithSandboxUser sets the host user and group scripts run as when the
// agent's process is root (default [DefaultSandboxUID],
// [DefaultSandboxGID]: nobody). Both must be positive: a sandbox never runs
// scripts as root. When the agent is not root, scripts run as the agent's
// own uid (an unprivileged process cannot switch) and this option is
// unused. The workspace of each run is handed to this user for the run.
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

// Execute runs req inside the sandbox. See [Executor] and [Sandbox]. When
// the sandbox cannot isolate on this machine, or bubblewrap fails to set up
// this run's sandbox, it returns an error wrapping [ErrSandboxUnavailable]
// and the script does not run.
func (s *Sandbox) Execute(ctx context.Context, req *Request) (*Result, error) {
	if err := s.cfg.validate(); err != nil {
		return nil, err
	}
	if err := validateRequest(req); err != nil {
		return nil, err
	}
	h, err := s.ready(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // cancelled while probing: not the machine's fault
		}
		return nil, err
	}
	r := *req
	if r.Timeout == 0 {
		r.Timeout = s.defaultTimeout()
	}
	return execute(ctx, &s.cfg, &sandboxLauncher{s: s, h: h}, &r)
}

// Probe checks that this machine can run the sandbox: it finds bubblewrap
// and the util-linux tools, and runs a trial sandbox that must show an
// unprivileged uid, no capabilities, a private file system and (unless the
// network is enabled) only a loopback interface. It returns nil, or an
// error wrapping [ErrSandboxUnavailable] that says why and how to fix it.
// A success is remembered; Execute probes on its first call.
func (s *Sandbox) Probe(ctx context.Context) error {
	_, err := s.ready(ctx)
	return err
}

// ready returns the probed host, probing once until a probe succeeds.
func (s *Sandbox) ready(ctx context.Context) (*sandboxHost, error) {
	s.probeOnce.Lock()
	defer s.probeOnce.Unlock()
	if s.host != nil {
		return s.host, nil
	}
	h, err := s.probe(ctx)
	if err != nil {
		return nil, err
	}
	s.host = h
	return h, nil
}

func (s *Sandbox) defaultTimeout() time.Duration {
	if s.timeout > 0 {
		return s.timeout
	}
	return DefaultTimeout
}

// limit returns v, or def when v is zero; ok is false for "no limit".
func limit[T int | int64 | time.Duration](v, def T) (T, bool) {
	switch {
	case v == 0:
		return def, true
	case v < 0:
		return 0, false
	}
	return v, true
}

// prlimitArgs is the prlimit prefix that applies the run's rlimits.
func (s *Sandbox) prlimitArgs(prlimit string) []string {
	a := []string{prlimit, "--core=0"}
	if v, ok := limit(s.memory, DefaultSandboxMemory); ok {
		a = append(a, "--as="+strconv.FormatInt(v, 10))
	}
	if v, ok := limit(s.procs, DefaultSandboxProcesses); ok {
		a = append(a, "--nproc="+strconv.Itoa(v))
	}
	if v, ok := limit(s.fileSize, DefaultSandboxFileSize); ok {
		a = append(a, "--fsize="+strconv.FormatInt(v, 10))
	}
	if v, ok := limit(s.cpu, DefaultSandboxCPUTime); ok {
		secs := int64((v + time.Second - 1) / time.Second)
		a = append(a, "--cpu="+strconv.FormatInt(secs, 10))
	}
	return append(a, "--")
}

// bwrapArgs is the whole command line after the bwrap executable: the
// namespaces, the mounts (system, binds, wsDir, the child's part of the
// workspace, at /workspace), the privilege drop, the rlimits, then argv
// (paths as the sandbox sees them). A statusFD above 2 is given to the
// innermost bubblewrap as its --json-status-fd (see launched).
func (s *Sandbox) bwrapArgs(h *sandboxHost, wsDir string, binds []bind, argv []string, statusFD int) []string {
	ns := []string{"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox",
		"--unshare-cgroup-try", "--die-with-parent", "--new-session"}
	if !s.network {
		ns = append(ns, "--unshare-net")
	}
	mounts := h.sys.mountArgs(binds)
	tmpSize, _ := limit(s.tmpSize, DefaultSandboxTmpSize)
	mounts = append(mounts,
		"--proc", "/proc",
		"--dev", "/dev",
		"--perms", "1777", "--size", strconv.FormatInt(tmpSize, 10), "--tmpfs", "/dev/shm",
		"--perms", "1777", "--size", strconv.FormatInt(tmpSize, 10), "--tmpfs", "/tmp",
		"--bind", wsDir, sandboxWorkspace,
		"--remount-ro", "/",
		"--remount-ro", "/dev",
	)
	skill := sandboxWorkspace + "/skill"
	inner := []string{"--chdir", skill, "--"}
	if statusFD > 2 {
		inner = append([]string{"--json-status-fd", strconv.Itoa(statusFD)}, inner...)
	}

	var a []string
	if h.root {
		uid, gid := strconv.Itoa(s.uid), strconv.Itoa(s.gid)
		// Privileged outer bwrap: namespaces and mounts as root, then
		// every capability dropped but what setpriv needs.
		a = append(a, ns...)
		a = append(a, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
		a = append(a, mounts...)
		// setpriv: to the unprivileged host uid, no capabilities at all,
		// no_new_privs.
		a = append(a, "--", h.setpriv, "--reuid", uid, "--regid", gid, "--clear-groups",
			"--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--")
		// Unprivileged inner bwrap: a user namespace of the run's own (per
		// run process accounting), none creatable inside.
		a = append(a, h.bwrap, "--unshare-user", "--disable-userns", "--uid", uid, "--gid", gid,
			"--cap-drop", "ALL", "--die-with-parent", "--dev-bind", "/", "/")
		a = append(a, inner...)
	} else {
		a = append(a, "--unshare-user", "--disable-userns", "--cap-drop", "ALL")
		a = append(a, ns...)
		a = append(a, mounts...)
		a = append(a, inner...)
	}
	a = append(a, s.prlimitArgs(h.prlimit)...)
	return append(a, argv...)
}

// sandboxLauncher starts a run's child through bubblewrap. It is made per
// run.
type sandboxLauncher struct {
	s *Sandbox
	h *sandboxHost
	// status is the pipe the innermost bubblewrap writes its JSON status
	// to (statusW is the child's fd statusFD); see finish.
	status, statusW *os.File
}

// statusFD is the descriptor the innermost bubblewrap gets for its
// --json-status-fd: the first of cmd.ExtraFiles. Every bubblewrap and
// setpriv pass it down; the innermost bubblewrap closes it for the script.
const statusFD = 3

// prepare hands the child's part of the workspace (ws.dir) to the sandbox
// user when the agent is root; ws.root stays root's, 0700, and root still
// removes it all afterwards.
func (l *sandboxLauncher) prepare(ws *workspace) error {
	if !l.h.root {
		return nil
	}
	return chownTree(ws.dir, l.s.uid, l.s.gid)
}

func (l *sandboxLauncher) command(ctx context.Context, p *plan) (*exec.Cmd, error) {
	v, err := l.s.view(ctx, l.h, p)
	if err != nil {
		return nil, err
	}
	q := *p
	q.hostPATH = v.path
	env := q.envAt(dirs{
		skill: sandboxWorkspace + "/skill",
		home:  sandboxWorkspace + "/home",
		tmp:   sandboxWorkspace + "/tmp",
	})
	argv := append([]string{v.exe}, p.argv[1:]...)
	if l.status, l.statusW, err = os.Pipe(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, l.h.bwrap, l.s.bwrapArgs(l.h, p.ws.dir, v.binds, argv, statusFD)...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{l.statusW} // statusFD
	return cmd, nil
}

// finish tells a run whose sandbox bubblewrap could not set up from a run
// of the script: the innermost bubblewrap writes an "exit-code" status
// when the command it started exits, and none when it, an outer
// bubblewrap or setpriv fails first (a mount it cannot make, a namespace
// it cannot create). Such a run returns ErrSandboxUnavailable with
// bubblewrap's complaint instead of a Result with exit code 1. A run the
// pipeline killed (timeout, cancellation) keeps its Result.
func (l *sandboxLauncher) finish(res *Result) error {
	defer l.status.Close()
	l.statusW.Close()
	if res == nil || res.TimedOut {
		return nil
	}
	// Every bubblewrap wrote its status before the leader exited: read
	// what the pipe holds, without waiting for its end.
	const maxStatus = 64 << 10
	var status []byte
	if rc, err := l.status.SyscallConn(); err == nil {
		buf := make([]byte, maxStatus)
		for len(status) < maxStatus {
			var n int
			_ = rc.Read(func(fd uintptr) bool {
				n, _ = syscall.Read(int(fd), buf[:maxStatus-len(status)])
				return true
			})
			if n <= 0 {
				break
			}
			status = append(status, buf[:n]...)
		}
	}
	if launched(status) {
		return nil
	}
	return fmt.Errorf("%w: bubblewrap %s could not set up the sandbox of this run (exit %d): %s: %s",
		ErrSandboxUnavailable, l.h.version, res.ExitCode, firstLine(res.Stderr.Text), diagnose(res.Stderr.Text))
}

// launched reports whether bubblewrap's JSON status (a stream of objects)
// says the command ran to its end: an "exit-code" member.
func launched(status []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(status))
	for {
		var doc map[string]json.RawMessage
		if dec.Decode(&doc) != nil {
			return false
		}
		if _, ok := doc["exit-code"]; ok {
			return true
		}
	}
}

// chownTree gives dir and everything in it to uid:gid, without following
// symbolic links.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// isRoot reports whether the agent's process is root.
func isRoot() bool { return syscall.Geteuid() == 0 }
