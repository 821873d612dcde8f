package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// Prepared sandboxes: from the end of a run (and until preparedIdle after
// it), the executor keeps up to WithPrepared sandboxes made ahead for the
// next runs in the same workspace directory: the whole chain (outer
// bubblewrap, setpriv, inner bubblewrap, prlimit) up to the waiter, in an
// empty workspace of its own bound at /workspace, its uid leased, its run
// cgroup made, the filter loaded. A run takes one (waiting for one being
// made rather than making another beside it), stages the skill into its
// workspace and sends the waiter the script's command line; the sandbox
// serves that run only and is gone after it. The next one's workspace is
// made while a run goes on, its chain once the run is over: started
// beside the script, it would slow it down by more than it saves, unless
// runs come back to back (see hurried). A run whose view of the host
// (the binds: its interpreter, its dependencies) differs from the one the
// sandbox was made with kills it and starts a sandbox the usual way. With
// WithEgress (a proxy per run) nothing is prepared.

// preparedIdle is how long a prepared sandbox waits for a run before it is
// released: an idle agent holds none.
var preparedIdle = 30 * time.Second

// preparedWait bounds how long a run waits for a sandbox being made before
// it starts one the usual way. One being made is ready sooner than one the
// run would start beside it, which would also slow it down: this only
// bounds a chain that hangs.
const preparedWait = 2 * time.Second

// prepPool is an executor's prepared sandboxes.
type prepPool struct {
	mu    sync.Mutex
	ready []*prepSandbox
	// making counts the sandboxes being made, per workspace directory;
	// reserved those whose workspace is made while a run goes on.
	making   map[string]int
	reserved int
	// last is, per workspace directory, the binds of the last run there:
	// what the next sandbox for it is made with.
	last   map[string][]bind
	closed bool
	// broken is set when a prepared sandbox could not run a script
	// that a fresh one could (its waiter cannot start in the sandbox):
	// nothing more is prepared.
	broken bool
	// made is closed, and replaced, whenever a sandbox being made is
	// made or fails to be.
	made chan struct{}
	// releasing counts the sandboxes an idle timer is releasing, which
	// Close waits for.
	releasing sync.WaitGroup
	// went counts the runs prepared sandboxes ran.
	went atomic.Int64
	// ended is when the last run that prepares a next one was over (see
	// sinceStart), and chain how long the last sandbox took to be made,
	// from its chain's start to its waiter: see hurried.
	ended, chain atomic.Int64
	// exact is whether the waiter's shell exports nothing of its own
	// (see exportsNothing), found once, before the first sandbox is made.
	exactOnce sync.Once
	exact     bool
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
	return s.preparedCount() > 0 && s.egress == nil
}

// Take hands the run a prepared sandbox for parent: one ready, or the
// first made of those being made (see preparedWait).
func (l *sandboxLauncher) Take(ctx context.Context, parent string) *host.Prepared {
	s := l.s
	if !s.canPrepare() {
		return nil
	}
	l.hurried = s.state.prep.hurried()
	ps := s.state.prep.take(ctx, parent)
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
	refuse := func(err error) (bool, error) {
		ps.pr.Abandon() // closes its files too
		l.prep = nil
		return false, err
	}
	v, err := l.s.view(ctx, l.h, p)
	if err != nil {
		return refuse(err)
	}
	l.parent = ps.parent
	l.s.remember(ps.parent, v.binds)
	if !slices.Equal(v.binds, ps.binds) || !ps.pr.Alive() {
		return refuse(nil)
	}
	dir := sandboxWorkspace + "/" + p.WS.Name
	// PWD as bubblewrap's --chdir sets it in an unprepared run.
	prog, err := program(l.h.env, l.s.state.prep.exact, dir, append([]string{v.exe}, p.Argv[1:]...), append(v.env(p), "PWD="+dir))
	if err != nil {
		return refuse(nil)
	}
	w := ps.goW
	ps.goW = nil
	l.s.state.prep.went.Add(1)
	go func() {
		_, _ = w.WriteString(prog)
		w.Close()
	}()
	l.reserveNext(ps.parent)
	return true, nil
}

// hurried reports whether runs come faster than sandboxes are made after
// them: the last run was over less than a chain's making ago. The next
// sandbox is then started beside the run rather than after it (see
// reserveNext).
func (pp *prepPool) hurried() bool {
	if pp.ended.Load() == 0 {
		return false // no run is over yet
	}
	return sinceStart()-pp.ended.Load() < min(pp.chain.Load(), int64(hurriedBound))
}

// hurriedBound bounds the chain's making time hurried compares with: one
// chain slow to be made does not make an agent's runs, which come seconds
// apart, hurried.
const hurriedBound = time.Second

// processStart is when the process started, as the monotonic clock has it.
var processStart = time.Now()

// sinceStart is the monotonic time since the process started, in
// nanoseconds (never 0 once a run is over): a clock set back does not
// make runs hurried.
func sinceStart() int64 { return int64(time.Since(processStart)) }

// reserveNext reserves the next sandbox for parent (see reserve). A
// hurried run launches its chain at once, beside the script: it slows the
// script down, but less than the next run would wait for a chain started
// after it.
func (l *sandboxLauncher) reserveNext(parent string) {
	l.next = l.s.reserve(l.h, parent)
	if l.next == nil || !l.hurried {
		return
	}
	r := l.next
	l.next = nil
	l.launching = make(chan struct{})
	go func() {
		defer close(l.launching)
		l.s.launch(l.h, r)
	}()
}

// take removes a sandbox ready for parent from pp and returns it, waiting
// while one is being made for parent, until ctx ends or preparedWait has
// passed; nil when there is none.
func (pp *prepPool) take(ctx context.Context, parent string) *prepSandbox {
	var bound <-chan time.Time
	pp.mu.Lock()
	for {
		if i := slices.IndexFunc(pp.ready, func(p *prepSandbox) bool { return p.parent == parent }); i >= 0 {
			ps := pp.ready[i]
			pp.ready = slices.Delete(pp.ready, i, i+1)
			pp.mu.Unlock()
			ps.timer.Stop()
			return ps
		}
		if pp.making[parent] == 0 {
			pp.mu.Unlock()
			return nil
		}
		if bound == nil {
			t := time.NewTimer(preparedWait)
			defer t.Stop()
			bound = t.C
		}
		made := pp.madeChan()
		pp.mu.Unlock()
		select {
		case <-made:
		case <-ctx.Done():
			return nil
		case <-bound:
			return nil
		}
		pp.mu.Lock()
	}
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

// reservation is the next sandbox for a workspace directory, its
// workspace being made while the run that reserved it goes on.
type reservation struct {
	ps   *prepSandbox
	err  error
	done chan struct{} // closed once ps and err are set
}

// reserve starts making, in the background, the workspace of a sandbox
// for parent when fewer than the bound are ready, being made or reserved;
// launch starts its chain once the run is over. nil: nothing to prepare.
func (s *Executor) reserve(h *sandboxHost, parent string) *reservation {
	pp := &s.state.prep
	pp.mu.Lock()
	binds, known := pp.last[parent]
	if !s.canPrepare() || h.sh == "" || pp.closed || pp.broken || !known || len(pp.ready)+pp.makingAll()+pp.reserved >= s.preparedCount() {
		pp.mu.Unlock()
		return nil
	}
	pp.reserved++
	pp.mu.Unlock()
	r := &reservation{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.ps, r.err = s.prepareWorkspace(parent, binds)
	}()
	return r
}

// launch waits for r's workspace and starts its sandbox's chain in the
// background: run by a run once it is over (see Finish), so that it does
// not slow the run down, or beside a hurried run (see reserveNext); in
// both cases before Execute returns, so that nothing is made in its
// workspace directory after that (a test's t.TempDir may be removed at
// once).
func (s *Executor) launch(h *sandboxHost, r *reservation) {
	<-r.done
	pp := &s.state.prep
	pp.mu.Lock()
	pp.reserved--
	if r.err != nil || pp.closed {
		pp.mu.Unlock()
		if r.err == nil {
			r.ps.ws.Remove()
		}
		return
	}
	if pp.making == nil {
		pp.making = map[string]int{}
	}
	ps, parent := r.ps, r.ps.parent
	pp.making[parent]++
	pp.mu.Unlock()
	go func() {
		err := s.prepare(h, ps)
		pp.mu.Lock()
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
			ps.release() // still being made: Close waits for it
		}
		pp.mu.Lock()
		if pp.making[parent]--; pp.making[parent] == 0 {
			delete(pp.making, parent)
		}
		close(pp.madeChan())
		pp.made = nil
		pp.mu.Unlock()
	}()
}

// expire releases ps if no run has taken it.
func (s *Executor) expire(ps *prepSandbox) {
	pp := &s.state.prep
	pp.mu.Lock()
	i := slices.Index(pp.ready, ps)
	if i >= 0 {
		pp.ready = slices.Delete(pp.ready, i, i+1)
		pp.releasing.Add(1)
	}
	pp.mu.Unlock()
	if i >= 0 {
		ps.release()
		pp.releasing.Done()
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
	pp.releasing.Wait()
}

// madeChan returns made, made on first use. pp.mu is held.
func (pp *prepPool) madeChan() chan struct{} {
	if pp.made == nil {
		pp.made = make(chan struct{})
	}
	return pp.made
}

// makingAll is how many sandboxes are being made. pp.mu is held.
func (pp *prepPool) makingAll() int {
	n := 0
	for _, k := range pp.making {
		n += k
	}
	return n
}

// waitMade waits until no sandbox is being made.
func (pp *prepPool) waitMade() {
	pp.mu.Lock()
	for pp.makingAll() > 0 {
		made := pp.madeChan()
		pp.mu.Unlock()
		<-made
		pp.mu.Lock()
	}
	pp.mu.Unlock()
}

// prepareWorkspace makes the workspace of a sandbox for a run in parent
// with binds (its user is leased when its chain is launched, see
// prepare: once the run that reserved it is over, unless that run is
// hurried).
func (s *Executor) prepareWorkspace(parent string, binds []bind) (*prepSandbox, error) {
	ws, err := host.NewPreparedWorkspace(parent)
	if err != nil {
		return nil, err
	}
	return &prepSandbox{parent: parent, binds: binds, ws: ws}, nil
}

// prepare leases ps's user (a root agent's) and starts its chain; its
// workspace is made.
func (s *Executor) prepare(h *sandboxHost, ps *prepSandbox) (err error) {
	pp := &s.state.prep
	pp.exactOnce.Do(func() { pp.exact = exportsNothing(h.sh, h.env) })
	ws, binds := ps.ws, ps.binds
	defer func() {
		if err != nil {
			ps.closeFiles()
			ws.Remove()
		}
	}()
	if h.root {
		if ps.user, err = s.user(); err != nil {
			return err
		}
		ws.OnRemove(ps.user.release)
		if err = chownTree(ws.Dir, ps.user.uid, ps.user.gid, nil); err != nil {
			return err
		}
	}
	var goR, readyR, readyW *os.File
	defer func() {
		for _, f := range []*os.File{goR, readyR, readyW} {
			if f != nil {
				f.Close()
			}
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
		if h.root {
			// The waiter opens it again (/proc/self/fd) as the run's
			// user, whom a pipe of root's would refuse.
			if err = goR.Chown(ps.user.uid, ps.user.gid); err != nil {
				return nil, err
			}
		}
		if readyR, readyW, err = os.Pipe(); err != nil {
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
		cmd.ExtraFiles = []*os.File{ps.statusW, ps.filter, ps.infoW, ps.args, ps.innerArgs, goR, readyW} // statusFD … innerArgsFD, goFD, readyFD
		return cmd, nil
	}
	mem, _ := limit(s.memory, DefaultMemory)
	procs, _ := limit(s.procs, DefaultProcesses)
	begun := time.Now()
	if ps.pr, err = host.StartPrepared(ws, build, mem, procs); err != nil {
		return err
	}
	ps.pr.OnAbandon(ps.closeFiles)
	readyW.Close()
	readyW = nil
	// Ready once the waiter runs: a chain that cannot get there is not
	// handed out.
	_ = readyR.SetReadDeadline(time.Now().Add(preparedStartBound))
	if n, _ := readyR.Read(make([]byte, 1)); n != 1 {
		ps.pr.Abandon()
		ps.pr = nil
		return errWaiterDidNotStart
	}
	pp.chain.Store(int64(time.Since(begun)))
	// The helpers have read their options and the filter, and the outer
	// bubblewrap has written its init's PID: the agent keeps only what it
	// reads after the run (the status, the init) and the waiter's pipe.
	for _, f := range []*os.File{ps.statusW, ps.filter, ps.infoW, ps.args, ps.innerArgs} {
		f.Close()
	}
	ps.statusW, ps.filter, ps.infoW, ps.args, ps.innerArgs = nil, nil, nil, nil, nil
	return nil
}

// preparedStartBound is how long a prepared sandbox may take to reach its
// waiter.
const preparedStartBound = 10 * time.Second

// errWaiterDidNotStart: a prepared sandbox did not reach its waiter.
var errWaiterDidNotStart = errors.New("the prepared sandbox's waiter did not start")

// withWaiter ends a prepared sandbox's command line with the waiter.
func (a runArgs) withWaiter(h *sandboxHost) runArgs {
	a.rest = append(a.rest, h.sh, "-c", waiterScript, "waiter")
	return a
}

// release kills a prepared sandbox no run took and removes its workspace.
func (ps *prepSandbox) release() {
	ps.pr.Abandon() // closes its files too
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

// prepareNext, once the run is over, starts the chain of the sandbox the
// run reserved, or, when it reserved none (the bound was reached then),
// of one reserved now.
func (l *sandboxLauncher) prepareNext() {
	defer func() { l.s.state.prep.ended.Store(sinceStart()) }()
	if l.launching != nil {
		<-l.launching // launched beside the run: registered before Execute returns
		l.launching = nil
	}
	r := l.next
	l.next = nil
	if r == nil {
		r = l.s.reserve(l.h, l.parent)
	}
	if r != nil {
		l.s.launch(l.h, r)
	}
}
