package agentsandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
	processv1 "sigs.k8s.io/agent-sandbox/packages/sandboxd/spec/process/v1"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/execenv"
	"github.com/adkskills/adkskills/internal/truncate"
)

// Sizes of the transport.
const (
	// stdinChunk is the most one WriteStdin carries.
	stdinChunk = 256 << 10
	// windowBytes fixes gRPC's flow-control windows (it turns off their
	// growth up to 16 MiB), so what a fast script prints waits in the pod,
	// not in the agent's memory, until the capper has taken it.
	windowBytes = 1 << 20
	// maxNoteBytes bounds what the executor keeps of its own helper
	// processes' output (a staging error, the root path).
	maxNoteBytes = 4 << 10
)

// Exit codes of the staging script (see stageScript).
const (
	exitNoInterpreter = 100
	exitStageFailed   = 101
	exitNoSetsid      = 102
)

// stageScript runs in sandboxd's root with the staging archive on stdin and
// "$1" = the skill folder's name, "$2" = the interpreter command, "$3" = the
// script's PATH; its own PATH is the helpers'. It unpacks, checks that the
// trampoline's setsid exists (a helper, found in the helpers' PATH) and the
// interpreter in the script's PATH, so a missing one fails before anything
// runs, and prints, NUL-terminated, the root's absolute path (the
// environment needs it), setsid's, and then, in listFormat, every file it
// staged: collection takes a file whose size, inode and both times are
// still these for unchanged without reading it back.
const stageScript = `root=$(pwd -P) || exit 101
tar -x -p --no-same-owner -f - || exit 101
cd "$1" || exit 101
setsid=$(command -v setsid) || exit 102
PATH="$3" command -v "$2" >/dev/null 2>&1 || exit 100
printf '%s\0%s\0' "$root" "$setsid"
find . -mindepth 1 -type f -printf '` + listFormat + `' 2>/dev/null
exit 0
`

// trampoline runs the script: "$1" is setsid's path, the rest the
// interpreter, the script path and the request's arguments, passed through
// untouched. It starts them in a session of their own (their process
// group), with the trampoline's stdin and stderr, waits, then kills what is
// left of that group, so background children die when the script exits,
// and exits with the script's status (128+n for a death by signal n). The
// shell's own messages go nowhere.
const trampoline = `exec 3<&0 4>&2 2>/dev/null
setsid=$1
shift
"$setsid" "$@" <&3 2>&4 3<&- 4>&- &
pid=$!
exec 3<&- 4>&-
wait "$pid"
rc=$?
kill -s KILL -- "-$pid"
exit "$rc"
`

// claim creates a claim on the warm pool and waits until its sandbox is
// Ready and connected.
func (e *Executor) claim(ctx context.Context) (*sandbox.Sandbox, error) {
	cctx, cancel := context.WithTimeout(ctx, e.cfg.claimTimeout)
	defer cancel()
	if h := e.cfg.helper; h != nil && h.ExtensionsClient != nil {
		_, err := h.ExtensionsClient.SandboxWarmPools(e.cfg.namespace).Get(cctx, e.warmPool, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("%w: %w: %q in namespace %q", codeexec.ErrSandboxUnavailable, ErrNoWarmPool, e.warmPool, e.cfg.namespace)
		case err != nil:
			return nil, fmt.Errorf("%w: %w: checking warm pool %q: %w", codeexec.ErrSandboxUnavailable, ErrClaimNotReady, e.warmPool, err)
		}
	}
	sb, err := e.client.CreateSandbox(cctx, e.warmPool, e.cfg.namespace)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: claim abandoned: %w", codeexec.ErrSandboxUnavailable, context.Cause(ctx))
		}
		return nil, fmt.Errorf("%w: %w: warm pool %q, namespace %q, within %v: %w",
			codeexec.ErrSandboxUnavailable, ErrClaimNotReady, e.warmPool, e.cfg.namespace, e.cfg.claimTimeout, err)
	}
	return sb, nil
}

// release deletes sb's claim on a context detached from the caller's, so a
// cancelled or timed-out run still gives its pod back; a failure is logged.
func (e *Executor) release(ctx context.Context, sb *sandbox.Sandbox) {
	if err := e.deleteClaim(ctx, sb); err != nil {
		slog.ErrorContext(ctx, "agentsandbox: deleting the claim failed; delete it by hand",
			"claim", sb.ClaimName(), "namespace", e.cfg.namespace, "error", err)
	}
}

// deleteClaim deletes sb's claim within the cleanup timeout, on a context
// detached from ctx.
func (e *Executor) deleteClaim(ctx context.Context, sb *sandbox.Sandbox) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.cleanupTimeout)
	defer cancel()
	return e.client.DeleteSandbox(cctx, sb.ClaimName(), e.cfg.namespace)
}

// pod is the connection to one claimed sandbox's sandboxd.
type pod struct {
	cfg  *config
	addr string
	fwd  *forward // the port-forward the connection runs over, or nil
	conn *grpc.ClientConn
	proc processv1.ProcessServiceClient
}

// connect prepares the gRPC connection to sb's sandboxd (dialled lazily by
// the first call); with WithPortForward it first opens the port-forward.
func (e *Executor) connect(sb *sandbox.Sandbox) (*pod, error) {
	host, via := sb.PodIP(), "pod IP"
	switch {
	case e.cfg.portForward:
		host, via = sb.PodName(), "pod name"
	case e.cfg.serviceDNS:
		host, via = sb.ServiceFQDN(), "service DNS name"
	}
	if host == "" {
		return nil, fmt.Errorf("%w: %w: sandbox %s has no %s", codeexec.ErrSandboxUnavailable, ErrUnreachable, sb.SandboxName(), via)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(e.cfg.grpcPort))
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(windowBytes),
		grpc.WithInitialConnWindowSize(windowBytes),
	}
	var fwd *forward
	switch {
	case e.cfg.portForward:
		var err error
		if fwd, err = e.openForward(sb); err != nil {
			return nil, fmt.Errorf("%w: %w: %w", codeexec.ErrSandboxUnavailable, ErrUnreachable, err)
		}
		addr = "port-forward to " + addr
		opts = append(opts, grpc.WithContextDialer(fwd.dial))
	case e.cfg.dialer != nil:
		opts = append(opts, grpc.WithContextDialer(e.cfg.dialer))
	}
	conn, err := grpc.NewClient("passthrough:///"+net.JoinHostPort(host, strconv.Itoa(e.cfg.grpcPort)), opts...)
	if err != nil {
		if fwd != nil {
			fwd.close()
		}
		return nil, fmt.Errorf("%w: %w: %s: %w", codeexec.ErrSandboxUnavailable, ErrUnreachable, addr, err)
	}
	return &pod{cfg: &e.cfg, addr: addr, fwd: fwd, conn: conn, proc: processv1.NewProcessServiceClient(conn)}, nil
}

func (p *pod) close() {
	_ = p.conn.Close()
	if p.fwd != nil {
		p.fwd.close()
	}
}

// execute stages, runs and collects j in the pod.
func (p *pod) execute(ctx context.Context, j *job) (*codeexec.Result, error) {
	root, err := p.stage(ctx, j)
	if err != nil {
		return nil, err
	}
	res, err := p.run(ctx, j, p.env(j, root))
	if err != nil {
		return nil, err
	}
	if ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, p.cfg.transferTimeout)
		defer cancel()
		res.Files, res.Omitted, res.Deleted = p.collect(cctx, j)
	}
	return res, nil
}

// env returns the script's environment ("K=V", sorted): the host
// executors' allowlist with the workspace at root, then the operator's
// variables, then the request's.
func (p *pod) env(j *job, root string) []string {
	return execenv.Build(root+"/"+j.skillName, root+"/"+homeDir, root+"/"+tmpDir, "", p.cfg.shared.Env(), j.req.Env)
}

// argv prefixes command with env -i and the environment, so the process
// sees env and nothing of the pod's own environment.
func argv(env []string, command ...string) []string {
	out := append([]string{"env", "-i", "--"}, env...)
	return append(out, command...)
}

// helperPATH is the PATH of the pod's helpers (tar, find, sh): the
// operator's (WithEnv), else DefaultPATH; a request's Env never reaches
// them.
func (p *pod) helperPATH() string {
	if v := p.cfg.shared.Env()["PATH"]; v != "" {
		return v
	}
	return DefaultPATH
}

// scriptPATH is the PATH of j's script.
func (p *pod) scriptPATH(j *job) string {
	if v := j.req.Env["PATH"]; v != "" {
		return v
	}
	return p.helperPATH()
}

// stage unpacks j into the pod and returns sandboxd's root directory.
func (p *pod) stage(ctx context.Context, j *job) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.transferTimeout)
	defer cancel()
	var root string
	var perr error
	out, errOut := &splitWriter{sep: 0, line: func(rec []byte) {
		switch {
		case root == "":
			root = string(rec)
			return
		case j.setsid == "":
			j.setsid = string(rec)
			return
		}
		e, err := parseListed(rec)
		switch st, ok := j.snap[e.path]; {
		case err != nil:
			perr = err
		case ok && e.size == st.size:
			st.stamp = e.stamp
			j.snap[e.path] = st
		}
	}}, &note{}
	pr, err := p.start(ctx, proc{
		argv:    argv([]string{"PATH=" + p.helperPATH()}, "/bin/sh", "-c", stageScript, "adkskills-stage", j.skillName, j.interp.Command[0], p.scriptPATH(j)),
		stdin:   j.writeTar,
		stdout:  out,
		stderr:  errOut,
		connect: true,
	})
	var lost *LostError
	switch {
	case errors.As(err, &lost):
		// Whatever staging got to, the script did not start.
		return "", &LostError{Err: lost.Err}
	case err != nil:
		return "", errWorkspace(err)
	case pr.stdinErr != nil:
		return "", errWorkspace(pr.stdinErr)
	case pr.exit == exitNoInterpreter:
		return "", fmt.Errorf("%w: interpreter %q not found in the pod's PATH %q", codeexec.ErrStart, j.interp.Command[0], p.scriptPATH(j))
	case pr.exit == exitNoSetsid:
		return "", fmt.Errorf("%w: the pod's image has no setsid (util-linux) in PATH %q", codeexec.ErrSandboxUnavailable, p.helperPATH())
	case pr.exit != 0:
		return "", fmt.Errorf("%w: staging in the pod exited %d: %s", codeexec.ErrWorkspace, pr.exit, strings.TrimSpace(errOut.String()))
	case perr != nil:
		return "", errWorkspace(perr)
	}
	if !strings.HasPrefix(root, "/") || strings.ContainsRune(root, '\n') || !strings.HasPrefix(j.setsid, "/") {
		return "", fmt.Errorf("%w: staging reported root %q and setsid %q", codeexec.ErrWorkspace, root, j.setsid)
	}
	return root, nil
}

// run runs the script under the trampoline within j's time limit.
func (p *pod) run(ctx context.Context, j *job, env []string) (*codeexec.Result, error) {
	stdout, stderr := truncate.NewCapper(j.limits.MaxOutputChars), truncate.NewCapper(j.limits.MaxOutputChars)
	command := append([]string{"/bin/sh", "-c", trampoline, "adkskills-run", j.setsid}, j.interp.Command...)
	command = append(command, j.req.Script)
	command = append(command, j.req.Args...)
	rctx, cancel := context.WithTimeout(ctx, j.limits.Timeout)
	defer cancel()
	start := time.Now()
	pr, err := p.start(rctx, proc{
		argv:   argv(env, command...),
		cwd:    j.skillName,
		stdin:  func(w io.Writer) error { _, err := w.Write(j.req.Stdin); return err },
		stdout: stdout,
		stderr: stderr,
	})
	res := &codeexec.Result{Duration: time.Since(start), ExitCode: pr.exit}
	switch {
	case errors.Is(err, errStopped):
		res.TimedOut, res.ExitCode = true, 128+int(syscall.SIGKILL)
	case err != nil:
		return nil, err
	}
	res.Stdout = codeexec.Stream{Text: stdout.String(), TotalChars: stdout.TotalChars(), TotalBytes: stdout.TotalBytes(), Truncated: stdout.Truncated()}
	res.Stderr = codeexec.Stream{Text: stderr.String(), TotalChars: stderr.TotalChars(), TotalBytes: stderr.TotalBytes(), Truncated: stderr.Truncated()}
	return res, nil
}

// proc is one process to run in the pod.
type proc struct {
	argv           []string
	cwd            string                // relative to sandboxd's root; "": the root
	stdin          func(io.Writer) error // writes the process's stdin; nil: empty
	stdout, stderr io.Writer
	// connect: this is the run's first call, bounded by the connect
	// timeout until the process starts; failing to reach sandboxd is then
	// ErrUnreachable.
	connect bool
}

// procResult is how a process ended.
type procResult struct {
	exit     int
	stdinErr error // the stdin writer's own error, if it failed
}

// errStopped: the process was stopped because its context ended (its time
// limit or the caller's cancellation). sandboxd kills its process tree when
// the stream is cancelled.
var errStopped = errors.New("agentsandbox: process stopped")

// start runs pr in the pod to its exit, writing its stdin concurrently and
// its output to pr.stdout and pr.stderr as it arrives.
func (p *pod) start(ctx context.Context, pr proc) (procResult, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cwd *string
	if pr.cwd != "" {
		cwd = &pr.cwd
	}
	var callOpts []grpc.CallOption
	var connectTimer *time.Timer
	if pr.connect {
		callOpts = append(callOpts, grpc.WaitForReady(true))
		connectTimer = time.AfterFunc(p.cfg.connectTimeout, cancel)
	}
	stream, err := p.proc.Start(sctx, &processv1.StartRequest{Config: &processv1.ProcessConfig{Command: pr.argv, Cwd: cwd}}, callOpts...)
	var first *processv1.StartResponse
	if err == nil {
		first, err = stream.Recv()
	}
	if connectTimer != nil && !connectTimer.Stop() && err != nil && ctx.Err() == nil {
		return procResult{}, fmt.Errorf("%w: %w: %s did not answer within %v", codeexec.ErrSandboxUnavailable, ErrUnreachable, p.addr, p.cfg.connectTimeout)
	}
	if err != nil {
		return procResult{}, p.startError(ctx, err)
	}
	pid := first.GetInit().GetProcessId()
	if first.GetInit() == nil {
		return procResult{}, &LostError{Err: fmt.Errorf("sandboxd sent %v before the process started", first.GetEvent())}
	}

	// The stdin writer runs beside the reader: a script that prints before
	// it reads would otherwise deadlock both. If what it writes fails (a
	// staging archive over the limit), it stops the process.
	stdinDone := make(chan error, 1)
	go func() {
		err := p.writeStdin(sctx, pid, pr.stdin)
		if err != nil {
			cancel()
		}
		stdinDone <- err
	}()
	var res procResult
	for {
		msg, err := stream.Recv()
		if err != nil {
			cancel()
			res.stdinErr = <-stdinDone
			switch {
			case ended(ctx, err):
				return res, errStopped
			case res.stdinErr != nil:
				return res, res.stdinErr
			}
			if err == io.EOF {
				err = errors.New("the stream ended without an exit event")
			}
			return res, &LostError{Started: true, Err: err}
		}
		switch ev := msg.GetEvent().(type) {
		case *processv1.StartResponse_Stdout:
			_, _ = pr.stdout.Write(ev.Stdout)
		case *processv1.StartResponse_Stderr:
			_, _ = pr.stderr.Write(ev.Stderr)
		case *processv1.StartResponse_Exit:
			res.exit = int(ev.Exit.GetExitCode())
			cancel()
			res.stdinErr = <-stdinDone
			return res, nil
		}
	}
}

// ended reports whether err comes from ctx ending. gRPC sends a call's
// deadline to the server, which may end the stream a moment before the
// client's own timer fires: a DeadlineExceeded status past ctx's deadline
// is ctx ending too.
func ended(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && status.Code(err) == codes.DeadlineExceeded && !time.Now().Add(time.Second).Before(dl)
}

// startError classifies a failure before the process started.
func (p *pod) startError(ctx context.Context, err error) error {
	if ended(ctx, err) {
		return errStopped
	}
	switch status.Code(err) {
	case codes.Unavailable:
		return fmt.Errorf("%w: %w: %s: %w", codeexec.ErrSandboxUnavailable, ErrUnreachable, p.addr, err)
	case codes.NotFound, codes.PermissionDenied, codes.InvalidArgument:
		return fmt.Errorf("%w: sandboxd could not start the process: %w", codeexec.ErrSandboxUnavailable, err)
	}
	return &LostError{Err: err}
}

// writeStdin sends what write produces to the process pid in chunks, then
// EOF. A process that exits without reading it all is not an error.
func (p *pod) writeStdin(ctx context.Context, pid int32, write func(io.Writer) error) error {
	sw := &stdinWriter{ctx: ctx, proc: p.proc, pid: pid}
	if write != nil {
		bw := bufio.NewWriterSize(sw, stdinChunk)
		err := write(bw)
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			if sw.gone {
				return nil
			}
			return err
		}
	}
	_, err := p.proc.WriteStdin(ctx, &processv1.WriteStdinRequest{ProcessId: pid, Payload: &processv1.WriteStdinRequest_Eof{Eof: &emptypb.Empty{}}})
	if err != nil {
		return nil // the process is gone or the stream ended: its exit says the rest
	}
	return nil
}

// stdinWriter is an io.Writer over WriteStdin.
type stdinWriter struct {
	ctx  context.Context
	proc processv1.ProcessServiceClient
	pid  int32
	gone bool // the process stopped taking input
}

func (w *stdinWriter) Write(b []byte) (int, error) {
	for n := 0; n < len(b); {
		k := min(len(b)-n, stdinChunk)
		if _, err := w.proc.WriteStdin(w.ctx, &processv1.WriteStdinRequest{ProcessId: w.pid, Payload: &processv1.WriteStdinRequest_Input{Input: b[n : n+k]}}); err != nil {
			w.gone = true
			return n, fmt.Errorf("stdin: %w", err)
		}
		n += k
	}
	return len(b), nil
}

// note keeps the first maxNoteBytes written to it.
type note struct{ strings.Builder }

func (n *note) Write(b []byte) (int, error) {
	if room := maxNoteBytes - n.Len(); room > 0 {
		n.Builder.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}
