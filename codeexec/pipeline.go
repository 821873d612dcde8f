package codeexec

// The run pipeline shared by every host executor (Local and Sandbox).
//
// One Execute is always the same sequence; only step 5 differs between
// executors, and it is the only thing a launcher provides:
//
//  1. the executor's configuration                  -> ErrInvalidConfig
//     and the request (paths, env, limits)          -> ErrInvalidRequest
//  2. choose the interpreter (req.Interpreter, else the table by extension)
//                                                   -> ErrUnsupportedScript
//  3. create a fresh private workspace (see workspace: a 0700 root the
//     child never sees, holding the part it does) and stage the skill
//     folder (streamed from req.Skill) and the extra files into it, keeping
//     a record of each (see snapshot)               -> ErrWorkspace
//     (removed by a defer on every path: success, failure, timeout,
//     cancellation, staging error)
//  4. build the child's environment from the allowlist and resolve the
//     interpreter with resolveInterpreter against the child's PATH
//                                                   -> ErrStart
//  5. launcher.prepare(ws), then launcher.command(ctx, plan)  <- THE SEAM
//     (and, after step 6's run, launcher.finish(res) if it has one)
//  6. the pipeline opens the skill root (a handle taken before the child
//     exists), wires the *exec.Cmd: Stdin, Stdout/Stderr (the write
//     ends of pipes it owns, read into streaming cappers by its own
//     goroutines), its own process group, Cancel (SIGKILL the group),
//     WaitDelay; then Start (failure -> ErrStart), wait, kill the group
//     again as soon as the leader exits, reap and wait until no member of
//     the group is left, read the output to its end (see run and drain),
//     and, if the skill root is still the directory it opened, walk it
//     from that handle without following links (see collect) and keep
//     what the run created or changed.
//
// # The seam
//
// A launcher turns a plan into an unstarted *exec.Cmd, created with
// exec.CommandContext(ctx, ...) so the run's deadline reaches it (a command
// without it is refused with ErrStart). It must NOT set
// Stdin, Stdout, Stderr, Cancel, WaitDelay or SysProcAttr.PidFD (the
// pipeline owns them and overwrites them), and must not start the command.
// It may set Path, Args, Env, Dir, ExtraFiles and SysProcAttr; the pipeline
// appends nil entries to ExtraFiles so that every descriptor the agent
// inherited without close-on-exec is closed in the child (closeInherited),
// and merges into the SysProcAttr it returns (it sets Setpgid and Pgid=0 and,
// on Linux, Pdeathsig and PidFD, keeping e.g. Credential), so a launcher
// must not set Setsid, Setctty or Foreground on the returned command (the
// group kill depends on the child leading its own process group).
//
//	type launcher interface {
//		prepare(ws *workspace) error
//		command(ctx context.Context, p *plan) (*exec.Cmd, error)
//	}
//
// prepare runs after staging, before the pre-run snapshot and before
// command: chown the child's part of the workspace (ws.dir, never ws.root)
// for an unprivileged uid, write a seccomp
// profile, and so on. An error from prepare is returned wrapped in
// ErrWorkspace unless it already wraps one of the package sentinels (a
// sandbox that cannot isolate returns ErrSandboxUnavailable and the run does
// not happen).
//
// A launcher may also implement finisher: finish(res) is then called once
// for every command it returned, after the run (res nil when the command
// did not start), before output files are collected. It closes what command
// kept open (ExtraFiles), waits for whatever of the run the process group
// does not hold (a sandbox's PID namespace), and may return an error instead
// of the result: a sandbox whose setup failed returns ErrSandboxUnavailable
// rather than the exit status of its own failure.
//
// command receives the plan: host paths of the workspace (p.ws.root,
// p.ws.dir, p.ws.skill, p.ws.home, p.ws.tmp; a launcher shows the child
// p.ws.dir at most, never p.ws.root), the resolved argv (p.argv[0] is the
// absolute host path of the interpreter, then the rest of Interpreter.Command,
// then the script path relative to the skill root, then req.Args), and the
// environment (p.env) built with the host paths. A launcher that shows the
// workspace to the child at another path rebuilds the environment with
// p.envAt(p.ws.under(base)) and sets the child's cwd to its view of the
// skill root; argv needs no rewriting because the script path is relative
// to the cwd. The Local launcher is the identity:
// exec.CommandContext(ctx, p.argv[0], p.argv[1:]...) with Dir = p.ws.skill
// and Env = p.env.
//
// Process-tree kill: the pipeline kills the child's process group
// (kill(-pgid, SIGKILL)) when the context is done, as soon as the group
// leader exits (observed without reaping it: waitid(WNOWAIT) on its pidfd
// on Linux, a kqueue NOTE_EXIT on the BSDs and macOS) and once more after
// Wait, so background children die with the run and do not hold its pipes. The output is then read to EOF, however long
// a loaded reader takes to drain the pipes. A process that leaves the group
// (setsid, setpgid) escapes that kill and survives; if it holds an output
// pipe, the pipeline closes the pipe once it has had nothing to read for
// WaitDelay (or after drainCapWaitDelays×WaitDelay if the escapee keeps
// writing), so it cannot hold the call open. A launcher that can do better (a PID namespace whose init is the
// leader: bwrap --unshare-pid --die-with-parent) gets it for free, because
// the pipeline kills the leader.
//
// The behaviour every executor must have is the suite in
// codeexec/codeexectest.
//
// # Sharing configuration
//
// Every host executor holds a config (interpreter table, workspace parent,
// environment additions, WaitDelay), set by the shared options (type
// Option: WithInterpreters, WithWorkspaceDir, WithEnv, WithPassEnv,
// WithWaitDelay). Option implements LocalOption through applyLocal; a
// SandboxOption interface with an applySandbox method lets the same
// functions configure NewSandbox. An executor runs a request with
//
//	execute(ctx, &cfg, launcher, req)

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"time"
)

// launcher is the seam between the shared pipeline and an executor: it
// decides only how the child is started. See the comment at the top of this
// file for the contract.
type launcher interface {
	// stageMode says how the run takes the skill folder's files (see
	// cache.go).
	stageMode() stageMode
	// prepare adapts the staged workspace to the launcher (ownership,
	// profiles). It runs once per Execute, after staging.
	prepare(ws *workspace) error
	// command returns the unstarted command that runs p.
	command(ctx context.Context, p *plan) (*exec.Cmd, error)
}

// groupRecorder is implemented by a launcher whose script leads a process
// group of the host's that the sweep after a dead agent may have to kill
// (Local, through the workspace's group file); a sandboxed run's processes
// die with its namespace, so a Sandbox run writes no such file.
type groupRecorder interface {
	recordsGroup()
}

// finisher is implemented by a launcher that must look at a run after it
// (see the comment at the top of this file).
type finisher interface {
	// finish releases what command kept for the run, waits for what is
	// left of it, and may turn its result into an error. res is nil when
	// the run did not start.
	finish(res *Result) error
}

// plan is everything a launcher needs to build the command.
type plan struct {
	ws *workspace
	// argv is the resolved command line: argv[0] is the absolute host path
	// of the interpreter, then the rest of Interpreter.Command, the script
	// path relative to the skill root ("scripts/x.py"), then req.Args.
	argv []string
	// env is the child's environment ("K=V", sorted), built with the host
	// paths of the workspace: envAt(ws.under(ws.dir)).
	env []string
	// layers are the environment additions above the allowlist, lowest
	// precedence first (host pass-through, WithEnv, req.Env).
	layers []map[string]string
	// execEnv is the environment interpreters are found and inspected
	// with: env without the request's Env, so that a request cannot choose
	// which host program runs.
	execEnv []string
	// hostPATH is the PATH the allowlist starts from.
	hostPATH string
}

// envAt returns the child's environment as seen with the workspace at d:
// the allowlist (see buildEnv) with the layers on top.
func (p *plan) envAt(d dirs) []string {
	return buildEnv(d, p.hostPATH, p.layers...)
}

// execute runs req through the shared pipeline with l starting the child.
func execute(ctx context.Context, cfg *config, l launcher, req *Request) (*Result, error) {
	if err := cfg.err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	in, err := cfg.interpreterFor(req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := stageRun(cfg, l, req)
	if err != nil {
		return nil, err
	}
	defer st.close()
	return st.run(ctx, cfg, l, req, in)
}

// stagedRun is a run whose workspace is ready: staged, adapted to the
// launcher, its skill root opened.
type stagedRun struct {
	ws   *workspace
	snap snapshot
	lim  Limits
	// root is the handle the output files are read through, taken before
	// the child exists: whatever the script does to the path, the walk
	// starts from the folder that was staged.
	root dirHandle
}

// stageRun creates the run's workspace and stages req into it (steps 3
// and 5's prepare of the sequence above).
func stageRun(cfg *config, l launcher, req *Request) (*stagedRun, error) {
	ws, err := newWorkspace(cfg.workspaceParent(), req.skillName())
	if err != nil {
		return nil, err
	}
	st := &stagedRun{ws: ws, lim: req.Limits.WithDefaults()}
	mode := l.stageMode()
	if st.snap, err = ws.stage(req, st.lim.MaxSkillBytes, mode, func() *cache { return cfg.cache(mode) }); err != nil {
		ws.remove()
		return nil, err
	}
	ws.shared = st.snap.sharedPaths()
	if err := l.prepare(ws); err != nil {
		ws.remove()
		if !isSentinel(err) {
			err = fmt.Errorf("%w: prepare: %w", ErrWorkspace, err)
		}
		return nil, err
	}
	if st.root, err = openDirHandle(ws.skill); err != nil {
		ws.remove()
		return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
	}
	return st, nil
}

// close releases the skill root's handle and removes the workspace.
func (st *stagedRun) close() {
	st.root.close()
	st.ws.remove()
}

// run builds the child's environment and command line, runs it through l,
// and collects what it wrote (steps 4 to 6).
func (st *stagedRun) run(ctx context.Context, cfg *config, l launcher, req *Request, in Interpreter) (*Result, error) {
	ws := st.ws
	p := &plan{ws: ws, hostPATH: os.Getenv("PATH")}
	p.layers = append(p.layers, cfg.passed(), cfg.env)
	p.execEnv = p.envAt(ws.under(ws.dir))
	p.layers = append(p.layers, req.Env)
	p.env = p.envAt(ws.under(ws.dir))
	prefix, err := resolveInterpreter(in.Command, p.execEnv, ws.skill)
	if err != nil {
		return nil, err
	}
	p.argv = append(append(append(prefix, in.Command[1:]...), req.Script), req.Args...)

	runCtx, cancel := context.WithTimeout(ctx, st.lim.Timeout)
	defer cancel()
	cmd, err := l.command(runCtx, p)
	if err != nil {
		if !isSentinel(err) {
			err = fmt.Errorf("%w: %w", ErrStart, err)
		}
		return nil, err
	}
	var res *Result
	if cmd.Cancel == nil {
		err = fmt.Errorf("%w: launcher did not use exec.CommandContext", ErrStart)
	} else {
		var started func(pid int)
		if _, ok := l.(groupRecorder); ok {
			started = ws.recordGroup
		}
		res, err = run(cmd, req.Stdin, st.lim.MaxOutputChars, cfg.waitDelayOrDefault(), started)
	}
	if f, ok := l.(finisher); ok {
		if ferr := f.finish(res); ferr != nil && err == nil {
			return nil, ferr
		}
	}
	if err != nil {
		return nil, err
	}
	res.Files, res.Omitted = collectFrom(ws.skill, st.root, st.snap, st.lim.Output)
	return res, nil
}

// collectFrom collects the output files from root, the skill root's handle,
// when the path skill still names that directory; a root the script
// replaced (renamed away, or swapped for a link or another folder) yields
// nothing but the omission that says so.
func collectFrom(skill string, root dirHandle, snap snapshot, lim FileLimits) ([]File, []OmittedFile) {
	now, err := os.Lstat(skill)
	was, err2 := root.stat()
	if err != nil || err2 != nil || !now.IsDir() || idOf(now) != idOf(was) {
		return nil, []OmittedFile{{Path: ".", Reason: reasonReplaced}}
	}
	return collect(root, snap, lim)
}

// run wires cmd (stdio, process group, cancellation), runs it to the end and
// kills whatever is left of its process group.
//
// The output pipes are the pipeline's own (see output): the child gets the
// write ends, the parent's copies are closed at once, and two readers of
// ours drain the read ends. After the leader has exited and its group has
// been killed, drain keeps reading until EOF, which comes as soon as the
// pipes are empty since no writer is left, so a reader that lags on a
// loaded machine never loses the end of a run's output. cmd.WaitDelay
// still bounds the copy of stdin (the only goroutine os/exec starts)
// and the wait for the leader after a cancellation; drain gives up on a
// pipe only when a process that escaped the group holds it.
//
// started, when not nil, is given the child's PID (its process group) once
// it runs.
func run(cmd *exec.Cmd, stdin []byte, maxChars int, waitDelay time.Duration, started func(pid int)) (*Result, error) {
	stdout, outW, err := newOutput(maxChars)
	if err != nil {
		return nil, fmt.Errorf("%w: stdout pipe: %w", ErrStart, err)
	}
	defer stdout.close()
	stderr, errW, err := newOutput(maxChars)
	if err != nil {
		outW.Close()
		return nil, fmt.Errorf("%w: stderr pipe: %w", ErrStart, err)
	}
	defer stderr.close()
	cmd.Stdin = nil // the null device: an empty stdin
	if len(stdin) > 0 {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Stdout, cmd.Stderr = outW, errW

	closeInherited(cmd)
	g := newProcGroup(cmd)
	var killed atomic.Bool
	cmd.Cancel = func() error {
		killed.Store(true)
		killTree(cmd)
		return nil
	}
	cmd.WaitDelay = waitDelay

	start := time.Now()
	err = cmd.Start()
	// The child holds its own copies of the write ends now (or never
	// will): while the parent kept one, no reader would see EOF.
	outW.Close()
	errW.Close()
	if err != nil {
		g.abort()
		return nil, fmt.Errorf("%w: %s: %w", ErrStart, cmd.Path, err)
	}
	stdout.start()
	stderr.start()
	g.started(cmd.Process.Pid)
	if started != nil {
		started(cmd.Process.Pid)
	}

	waitErr := cmd.Wait()
	g.finish() // stragglers that closed their pipes but kept running
	drain([]*output{stdout, stderr}, waitDelay, drainCapWaitDelays*waitDelay)
	dur := time.Since(start)

	if cmd.ProcessState == nil {
		return nil, fmt.Errorf("%w: wait: %w", ErrStart, waitErr)
	}
	return &Result{
		ExitCode: exitCode(cmd.ProcessState),
		TimedOut: killed.Load(),
		Duration: dur,
		Stdout:   stdout.stream(),
		Stderr:   stderr.stream(),
	}, nil
}

// isSentinel reports whether err already wraps one of the package sentinels.
func isSentinel(err error) bool {
	for _, s := range []error{ErrInvalidRequest, ErrInvalidConfig, ErrUnsupportedScript, ErrWorkspace, ErrStart, ErrSandboxUnavailable} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
