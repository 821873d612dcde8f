package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// Prepared sandboxes: while a run goes on (and until preparedIdle after
// it), the executor keeps up to WithPrepared sandboxes made ahead for the
// next runs in the same workspace directory: the whole chain (outer
// bubblewrap, setpriv, inner bubblewrap, prlimit) up to the waiter, in an
// empty workspace of its own bound at /workspace, its uid leased, its run
// cgroup made, the filter loaded. A run takes one, stages the skill into
// its workspace and sends the waiter the script's command line; the
// sandbox serves that run only and is gone after it. A run whose view of
// the host (the binds: its interpreter, its dependencies) differs from the
// one the sandbox was made with kills it and starts a sandbox the usual
// way. With WithEgress (a proxy per run) nothing is prepared.

// preparedIdle is how long a prepared sandbox waits for a run before it is
// released: an idle agent holds none.
var preparedIdle = 30 * time.Second

// prepPool is an executor's prepared sandboxes.
type prepPool struct {
	mu     sync.Mutex
	ready  []*prepSandbox
	making int
	// last is, per workspace directory, the binds of the last run there:
	// what the next sandbox for it is made with.
	last   map[string][]bind
	closed bool
	// broken is set when a prepared sandbox could not run a script
	// that a fresh one could (the agent's executable cannot start in the
	// sandbox): nothing more is prepared.
	broken bool
	// made is signalled (on mu) whenever making drops.
	made *sync.Cond
	// went counts the runs prepared sandboxes ran.
	went atomic.Int64
}

// prepSandbox is one prepared sandbox: the host's prepared child and what
// the run's launcher takes over from it.
type prepSandbox struct {
	pr     *host.Prepared
	ws     *host.Workspace
	parent string
	binds  []bind
	user   runUser
	// The launcher's descriptors, as Command makes them (see Finish).
	status, statusW, filter, infoW, args, innerArgs *os.File
	init                                            *nsInit
	goW                                             *os.File // the waiter's go pipe
	timer                                           *time.Timer
}

// preparedCount is how many sandboxes s keeps prepared.
func (s *Executor) preparedCount() int {
	if !s.preparedSet {
		return 1
	}
	return s.prepared
}

// canPrepare reports whether s prepares sandboxes at all.
func (s *Executor) canPrepare() bool {
	if s.preparedCount() <= 0 || s.egress != nil {
		return false
	}
	for _, b := range s.readOnly {
		if hookPath == b.dst || inDir(hookPath, b.dst) {
			return false
		}
	}
	return true
}

// Take hands the run a prepared sandbox for parent, if one is ready, and
// starts preparing the next.
func (l *sandboxLauncher) Take(parent string) *host.Prepared {
	s := l.s
	if !s.canPrepare() {
		return nil
	}
	pp := &s.state.prep
	pp.mu.Lock()
	i := slices.IndexFunc(pp.ready, func(p *prepSandbox) bool { return p.parent == parent })
	var ps *prepSandbox
	if i >= 0 {
		ps = pp.ready[i]
		pp.ready = slices.Delete(pp.ready, i, i+1)
		ps.timer.Stop()
	}
	pp.mu.Unlock()
	if ps == nil {
		return nil
	}
	if !ps.pr.Alive() {
		ps.release()
		return nil
	}
	l.prep = ps
	l.user = ps.user
	l.status, l.statusW, l.filter, l.infoW, l.args, l.innerArgs, l.init = ps.status, ps.statusW, ps.filter, ps.infoW, ps.args, ps.innerArgs, ps.init
	return ps.pr
}

// Go lets the prepared sandbox run p, when the run's view of the host is
// the one it was made with; otherwise it kills it and says so.
func (l *sandboxLauncher) Go(ctx context.Context, p *host.Plan) (bool, error) {
	ps := l.prep
	v, err := l.s.view(ctx, l.h, p)
	if err != nil {
		ps.pr.Abandon()
		ps.closeFiles()
		l.prep = nil
		return false, err
	}
	l.parent = ps.parent
	l.s.remember(ps.parent, v.binds)
	if !slices.Equal(v.binds, ps.binds) || !ps.pr.Alive() {
		ps.pr.Abandon()
		ps.closeFiles()
		l.prep = nil
		return false, nil
	}
	q := *p
	q.HostPATH = v.path
	dir := sandboxWorkspace + "/" + p.WS.Name
	m := goMessage{
		Argv: append([]string{v.exe}, p.Argv[1:]...),
		// PWD as bubblewrap's --chdir sets it in an unprepared run.
		Env:     append(q.EnvAt(p.WS.Under(sandboxWorkspace)), "PWD="+dir),
		Dir:     dir,
		Rlimits: l.s.rlimits(p.Bounded),
	}
	b, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	w := ps.goW
	ps.goW = nil
	l.s.state.prep.went.Add(1)
	go func() {
		_, _ = w.Write(b)
		w.Close()
	}()
	return true, nil
}

// remember records the binds of a run in parent: the next sandbox
// prepared for parent (once the run is over, see Finish) gets them.
func (s *Executor) remember(parent string, binds []bind) {
	if !s.canPrepare() {
		return
	}
	pp := &s.state.prep
	pp.mu.Lock()
	if pp.last == nil {
		pp.last = map[string][]bind{}
	}
	pp.last[parent] = binds
	pp.mu.Unlock()
}

// refill starts preparing a sandbox for parent when fewer than the bound
// are ready or being made.
func (s *Executor) refill(h *sandboxHost, parent string) {
	pp := &s.state.prep
	pp.mu.Lock()
	binds, known := pp.last[parent]
	if !s.canPrepare() || pp.closed || pp.broken || !known || len(pp.ready)+pp.making >= s.preparedCount() {
		pp.mu.Unlock()
		return
	}
	pp.making++
	pp.mu.Unlock()
	// The workspace now, the chain in the background: once the run that
	// asked is over, nothing more is made in its workspace directory (a
	// test's t.TempDir may be removed at once).
	ps, err := s.prepareWorkspace(h, parent, binds)
	go func() {
		if err == nil {
			err = s.prepare(h, ps)
		}
		pp.mu.Lock()
		pp.making--
		pp.cond().Broadcast()
		if errors.Is(err, errWaiterDidNotStart) {
			pp.broken = true // the usual path for every run from now on
		}
		keep := err == nil && !pp.closed
		if keep {
			pp.ready = append(pp.ready, ps)
			ps.timer = time.AfterFunc(preparedIdle, func() { s.expire(ps) })
		}
		pp.mu.Unlock()
		if err == nil && !keep {
			ps.release()
		}
	}()
}

// expire releases ps if no run has taken it.
func (s *Executor) expire(ps *prepSandbox) {
	pp := &s.state.prep
	pp.mu.Lock()
	i := slices.Index(pp.ready, ps)
	if i >= 0 {
		pp.ready = slices.Delete(pp.ready, i, i+1)
	}
	pp.mu.Unlock()
	if i >= 0 {
		ps.release()
	}
}

// closePrepared releases every prepared sandbox and prepares no more.
func (s *Executor) closePrepared() {
	pp := &s.state.prep
	pp.mu.Lock()
	pp.closed = true
	ready := pp.ready
	pp.ready = nil
	pp.mu.Unlock()
	for _, ps := range ready {
		ps.timer.Stop()
		ps.release()
	}
	pp.waitMade() // a sandbox made meanwhile releases itself: closed
}

// cond returns made, made on first use. pp.mu is held.
func (pp *prepPool) cond() *sync.Cond {
	if pp.made == nil {
		pp.made = sync.NewCond(&pp.mu)
	}
	return pp.made
}

// waitMade waits until no sandbox is being made.
func (pp *prepPool) waitMade() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	for pp.making > 0 {
		pp.cond().Wait()
	}
}

// prepareWorkspace makes the workspace of a sandbox for a run in parent
// with binds, and leases its user.
func (s *Executor) prepareWorkspace(h *sandboxHost, parent string, binds []bind) (*prepSandbox, error) {
	ws, err := host.NewPreparedWorkspace(parent)
	if err != nil {
		return nil, err
	}
	ps := &prepSandbox{parent: parent, binds: binds}
	if h.root {
		if ps.user, err = s.user(); err != nil {
			ws.Remove()
			return nil, err
		}
		ws.OnRemove(ps.user.release)
		if err = chownTree(ws.Dir, ps.user.uid, ps.user.gid, nil); err != nil {
			ws.Remove()
			return nil, err
		}
	}
	ps.ws = ws
	return ps, nil
}

// prepare starts the chain of ps, whose workspace is made.
func (s *Executor) prepare(h *sandboxHost, ps *prepSandbox) (err error) {
	ws, binds := ps.ws, ps.binds
	defer func() {
		if err != nil {
			ps.closeFiles()
			ws.Remove()
		}
	}()
	var goR, readyR, readyW *os.File
	defer func() {
		for _, f := range []*os.File{goR, readyR, readyW} {
			if f != nil {
				f.Close()
			}
		}
	}()
	var exe *os.File
	defer func() {
		if exe != nil {
			exe.Close()
		}
	}()
	build := func(bounded bool) (*exec.Cmd, error) {
		var err error
		if ps.filter, err = seccompFile(); err != nil {
			return nil, err
		}
		if ps.status, ps.statusW, err = os.Pipe(); err != nil {
			return nil, err
		}
		infoR, infoW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		ps.init, ps.infoW = followInit(infoR), infoW
		if goR, ps.goW, err = os.Pipe(); err != nil {
			return nil, err
		}
		if readyR, readyW, err = os.Pipe(); err != nil {
			return nil, err
		}
		if exe, err = os.OpenFile("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
			return nil, err
		}
		a := s.chainArgs(h, ps.user, ws.Dir, "", binds, nil, nil, !s.noFilter, bounded, true)
		if ps.args, err = argsFile(a.outer); err != nil {
			return nil, err
		}
		if ps.innerArgs, err = argsFile(a.inner); err != nil {
			return nil, err
		}
		cmd := exec.Command(h.bwrap, append([]string{"--args", strconv.Itoa(argsFD)}, a.rest...)...)
		cmd.Env = []string{}
		cmd.Dir = "/"
		cmd.ExtraFiles = []*os.File{ps.statusW, ps.filter, ps.infoW, ps.args, ps.innerArgs, goR, exe, readyW} // statusFD … innerArgsFD, goFD, hookExeFD, readyFD
		return cmd, nil
	}
	mem, _ := limit(s.memory, DefaultMemory)
	procs, _ := limit(s.procs, DefaultProcesses)
	if ps.pr, err = host.StartPrepared(ws, build, mem, procs); err != nil {
		return err
	}
	readyW.Close()
	readyW = nil
	// Ready once the waiter runs: a chain that cannot get there (the
	// run's user may not execute the agent's binary) is not handed out.
	_ = readyR.SetReadDeadline(time.Now().Add(preparedStartBound))
	if n, _ := readyR.Read(make([]byte, 1)); n != 1 {
		ps.pr.Abandon()
		ps.pr = nil
		return errWaiterDidNotStart
	}
	return nil
}

// preparedStartBound is how long a prepared sandbox may take to reach its
// waiter.
const preparedStartBound = 10 * time.Second

// errWaiterDidNotStart: a prepared sandbox did not reach its waiter.
var errWaiterDidNotStart = errors.New("the prepared sandbox's waiter did not start")

// waiterArg is the argument that makes the agent's executable the waiter
// (tests change it to one that does not).
var waiterArg = waiterFlag

// withWaiter ends a prepared sandbox's command line with the waiter.
func (a runArgs) withWaiter() runArgs {
	a.rest = append(a.rest, hookPath, waiterArg, strconv.Itoa(goFD), strconv.Itoa(readyFD))
	return a
}

// release kills a prepared sandbox no run took and removes its workspace.
func (ps *prepSandbox) release() {
	ps.pr.Abandon()
	ps.closeFiles()
	ps.ws.Remove()
}

// closeFiles closes the descriptors of a sandbox that runs no script, once
// it is gone (or never started).
func (ps *prepSandbox) closeFiles() {
	for _, f := range []*os.File{ps.goW, ps.statusW, ps.filter, ps.infoW, ps.args, ps.innerArgs} {
		if f != nil {
			f.Close()
		}
	}
	ps.goW, ps.statusW, ps.filter, ps.infoW, ps.args, ps.innerArgs = nil, nil, nil, nil, nil, nil
	if ps.init != nil {
		ps.init.end(host.GroupGoneBound)
		ps.init = nil
	}
	if ps.status != nil {
		ps.status.Close()
		ps.status = nil
	}
}
