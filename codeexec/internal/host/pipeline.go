// Package host is the run pipeline every host executor shares (Local,
// Sandbox, and any later one such as gVisor): a fresh private workspace per
// run, staging through the snapshot cache, bounded streaming capture, the
// process-group kill, and collection of the files a run wrote. An executor
// provides only a [Launcher]: how the child is started. Its behaviour
// towards callers is the suite in codeexec/codeexectest.
package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/deps"
)

// Launcher is the seam between the shared pipeline and an executor: it
// decides only how the child is started. See the comment at the top of this
// file for the contract.
type Launcher interface {
	// StageMode says how the run takes the skill folder's files (see
	// cache.go).
	StageMode() StageMode
	// Prepare adapts the staged workspace to the launcher (ownership,
	// profiles). It runs once per Execute, after staging.
	Prepare(ws *Workspace) error
	// Command returns the unstarted Command that runs p.
	Command(ctx context.Context, p *Plan) (*exec.Cmd, error)
}

// Readier is implemented by a launcher that must check the machine before
// a run (a sandbox's probe): Execute calls Ready once the request is valid,
// before anything is staged, and a failure ends the run.
type Readier interface {
	Ready(ctx context.Context) error
}

// Bounder is implemented by a launcher whose runs are bounded in memory and
// processes: Bounds returns the run's memory bound in bytes and its process
// bound (zero or less: none). Where the host lets the agent make cgroups,
// the run gets one with those bounds (see Plan.Cgroup).
type Bounder interface {
	Bounds() (memBytes int64, procs int)
}

// GroupRecorder is implemented by a launcher whose script leads a process
// group of the host's that the sweep after a dead agent may have to kill
// (Local, through the workspace's group file); a sandboxed run's processes
// die with its namespace, so a Sandbox run writes no such file.
type GroupRecorder interface {
	RecordsGroup()
}

// Starter is implemented by a launcher that must act as soon as the child
// runs, before the pipeline waits for it: close its own copies of
// descriptors the child inherited, serve the child through them. Started
// gets the child's PID once the child is bounded (in its cgroup, with its
// OOM score) and let go; it must not block. It is not called when the start
// failed; Finish is, either way.
type Starter interface {
	Started(pid int)
}

// Finisher is implemented by a launcher that must look at a run after it
// (see the comment at the top of this file).
type Finisher interface {
	// Finish releases what command kept for the run, waits for what is
	// left of it, and may turn its result into an error. res is nil when
	// the run did not start.
	Finish(res *codeexec.Result) error
}

// Plan is everything a launcher needs to build the command.
type Plan struct {
	WS *Workspace
	// Argv is the resolved command line: Argv[0] is the absolute host path
	// of the interpreter, then the rest of Interpreter.Command, the script
	// path relative to the skill root ("scripts/x.py"), then req.Args.
	Argv []string
	// Env is the child's environment ("K=V", sorted), built with the host
	// paths of the workspace: envAt(ws.under(ws.dir)).
	Env []string
	// layers are the environment additions above the allowlist, lowest
	// precedence first (host pass-through, WithEnv, req.Env).
	layers []map[string]string
	// ExecEnv is the environment interpreters are found and inspected
	// with: env without the request's Env, so that a request cannot choose
	// which host program runs.
	ExecEnv []string
	// Binds are host folders the run must see read-only at the same paths
	// (its dependency environment); a launcher that shows the child only
	// part of the host binds them.
	Binds []string
	// deps is the environment of the script's declared dependencies.
	deps *deps.Env
	// Bounded reports that the run has a cgroup of its own, which holds
	// every process it starts and enforces the launcher's Bounds; without
	// one, the launcher's own bounds (rlimits) must apply.
	Bounded bool
	// HostPATH is the PATH the allowlist starts from.
	HostPATH string
}

// EnvAt returns the child's environment as seen with the workspace at d:
// the allowlist (see buildEnv) with the layers on top.
func (p *Plan) EnvAt(d Dirs) []string {
	layers := p.layers
	if p.deps != nil {
		// The dependencies above the allowlist, below everything else.
		layers = append([]map[string]string{p.deps.Vars(d.Skill)}, layers...)
	}
	return BuildEnv(d, p.HostPATH, layers...)
}

// GroupGoneBound is how long, at most, finish waits for the members of a
// killed process group to disappear. SIGKILL takes effect at once; only a
// process stuck in an uninterruptible sleep (a hung network file system)
// takes longer, and a dead process can no longer touch the workspace.
const GroupGoneBound = 5 * time.Second

// DirectCommand is the command that runs p's argv as a plain host process
// in the skill root, with p's environment: a launcher that adds no
// isolation (codeexec/local's) returns it as is.
func DirectCommand(ctx context.Context, p *Plan) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.Argv[0], p.Argv[1:]...)
	cmd.Dir = p.WS.Skill
	cmd.Env = p.Env
	return cmd
}

// Execute runs req through the shared pipeline with l starting the child.
func Execute(ctx context.Context, cfg *Config, l Launcher, req *codeexec.Request) (*codeexec.Result, error) {
	if err := cfg.Err(); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	in, err := cfg.InterpreterFor(req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r, ok := l.(Readier); ok {
		if err := r.Ready(ctx); err != nil {
			return nil, err
		}
	}
	st, err := stageRun(ctx, cfg, l, req)
	if err != nil {
		return nil, err
	}
	defer st.close(cfg)
	return st.run(ctx, cfg, l, req, in)
}

// stagedRun is a run whose workspace is ready: staged, adapted to the
// launcher, its skill root opened.
type stagedRun struct {
	ws   *Workspace
	snap snapshot
	lim  codeexec.Limits
	// root is the handle the output files are read through, taken before
	// the child exists: whatever the script does to the path, the walk
	// starts from the folder that was staged.
	root dirHandle
	// use is the snapshot the run links files of and could write through
	// (Local), checked after the run.
	use *snapshotUse
	// pr is the prepared child the run's workspace came with, until it is
	// let go or abandoned.
	pr *Prepared
	// cg is the run cgroup being made while the run is staged, for a run
	// without a prepared child.
	cg *cgroupAhead
}

// stageRun creates the run's workspace and stages req into it (steps 3
// and 5's prepare of the sequence above).
func stageRun(ctx context.Context, cfg *Config, l Launcher, req *codeexec.Request) (*stagedRun, error) {
	// The run cgroup is made while the workspace is taken and staged (a
	// launcher that may have a prepared child for the run brings its own,
	// or has one made when the run starts the usual way: see run).
	var cg *cgroupAhead
	if _, prep := l.(Preparer); !prep {
		cg = makeCgroupAhead(l)
	}
	st, err := takeWorkspace(ctx, cfg, l, req)
	if err != nil {
		if g := cg.take(); g != nil {
			g.remove()
		}
		return nil, err
	}
	st.cg = cg
	ws := st.ws
	mode := l.StageMode()
	if st.snap, st.use, err = ws.stage(req, st.lim.MaxSkillBytes, mode, func() *cache { return cfg.cache(mode) }); err != nil {
		st.abandon()
		ws.Remove()
		return nil, err
	}
	ws.Shared = st.snap.sharedPaths()
	if err := l.Prepare(ws); err != nil {
		st.use.release()
		st.abandon()
		ws.Remove()
		if !isSentinel(err) {
			err = fmt.Errorf("%w: prepare: %w", codeexec.ErrWorkspace, err)
		}
		return nil, err
	}
	if st.root, err = openDirHandle(ws.Skill); err != nil {
		st.use.release()
		st.abandon()
		ws.Remove()
		return nil, fmt.Errorf("%w: %w", codeexec.ErrWorkspace, err)
	}
	return st, nil
}

// takeWorkspace returns req's run with its workspace: a prepared child's,
// its skill folder named, when the launcher has one ready, else a new one.
func takeWorkspace(ctx context.Context, cfg *Config, l Launcher, req *codeexec.Request) (*stagedRun, error) {
	st := &stagedRun{lim: req.Limits.WithDefaults()}
	if pl, ok := l.(Preparer); ok {
		if st.pr = pl.Take(ctx, cfg.WorkspaceParent()); st.pr != nil {
			st.ws = st.pr.WS
			if err := st.ws.claim(stagedName(req)); err != nil {
				st.pr.Release()
				return nil, fmt.Errorf("%w: %w", codeexec.ErrWorkspace, err)
			}
			return st, nil
		}
	}
	ws, err := NewWorkspace(cfg.WorkspaceParent(), stagedName(req))
	if err != nil {
		return nil, err
	}
	st.ws = ws
	return st, nil
}

// abandon kills the run's prepared child, if it has one not let go yet,
// and has a run cgroup the run did not take removed with the workspace.
func (st *stagedRun) abandon() {
	if st.pr != nil {
		st.pr.Abandon()
		st.pr = nil
	}
	st.takeCgroup()
}

// stagedName is the staged folder's name of req.
func stagedName(req *codeexec.Request) string {
	if req.SkillName == "" {
		return codeexec.DefaultSkillName
	}
	return req.SkillName
}

// close releases the skill root's handle and has the workspace removed
// once Execute has returned (see RemoveLater).
func (st *stagedRun) close(cfg *Config) {
	st.abandon()
	st.use.release()
	st.root.close()
	cfg.RemoveLater(st.ws)
}

// takeCgroup returns the run cgroup made beside the staging, if any, once
// made, with its removal set (see removeWithWorkspace).
func (st *stagedRun) takeCgroup() *runCgroup {
	cg := st.cg.take()
	st.cg = nil
	return st.removeWithWorkspace(cg)
}

// removeWithWorkspace has the run cgroup cg (nil: none) removed with the
// run's workspace, after Execute returned (the run has killed what it held
// by then), and returns it.
func (st *stagedRun) removeWithWorkspace(cg *runCgroup) *runCgroup {
	if cg != nil {
		st.ws.OnRemove(cg.remove)
	}
	return cg
}

// cgroupAhead is a run cgroup being made in the background.
type cgroupAhead struct {
	done chan struct{} // closed once cg is set
	cg   *runCgroup    // nil: none could be made
}

// take waits until the cgroup is made and returns it (nil: none could be
// made, or a is nil).
func (a *cgroupAhead) take() *runCgroup {
	if a == nil {
		return nil
	}
	<-a.done
	return a.cg
}

// makeCgroupAhead starts making the run cgroup of a run of l, bounded as
// l says (see Bounder), while the run is staged: nil when l bounds
// nothing or this host gives runs no cgroup.
func makeCgroupAhead(l Launcher) *cgroupAhead {
	b, ok := l.(Bounder)
	if !ok {
		return nil
	}
	h, err := hostCgroups()
	if err != nil {
		return nil
	}
	mem, procs := b.Bounds()
	a := &cgroupAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.cg, _ = h.create(mem, procs)
	}()
	return a
}

// run builds the child's environment and command line, runs it through l,
// and collects what it wrote (steps 4 to 6).
func (st *stagedRun) run(ctx context.Context, cfg *Config, l Launcher, req *codeexec.Request, in codeexec.Interpreter) (*codeexec.Result, error) {
	ws := st.ws
	p := &Plan{WS: ws, HostPATH: os.Getenv("PATH")}
	p.layers = append(p.layers, cfg.EnvLayers()...)
	p.ExecEnv = p.EnvAt(ws.Under(ws.Dir))
	p.layers = append(p.layers, req.Env)
	p.Env = p.EnvAt(ws.Under(ws.Dir))
	prefix, err := ResolveInterpreter(in.Command, p.ExecEnv, ws.Skill)
	if err != nil {
		return nil, err
	}
	p.Argv = append(append(append(prefix, in.Command[1:]...), req.Script), req.Args...)
	// The script's declared dependencies, installed now if need be (with
	// ctx: an install does not eat the script's time limit).
	if p.deps, err = cfg.dependencies(ctx, os.DirFS(ws.Skill), req.Script, in.Language, prefix[0]); err != nil {
		return nil, err
	}
	defer p.deps.Close()
	if p.deps != nil {
		p.Binds = append(p.Binds, p.deps.Binds...)
		p.Env = p.EnvAt(ws.Under(ws.Dir))
	}

	if st.pr != nil {
		p.Bounded = st.pr.Bounded()
		ok, err := l.(Preparer).Go(ctx, p)
		if err != nil {
			return nil, err
		}
		if ok {
			return st.runPrepared(ctx, cfg, l, req, in)
		}
		st.pr = nil // abandoned by Go: the run starts the usual way
		p.Bounded = false
	}

	if st.cg == nil { // no prepared child, or Go refused it: make one now
		st.cg = makeCgroupAhead(l)
	}
	cg := st.takeCgroup() // nil: none here, the launcher's own bounds apply
	p.Bounded = cg != nil

	runCtx, cancel := context.WithTimeout(ctx, st.lim.Timeout)
	defer cancel()
	cmd, err := l.Command(runCtx, p)
	if err != nil {
		if !isSentinel(err) {
			err = fmt.Errorf("%w: %w", codeexec.ErrStart, err)
		}
		return nil, err
	}
	var res *codeexec.Result
	if cmd.Cancel == nil {
		err = fmt.Errorf("%w: launcher did not use exec.CommandContext", codeexec.ErrStart)
	} else {
		res, err = run(runCtx, cmd, req.Stdin, st.lim.MaxOutputChars, cfg.waitDelayOrDefault(), startedFunc(l, ws), cg)
	}
	return st.finish(l, req, in, res, err, cg)
}

// runPrepared runs the prepared child Go let go, to the end.
func (st *stagedRun) runPrepared(ctx context.Context, cfg *Config, l Launcher, req *codeexec.Request, in codeexec.Interpreter) (*codeexec.Result, error) {
	pr := st.pr
	st.pr = nil
	runCtx, cancel := context.WithTimeout(ctx, st.lim.Timeout)
	defer cancel()
	cg := st.removeWithWorkspace(pr.cg)
	pr.cg = nil
	res, err := runPrepared(runCtx, pr, cg, req.Stdin, st.lim.MaxOutputChars, cfg.waitDelayOrDefault())
	pr.closeOurs()
	return st.finish(l, req, in, res, err, cg)
}

// finish ends a run whose child has ended: the launcher looks at it, and
// the result gets its notes and the files the run wrote.
func (st *stagedRun) finish(l Launcher, req *codeexec.Request, in codeexec.Interpreter, res *codeexec.Result, err error, cg *runCgroup) (*codeexec.Result, error) {
	ws := st.ws
	if f, ok := l.(Finisher); ok {
		if ferr := f.Finish(res); ferr != nil && err == nil {
			return nil, ferr
		}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case cg != nil && cg.oomKilled():
		res.OutOfMemory = true
		res.Note = fmt.Sprintf("out of memory: the run used its %d MiB", cg.memBytes>>20)
	case res.ExitCode != 0 && in.Language == deps.Python:
		if mod, ok := deps.MissingModule(res.Stderr.Text); ok {
			res.Note = fmt.Sprintf("the script imports the Python module %s, which is not installed and which nothing the skill declares provides: a PEP 723 block or a requirements.txt must name the package", mod)
		}
	}
	res.Files, res.Omitted, res.Deleted = collectFrom(ws.Skill, st.root, st.snap, st.lim.Output)
	st.use.check(st.snap)
	return res, nil
}

// startedFunc is what run calls with the child's PID once it runs: the
// workspace records the group of a GroupRecorder's child, and a Starter is
// told. nil when neither applies.
func startedFunc(l Launcher, ws *Workspace) func(pid int) {
	_, record := l.(GroupRecorder)
	s, tell := l.(Starter)
	switch {
	case record && tell:
		return func(pid int) { ws.recordGroup(pid); s.Started(pid) }
	case record:
		return ws.recordGroup
	case tell:
		return s.Started
	}
	return nil
}

// collectFrom collects the output files and the deleted extra files from
// root, the skill root's handle, when the path skill still names that
// directory; a root the script replaced (renamed away, or swapped for a
// link or another folder) yields nothing but the omission that says so.
func collectFrom(skill string, root dirHandle, snap snapshot, lim codeexec.FileLimits) ([]codeexec.File, []codeexec.OmittedFile, []string) {
	now, err := os.Lstat(skill)
	was, err2 := root.stat()
	if err != nil || err2 != nil || !now.IsDir() || idOf(now) != idOf(was) {
		return nil, []codeexec.OmittedFile{{Path: ".", Reason: ReasonReplaced}}, nil
	}
	files, omitted := collect(root, snap, lim)
	return files, omitted, deleted(root, snap)
}

// Run wires cmd (stdio, process group, cancellation), runs it to the end and
// kills whatever is left of its process group. ctx is the context cmd was
// made with (see startBounded).
//
// The output pipes are the pipeline's own (see output): the child gets the
// write ends, the parent's copies are closed at once, and two readers of
// ours drain the read ends. After the leader has exited and its group has
// been killed, drain keeps reading until EOF, which comes as soon as the
// pipes are empty since no writer is left, so a reader that lags on a
// loaded machine never loses the end of a Run's output. cmd.WaitDelay
// still bounds the copy of stdin (the only goroutine os/exec starts)
// and the wait for the leader after a cancellation; drain gives up on a
// pipe only when a process that escaped the group holds it.
//
// started, when not nil, is given the child's PID (its process group) once
// it runs.
func Run(ctx context.Context, cmd *exec.Cmd, stdin []byte, maxChars int, waitDelay time.Duration, started func(pid int)) (*codeexec.Result, error) {
	return run(ctx, cmd, stdin, maxChars, waitDelay, started, nil)
}

// run is Run with the child started in the run cgroup cg (nil: none),
// whose processes are all killed once the leader has exited.
func run(ctx context.Context, cmd *exec.Cmd, stdin []byte, maxChars int, waitDelay time.Duration, started func(pid int), cg *runCgroup) (*codeexec.Result, error) {
	stdout, outW, err := newOutput(maxChars)
	if err != nil {
		return nil, fmt.Errorf("%w: stdout pipe: %w", codeexec.ErrStart, err)
	}
	defer stdout.close()
	stderr, errW, err := newOutput(maxChars)
	if err != nil {
		outW.Close()
		return nil, fmt.Errorf("%w: stderr pipe: %w", codeexec.ErrStart, err)
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
	cancel := func(c *exec.Cmd) func() error {
		return func() error {
			killed.Store(true)
			killTree(c)
			return nil
		}
	}
	cmd.Cancel = cancel(cmd)
	cmd.WaitDelay = waitDelay

	start := time.Now()
	cmd, err = startBounded(ctx, cmd, cg, cancel)
	// The child holds its own copies of the write ends now (or never
	// will): while the parent kept one, no reader would see EOF.
	outW.Close()
	errW.Close()
	if err != nil {
		g.abort()
		if cmd.Process != nil { // started, but could not be bounded
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return nil, fmt.Errorf("%w: %s: %w", codeexec.ErrStart, cmd.Path, err)
	}
	stdout.start()
	stderr.start()
	g.started(cmd.Process.Pid)
	if started != nil {
		started(cmd.Process.Pid)
	}

	waitErr := cmd.Wait()
	g.finish() // stragglers that closed their pipes but kept running
	if cg != nil {
		cg.kill(GroupGoneBound) // and those that left the group: the run's cgroup holds them
	}
	drain([]*output{stdout, stderr}, waitDelay, drainCapWaitDelays*waitDelay)
	dur := time.Since(start)

	if cmd.ProcessState == nil {
		return nil, fmt.Errorf("%w: wait: %w", codeexec.ErrStart, waitErr)
	}
	return &codeexec.Result{
		ExitCode: exitCode(cmd.ProcessState),
		TimedOut: killed.Load(),
		Duration: dur,
		Stdout:   stdout.stream(),
		Stderr:   stderr.stream(),
	}, nil
}

// isSentinel reports whether err already wraps one of the package sentinels.
func isSentinel(err error) bool {
	for _, s := range []error{codeexec.ErrInvalidRequest, codeexec.ErrInvalidConfig, codeexec.ErrUnsupportedScript, codeexec.ErrWorkspace, codeexec.ErrStart, codeexec.ErrSandboxUnavailable, codeexec.ErrDependencies, codeexec.ErrTooLarge} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
