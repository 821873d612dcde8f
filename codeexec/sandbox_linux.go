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

// sandboxWorkspace is where a sandboxed run sees its workspace: the skill
// root is sandboxWorkspace/skill, HOME sandboxWorkspace/home, TMPDIR
// sandboxWorkspace/tmp.
const sandboxWorkspace = "/workspace"

// Execute runs req inside the sandbox. See [Executor] and [Sandbox]. When
// the sandbox cannot isolate on this machine, or bubblewrap fails to set up
// this run's sandbox, it returns an error wrapping [ErrSandboxUnavailable]
// and the script does not run.
func (s *Sandbox) Execute(ctx context.Context, req *Request) (*Result, error) {
	if err := s.cfg.err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	h, err := s.ready(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // cancelled while probing: not the machine's fault
		}
		return nil, err
	}
	return execute(ctx, &s.cfg, &sandboxLauncher{s: s, h: h}, req)
}

// Probe checks that this machine can run the sandbox: it finds bubblewrap
// and the util-linux tools, and runs a trial sandbox that must show an
// unprivileged uid, no capabilities, a private file system and (unless the
// network is enabled) only a loopback interface. It returns nil, or an
// error wrapping [ErrSandboxUnavailable] that says why and how to fix it.
// A success is remembered; Execute probes on its first call.
func (s *Sandbox) Probe(ctx context.Context) error {
	if err := s.cfg.err(); err != nil {
		return err
	}
	_, err := s.ready(ctx)
	return err
}

// ready returns the probed host, probing once until a probe succeeds.
func (s *Sandbox) ready(ctx context.Context) (*sandboxHost, error) {
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
func (s *Sandbox) bwrapArgs(h *sandboxHost, wsDir, skillName string, binds []bind, argv []string, statusFD int) []string {
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
	inner := []string{"--chdir", sandboxWorkspace + "/" + skillName, "--"}
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
	env := q.envAt(p.ws.under(sandboxWorkspace))
	argv := append([]string{v.exe}, p.argv[1:]...)
	if l.status, l.statusW, err = os.Pipe(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, l.h.bwrap, l.s.bwrapArgs(l.h, p.ws.dir, p.ws.name, v.binds, argv, statusFD)...)
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
