package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/egress"
	"github.com/adkskills/adkskills/codeexec/internal/egress/hook"
	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// sandboxWorkspace is where a sandboxed run sees its workspace: the skill
// root is sandboxWorkspace/skill, HOME sandboxWorkspace/home, TMPDIR
// sandboxWorkspace/tmp.
const sandboxWorkspace = "/workspace"

// Execute runs req inside the sandbox. See [codeexec.Executor] and [Executor]. When
// the sandbox cannot isolate on this machine, or bubblewrap fails to set up
// this run's sandbox, it returns an error wrapping [codeexec.ErrSandboxUnavailable]
// and the script does not run.
func (s *Executor) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	if testBeforeExecute != nil {
		testBeforeExecute(ctx, s)
	}
	return host.Execute(ctx, &s.cfg, &sandboxLauncher{s: s}, req)
}

// testBeforeExecute, when set (by this package's tests only), runs before
// every Execute.
var testBeforeExecute func(context.Context, *Executor)

// Probe checks that this machine can run the sandbox: it finds bubblewrap
// and the util-linux tools, and runs a trial sandbox that must show an
// unprivileged uid, no capabilities, a private file system and (unless the
// network is enabled) only a loopback interface. It returns nil, or an
// error wrapping [codeexec.ErrSandboxUnavailable] that says why and how to fix it.
// A success is remembered; Execute probes on its first call.
func (s *Executor) Probe(ctx context.Context) error {
	if err := s.cfg.Err(); err != nil {
		return err
	}
	_, err := s.ready(ctx)
	return err
}

// Describe says, after a successful Probe, which bubblewrap runs the
// sandbox and how this host bounds a run's memory and processes: a cgroup
// of the run's own, or (where none can be made) the rlimits that remain.
func (s *Executor) Describe() string {
	s.state.probeOnce.Lock()
	h := s.state.host
	s.state.probeOnce.Unlock()
	b := "not probed yet"
	if h != nil {
		b = "bubblewrap " + h.version + " (" + h.bwrap + ")"
	}
	return b + "; memory and processes: " + host.CgroupReport() + rlimitNote()
}

// rlimitNote says what bounds a run without a cgroup of its own.
func rlimitNote() string {
	if strings.HasPrefix(host.CgroupReport(), "no run cgroup") {
		return ", so each process's address space (RLIMIT_AS) and the run's processes (RLIMIT_NPROC) are bounded instead"
	}
	return ""
}

// ready returns the probed host, probing once until a probe succeeds.
func (s *Executor) ready(ctx context.Context) (*sandboxHost, error) {
	st := &s.state
	st.probeOnce.Lock()
	defer st.probeOnce.Unlock()
	if st.host != nil {
		return st.host, nil
	}
	h, err := s.probe(ctx)
	if err != nil {
		return nil, err
	}
	st.host = h
	return h, nil
}

// sandboxState is what a Sandbox learns about this machine.
type sandboxState struct {
	probeOnce sync.Mutex
	host      *sandboxHost // set by the first successful probe

	interpMu sync.Mutex
	interps  map[string]*interpEntry // by interpreter path and pyenv variables

	prep prepPool // the prepared sandboxes
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

// prlimitArgs is the prlimit prefix that applies the run's rlimits. A run
// with a cgroup of its own (bounded) has its memory bounded there, as a
// whole; without one, each process's address space is (RLIMIT_AS).
func (s *Executor) prlimitArgs(prlimit string, bounded bool) []string {
	a := []string{prlimit, "--core=0"}
	if v, ok := limit(s.memory, DefaultMemory); ok && !bounded {
		a = append(a, "--as="+strconv.FormatInt(v, 10))
	}
	if v, ok := limit(s.procs, DefaultProcesses); ok {
		a = append(a, "--nproc="+strconv.Itoa(v))
	}
	if v, ok := limit(s.fileSize, DefaultFileSize); ok {
		a = append(a, "--fsize="+strconv.FormatInt(v, 10))
	}
	if v, ok := limit(s.cpu, DefaultCPUTime); ok {
		secs := int64((v + time.Second - 1) / time.Second)
		a = append(a, "--cpu="+strconv.FormatInt(secs, 10))
	}
	return append(a, "--")
}

// Descriptors a run's bubblewraps get (cmd.ExtraFiles). Every bubblewrap
// and setpriv pass down what is not theirs; the inner bubblewrap reads
// the filter and its options and closes them and its status descriptor for
// the script, and the outer one closes its info descriptor for its
// children.
const (
	statusFD    = 3 // the inner bubblewrap's --json-status-fd
	seccompFD   = 4 // the inner bubblewrap's --seccomp
	infoFD      = 5 // the outer bubblewrap's --info-fd: the PID namespace's init
	argsFD      = 6 // the outer bubblewrap's --args: its options
	innerArgsFD = 7 // the inner bubblewrap's --args: its options
	// With an egress allowlist: the child end of the hook's handoff socket,
	// which every helper passes down to the hook, and an O_PATH descriptor
	// of the agent's executable, which the outer bubblewrap binds at
	// hookPath and closes.
	handoffFD = 8
	hookExeFD = 9
)

// procMasks are the files of /proc that read as empty in the sandbox
// (Docker masks them too): other users' keys and the counts of them, and
// the host's timers and scheduler state, which name other processes. Only
// those the kernel has are masked.
var procMasks = []string{"/proc/keys", "/proc/key-users", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats", "/proc/timer_stats"}

// tmpMounts are the bubblewrap options that make the run's /dev/shm and
// /tmp: by default both are tmp, the workspace's temporary folder, which
// the run's files fill like the rest of the workspace (on the workspace
// directory's file system); with
// WithTmpSize, tmpfs mounts of that size. A tmpfs bounds the bytes of its
// files but not their number, and each file, even empty, pins kernel memory
// that no limit of the run counts.
func (s *Executor) tmpMounts(tmp string) []string {
	if s.tmpSize <= 0 {
		return []string{"--bind", tmp, "/dev/shm", "--bind", tmp, "/tmp"}
	}
	size := strconv.FormatInt(s.tmpSize, 10)
	return []string{
		"--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
		"--perms", "1777", "--size", size, "--tmpfs", "/tmp",
	}
}

// runArgs is the command line of a run. Each bubblewrap's options name
// host paths (the workspace's, every bind's source) or carry the
// environment, so they go to it through --args (see command) and never show
// in a command line, on the host or in the sandbox.
type runArgs struct {
	outer []string // the outer bubblewrap's options (argsFD)
	inner []string // the inner bubblewrap's options (innerArgsFD)
	rest  []string // the outer bubblewrap's command line after its options
}

// bwrapArgs builds a run's command line for user u (root agents only): the
// outer bubblewrap's options (its namespaces, the mounts: system, /proc with
// procMasks, /dev, the private /dev/shm and /tmp, the binds, binds under
// /tmp after its tmpfs, wsDir, the child's part of the workspace, at
// /workspace), the inner bubblewrap's (the script's user and network
// namespaces, its environment, the filter), and what the outer runs: the
// privilege drop when the agent is root, the inner bubblewrap, the
// rlimits, then argv (paths as the sandbox sees them).
//
// The outer bubblewrap forks bubblewrap's own init as PID 1 of the run's
// PID namespace (killed with the outer bubblewrap, which dies with the
// agent) and writes that init's host PID to infoFD (see finish). The
// script runs in a user namespace nested below the init's, so that it
// cannot write to the init's memory, trace it or take its descriptors, even
// as the same uid (the kernel wants CAP_SYS_PTRACE in the init's user
// namespace), and, unless the network is on, in a network namespace of its
// own user namespace's, to which the host's kernel sends no uevents. The
// inner bubblewrap takes statusFD as its --json-status-fd and, when seccomp
// is set, installs the filter from seccompFD right before the script's
// first exec. (A PID namespace of the script's own would need its own
// /proc, which the kernel refuses below a root agent's: bubblewrap covers
// the writable parts of the outer /proc, and a covered /proc cannot be
// mounted again in a child user namespace.)
func (s *Executor) bwrapArgs(h *sandboxHost, u runUser, wsDir, skillName string, binds []bind, env, argv []string, seccomp, bounded bool) runArgs {
	return s.chainArgs(h, u, wsDir, skillName, binds, env, argv, seccomp, bounded, false)
}

// chainArgs is bwrapArgs, or, with waiter, the command line of a prepared
// sandbox: the same chain, the inner bubblewrap in /workspace with an
// empty environment, and, in place of argv, the waiter (see waiter_linux.go)
// reading the script's command line, environment and folder from goFD.
func (s *Executor) chainArgs(h *sandboxHost, u runUser, wsDir, skillName string, binds []bind, env, argv []string, seccomp, bounded, waiter bool) runArgs {
	ns := []string{"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox",
		"--unshare-cgroup-try", "--die-with-parent", "--new-session", "--info-fd", strconv.Itoa(infoFD)}
	if !s.network {
		// The helpers' own: /proc/1/net and /proc/2/net, which the
		// script can read, would otherwise show the host's interfaces,
		// routes and sockets.
		ns = append(ns, "--unshare-net")
	}
	kernel := []string{"--proc", "/proc"}
	for _, m := range h.procMasks {
		kernel = append(kernel, "--ro-bind", "/dev/null", m)
	}
	// No pseudo-terminals: every devpts instance but the host's draws on
	// one kernel-wide pool (kernel.pty.max less kernel.pty.reserve), and
	// bubblewrap sets no max= on its own, so one run could take them all
	// from every other run and container. A read-only empty /dev/pts
	// leaves /dev/ptmx dangling: openpty fails with ENOENT.
	kernel = append(kernel, "--dev", "/dev", "--perms", "0555", "--tmpfs", "/dev/pts")
	kernel = append(kernel, s.tmpMounts(filepath.Join(wsDir, host.TmpDirName))...)
	mounts := h.sys.mountArgs(binds, kernel)
	mounts = append(mounts, "--bind", wsDir, sandboxWorkspace)
	if s.egress != nil {
		// The hook: the agent's executable, bound from a descriptor (a
		// non-root outer bubblewrap may not open /proc/PID/exe), in
		// directories the run's uid can enter (bubblewrap makes them 0700
		// unless told).
		mounts = append(mounts, "--perms", "0755", "--dir", "/run", "--perms", "0755", "--dir", filepath.Dir(hookPath),
			"--ro-bind-fd", strconv.Itoa(hookExeFD), hookPath)
	}
	mounts = append(mounts,
		"--remount-ro", "/",
		"--remount-ro", "/dev",
		"--remount-ro", "/dev/pts",
	)

	var a runArgs
	a.inner = []string{"--unshare-user", "--disable-userns"}
	if h.root {
		a.inner = append(a.inner, "--uid", strconv.Itoa(u.insideUID), "--gid", strconv.Itoa(u.insideGID))
	}
	if !s.network {
		a.inner = append(a.inner, "--unshare-net")
	}
	a.inner = append(a.inner, "--cap-drop", "ALL", "--die-with-parent", "--dev-bind", "/", "/", "--clearenv")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		a.inner = append(a.inner, "--setenv", k, v)
	}
	a.inner = append(a.inner, "--json-status-fd", strconv.Itoa(statusFD))
	if seccomp {
		a.inner = append(a.inner, "--seccomp", strconv.Itoa(seccompFD))
	}
	if waiter {
		a.inner = append(a.inner, "--chdir", sandboxWorkspace)
	} else {
		a.inner = append(a.inner, "--chdir", sandboxWorkspace+"/"+skillName)
	}

	if h.root {
		// Privileged outer bwrap: namespaces and mounts as root, then
		// every capability dropped but what setpriv needs.
		a.outer = append(a.outer, ns...)
		a.outer = append(a.outer, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
		a.outer = append(a.outer, mounts...)
		// setpriv: to the run's host uid, no capabilities at all,
		// no_new_privs.
		a.rest = append(a.rest, "--", h.setpriv, "--reuid", strconv.Itoa(u.uid), "--regid", strconv.Itoa(u.gid), "--clear-groups",
			"--inh-caps=-all", "--bounding-set=-all", "--no-new-privs")
	} else {
		a.outer = append(a.outer, "--unshare-user", "--cap-drop", "ALL")
		a.outer = append(a.outer, ns...)
		a.outer = append(a.outer, mounts...)
	}
	a.rest = append(a.rest, "--", h.bwrap, "--args", strconv.Itoa(innerArgsFD), "--")
	a.rest = append(a.rest, s.prlimitArgs(h.prlimit, bounded)...)
	if waiter {
		return a.withWaiter(h)
	}
	if s.egress != nil {
		// Under the rlimits and the filter, in the script's namespaces:
		// the hook listens there, hands the socket over and becomes argv.
		a.rest = append(a.rest, hook.Args(hookPath, handoffFD, egress.InsidePort)...)
	}
	a.rest = append(a.rest, argv...)
	return a
}

// sandboxLauncher starts a run's child through bubblewrap. It is made per
// run.
type sandboxLauncher struct {
	s *Executor
	h *sandboxHost
	// user is who the run is, when the agent is root (see prepare).
	user runUser
	// status is the pipe the inner bubblewrap writes its JSON status to
	// (statusW is the child's statusFD); see finish.
	status, statusW *os.File
	// filter is the read end holding the seccomp program (seccompFD).
	filter *os.File
	// init follows the PID namespace's init (infoW is the child's infoFD).
	init  *nsInit
	infoW *os.File
	// args and innerArgs are the read ends the bubblewraps read their
	// options from (argsFD, innerArgsFD).
	args, innerArgs *os.File
	// egress is the run's egress proxy and its handoff, with an allowlist.
	egress *egressRun
	// prep is the prepared sandbox the run took (see Take), until Go
	// lets it go or kills it.
	prep *prepSandbox
	// parent is the run's workspace directory: the next sandbox prepared
	// once the run is over is for it ("": none, as for Probe's trial,
	// whose view is not a run's); next is its reservation, if the run
	// made one.
	parent string
	next   *reservation
	trial  bool
	// hurried is whether the run came before the last one's next
	// sandbox could be made after it (see prepPool.hurried); launching is
	// closed once the next sandbox, launched beside the run, is counted
	// as being made.
	hurried   bool
	launching chan struct{}
}

// egressRun is one run's egress: the handoff socket's two ends (childEnd
// and exe go to the child as handoffFD and hookExeFD and are closed once it
// runs), the proxy, and what became of the handoff.
type egressRun struct {
	ctx      context.Context // the run's: a handoff still awaited when it ends is given up
	agentEnd *net.UnixConn
	childEnd *os.File
	exe      *os.File
	proxy    *egress.Proxy
	handoff  chan error    // ReceiveListener's error, once it returned
	served   chan struct{} // closed when the proxy's Serve (if any) returned
	err      error         // the handoff's error, once Finish has it
}

// Bounds is the run's memory and process bound, which a cgroup of its own
// enforces where the host allows one.
func (l *sandboxLauncher) Bounds() (int64, int) {
	mem, _ := limit(l.s.memory, DefaultMemory)
	procs, _ := limit(l.s.procs, DefaultProcesses)
	return mem, procs
}

// Ready probes the machine once (see Probe) and keeps what it found.
func (l *sandboxLauncher) Ready(ctx context.Context) error {
	h, err := l.s.ready(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // cancelled while probing: not the machine's fault
		}
		return err
	}
	l.h = h
	return nil
}

// StageMode: when the agent is root, hard links to a root-owned, read-only
// snapshot, which the sandbox user can read but not change; otherwise the
// script runs as the snapshot's owner, so it gets clones or copies of its
// own.
func (l *sandboxLauncher) StageMode() host.StageMode {
	if l.h.root {
		return host.StageLink
	}
	return host.StageCloneOrCopy
}

// Prepare, when the agent is root, takes the run's user (a uid of its own,
// given back once the workspace is removed) and hands the child's part of
// the workspace (ws.Dir) to it, but for the files linked from a snapshot,
// which stay root's; ws.Root stays root's, 0700, and root still removes it
// all afterwards.
func (l *sandboxLauncher) Prepare(ws *host.Workspace) error {
	if !l.h.root {
		return nil
	}
	if l.prep == nil { // a prepared sandbox's user came with it
		u, err := l.s.user()
		if err != nil {
			return err
		}
		l.user = u
		ws.OnRemove(u.release)
	}
	u := l.user
	return chownTree(ws.Dir, u.uid, u.gid, func(p string) bool {
		rel, err := filepath.Rel(ws.Skill, p)
		return err == nil && ws.Shared[filepath.ToSlash(rel)]
	})
}

// Command builds the run's command. The outer bubblewrap starts with an
// empty environment: the script's goes to the inner bubblewrap as options,
// applied inside, so nothing of a request's Env acts on the host.
func (l *sandboxLauncher) Command(ctx context.Context, p *host.Plan) (*exec.Cmd, error) {
	v, err := l.s.view(ctx, l.h, p)
	if err != nil {
		return nil, err
	}
	if !l.trial {
		l.parent = filepath.Dir(p.WS.Root)
		l.s.remember(l.parent, v.binds)
	}
	env := v.env(p)
	if l.s.egress != nil {
		env = withProxyEnv(env, l.s.egress)
	}
	argv := append([]string{v.exe}, p.Argv[1:]...)
	a := l.s.bwrapArgs(l.h, l.user, p.WS.Dir, p.WS.Name, v.binds, env, argv, !l.s.noFilter, p.Bounded)
	var files []*os.File // opened so far, closed on failure
	fail := func(err error) (*exec.Cmd, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	if l.filter, err = seccompFile(); err != nil {
		return fail(fmt.Errorf("%w: %v", codeexec.ErrSandboxUnavailable, err))
	}
	files = append(files, l.filter)
	if l.status, l.statusW, err = os.Pipe(); err != nil {
		return fail(err)
	}
	files = append(files, l.status, l.statusW)
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	files = append(files, infoR, infoW)
	if l.args, err = argsFile(a.outer); err != nil {
		return fail(err)
	}
	files = append(files, l.args)
	if l.innerArgs, err = argsFile(a.inner); err != nil {
		return fail(err)
	}
	files = append(files, l.innerArgs)
	var eg *egressRun
	if l.s.egress != nil {
		if eg, err = l.s.newEgressRun(ctx); err != nil {
			return fail(fmt.Errorf("%w: egress: %v", codeexec.ErrSandboxUnavailable, err))
		}
	}
	l.init, l.infoW, l.egress = followInit(infoR), infoW, eg
	cmd := exec.CommandContext(ctx, l.h.bwrap, append([]string{"--args", strconv.Itoa(argsFD)}, a.rest...)...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{l.statusW, l.filter, l.infoW, l.args, l.innerArgs} // statusFD, seccompFD, infoFD, argsFD, innerArgsFD
	if eg != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, eg.childEnd, eg.exe) // handoffFD, hookExeFD
	}
	return cmd, nil
}

// withProxyEnv returns env with the variables that point a script's HTTP
// clients at the egress proxy (replacing any the script's environment
// already had).
func withProxyEnv(env []string, p *egress.Policy) []string {
	add := p.Env(egress.InsidePort)
	out := make([]string, 0, len(env)+len(add))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(add, func(a string) bool { return strings.HasPrefix(a, k+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}

// newEgressRun makes a run's handoff socket and proxy and opens the
// agent's executable for the hook.
func (s *Executor) newEgressRun(ctx context.Context) (*egressRun, error) {
	agentEnd, childEnd, err := egress.Pair()
	if err != nil {
		return nil, err
	}
	// The descriptor, not the path: a non-root outer bubblewrap gets
	// EACCES on /proc/PID/exe.
	exe, err := os.OpenFile("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		agentEnd.Close()
		childEnd.Close()
		return nil, err
	}
	return &egressRun{ctx: ctx, agentEnd: agentEnd, childEnd: childEnd, exe: exe,
		proxy:   egress.New(s.egress, egress.WithLimits(s.egressLimits)),
		handoff: make(chan error, 1), served: make(chan struct{})}, nil
}

// Started reserves the next run's sandbox (see reserve) and, with an
// allowlist, closes the agent's copies of the child's ends (so that a
// sandbox that ends without a handoff reads as end of file) and waits for
// the hook's listener in the background, then serves the run's proxy on
// it.
func (l *sandboxLauncher) Started(int) {
	if l.parent != "" {
		l.reserveNext(l.parent)
	}
	eg := l.egress
	if eg == nil {
		return
	}
	eg.closeChildEnds()
	go func() {
		defer close(eg.served)
		ln, err := egress.ReceiveListener(eg.ctx, eg.agentEnd, egress.InsidePort)
		eg.handoff <- err
		if err == nil {
			_ = eg.proxy.Serve(ln) // until Finish closes the proxy
		}
	}()
}

// closeChildEnds closes the agent's copies of what the child inherited.
func (eg *egressRun) closeChildEnds() {
	if eg.childEnd != nil {
		eg.childEnd.Close()
		eg.exe.Close()
		eg.childEnd, eg.exe = nil, nil
	}
}

// finish ends the run's egress once nothing of the run is alive: it
// takes the handoff's outcome (which has come by then: every copy of the
// child end is closed), closes the proxy, so that its report is final, and
// returns the handoff's error (nil: the hook handed a listener over).
func (eg *egressRun) finish(started bool) error {
	eg.closeChildEnds()
	if started {
		select {
		case eg.err = <-eg.handoff:
		case <-time.After(host.GroupGoneBound):
			eg.err = fmt.Errorf("%w: no word from the hook", egress.ErrHandoff)
		}
	} else {
		eg.err = fmt.Errorf("%w: the sandbox did not start", egress.ErrHandoff)
	}
	eg.agentEnd.Close() // ends a ReceiveListener still waiting
	_ = eg.proxy.Close()
	if started {
		<-eg.served
	}
	return eg.err
}

// argsFile returns a pipe to read opts from, NUL-separated, as bubblewrap's
// --args wants them; a goroutine writes them and closes its end (it ends
// with EPIPE when the child dies unread, once finish closes the read end).
// An option holding a NUL, which would split into two, is refused.
func argsFile(opts []string) (*os.File, error) {
	var b []byte
	for _, o := range opts {
		if hasNUL(o) {
			return nil, fmt.Errorf("%w: a sandbox option holds a NUL byte", codeexec.ErrInvalidRequest)
		}
		b = append(append(b, o...), 0)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		_, _ = w.Write(b)
		w.Close()
	}()
	return r, nil
}

// Finish ends a run once the outer bubblewrap has exited: it waits until
// the run's PID namespace is gone (see nsInit.end), so that no process of
// the run is alive when its files are collected, and then tells a run
// whose sandbox could not set up from a run of the script, from
// bubblewrap's own status and nothing else. The innermost bubblewrap writes
// an "exit-code" document when the command it started exits, and none when
// it, the outer bubblewrap or setpriv fails first (a mount it cannot make, a
// namespace it cannot create, a filter the kernel refuses); those exit with
// a status of their own, below 128. Such a run returns
// ErrSandboxUnavailable with bubblewrap's complaint instead of a Result with
// exit code 1. A run without the document whose chain died by a signal (a
// script that killed the helpers it can reach) and a run the pipeline killed
// (timeout, cancellation) keep their Result: the script ran.
func (l *sandboxLauncher) Finish(res *codeexec.Result) error {
	if l.parent != "" {
		defer l.prepareNext()
	}
	defer l.status.Close()
	l.statusW.Close()
	l.filter.Close()
	l.infoW.Close()
	l.args.Close()
	l.innerArgs.Close()
	l.init.end(host.GroupGoneBound)
	if l.egress != nil {
		if err := l.finishEgress(res); err != nil {
			return err
		}
	}
	if res == nil || res.TimedOut || res.ExitCode >= 128 {
		return nil
	}
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
	return fmt.Errorf("%w: bubblewrap %s could not start a sandbox (exit %d): %s: %s",
		codeexec.ErrSandboxUnavailable, l.h.version, res.ExitCode, firstLine(res.Stderr.Text), diagnose(res.Stderr.Text))
}

// finishEgress ends the run's egress and puts the hosts its proxy refused
// on res. A run whose hook handed no listener over never started its
// script (the hook executes the script only after the handoff), so unless
// it timed out it is the sandbox's failure: ErrSandboxUnavailable, with
// what the hook or the helper that could not start it said.
func (l *sandboxLauncher) finishEgress(res *codeexec.Result) error {
	err := l.egress.finish(res != nil)
	if res == nil {
		return nil
	}
	if w := l.egress.proxy.Report().Warning(); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if err == nil || res.TimedOut {
		return nil
	}
	exe, _ := os.Executable()
	uid := os.Geteuid()
	if l.h.root {
		uid = l.user.uid
	}
	return fmt.Errorf("%w: the sandbox's egress hook (this agent's own executable %s, started in the sandbox as uid %d before the script) handed no listener over (exit %d): %s: %v; "+
		"the executable must be executable by that user (world-executable, not on a noexec file system)",
		codeexec.ErrSandboxUnavailable, exe, uid, res.ExitCode, firstLine(res.Stderr.Text), err)
}

// maxStatus bounds what is read of a bubblewrap's JSON status.
const maxStatus = 64 << 10

// nsInit follows the init of a run's PID namespace: bubblewrap's own
// PID 1, whose host PID the outer bubblewrap writes to infoFD as soon as it
// has forked it. A pidfd is opened on it at once, while the outer
// bubblewrap, its parent, is alive and has not reaped it, so the pidfd is
// that process and no other.
type nsInit struct {
	r     *os.File
	done  chan struct{} // closed when the info stream has ended
	pidfd int           // -1 until known (read after done)
}

// followInit starts reading the outer bubblewrap's info stream from r.
func followInit(r *os.File) *nsInit {
	n := &nsInit{r: r, done: make(chan struct{}), pidfd: -1}
	go func() {
		defer close(n.done)
		dec := json.NewDecoder(io.LimitReader(r, maxStatus))
		for {
			var doc struct {
				ChildPID int `json:"child-pid"`
			}
			if dec.Decode(&doc) != nil {
				return
			}
			if doc.ChildPID > 0 && n.pidfd < 0 {
				if fd, err := unix.PidfdOpen(doc.ChildPID, 0); err == nil {
					n.pidfd = fd
				}
			}
		}
	}()
	return n
}

// end runs once the outer bubblewrap has exited. It waits until the init
// has exited, which the kernel lets it do only once every other member of
// its PID namespace has been killed and reaped, so that nothing of the run
// is alive; an init that outstays bound (the outer bubblewrap was killed
// and its parent-death signal is on its way) is killed. It then reaps the
// init if it has become this process's child, which it does when the agent
// is PID 1 of its container or a child subreaper; otherwise its new parent
// reaps it.
func (n *nsInit) end(bound time.Duration) {
	select {
	case <-n.done:
	case <-time.After(bound):
		n.r.Close() // something still holds the info pipe: stop reading it
		<-n.done
	}
	defer n.r.Close()
	if n.pidfd < 0 {
		return
	}
	defer unix.Close(n.pidfd)
	if !exitedWithin(n.pidfd, bound) {
		_ = unix.PidfdSendSignal(n.pidfd, unix.SIGKILL, nil, 0)
		exitedWithin(n.pidfd, bound)
	}
	for {
		err := unix.Waitid(unix.P_PIDFD, n.pidfd, nil, unix.WEXITED|unix.WNOHANG, nil)
		if err != unix.EINTR {
			return // reaped, or not this process's child (ECHILD)
		}
	}
}

// exitedWithin reports whether the process of pidfd has exited, waiting
// at most d for it.
func exitedWithin(pidfd int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		ms := int(time.Until(deadline) / time.Millisecond)
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}, max(ms, 0))
		switch {
		case n > 0:
			return true
		case err == unix.EINTR && ms > 0:
			continue
		}
		return false
	}
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

// chownTree gives dir and everything in it but what skip names to
// uid:gid, without following symbolic links.
func chownTree(dir string, uid, gid int, skip func(path string) bool) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip != nil && skip(p) {
			return nil
		}
		return os.Lchown(p, uid, gid)
	})
}

// isRoot reports whether the agent's process is root.
func isRoot() bool { return syscall.Geteuid() == 0 }
