package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// Every test of this package's, the attack, escape, isolation, uid and
// conformance suites included, runs its scripts in prepared sandboxes: an
// executor that prepares (the default) and has none ready for the run's
// workspace directory first runs a trivial script, which prepares one, and
// waits until it is made. A run under a context that can be cancelled
// (a test of timing or cancellation) is not delayed so: it takes a
// sandbox only when an earlier run of its executor left one ready. Set
// ADKSKILLS_TEST_COLD=1 to test the usual path instead.
func init() {
	if os.Getenv("ADKSKILLS_TEST_COLD") == "" {
		testBeforeExecute = warmPrepared
	}
}

// warmPrepared makes sure a prepared sandbox is ready for s's next run.
func warmPrepared(ctx context.Context, s *Executor) {
	if ctx.Done() != nil {
		return
	}
	if !s.canPrepare() || s.cfg.Err() != nil || readyFor(s, s.cfg.WorkspaceParent()) {
		return
	}
	table := s.cfg.Interpreters()
	if len(table) == 0 || len(table[0].Extensions) == 0 {
		return
	}
	_, _ = host.Execute(ctx, &s.cfg, &sandboxLauncher{s: s}, codeexectest.Script("warm"+table[0].Extensions[0], ""))
	s.state.prep.waitMade()
}

// readyFor reports whether s has a prepared sandbox ready for parent.
func readyFor(s *Executor, parent string) bool {
	pp := &s.state.prep
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return slices.ContainsFunc(pp.ready, func(ps *prepSandbox) bool { return ps.parent == filepath.Clean(parent) })
}

// prepFixture is an executor whose next run takes a prepared sandbox.
func prepFixture(t *testing.T, opts ...Option) (*Executor, string) {
	t.Helper()
	requireSandbox(t)
	dir := hosttest.NewWorkspaceDir(t)
	s := New(append([]Option{WithWorkspaceDir(dir)}, opts...)...)
	t.Cleanup(func() { _ = s.Close() })
	warmPrepared(context.Background(), s)
	if s.canPrepare() && !readyFor(s, dir) {
		t.Fatal("no prepared sandbox after a run")
	}
	return s, dir
}

// TestPreparedOneRunEach: a run takes the prepared sandbox, and nothing of
// it (files in the workspace, HOME, TMPDIR or /tmp, a process left
// behind) reaches the run after it, which takes a sandbox of its own.
func TestPreparedOneRunEach(t *testing.T) {
	s, _ := prepFixture(t)
	const leave = `import os, subprocess
for d in (".", os.environ["HOME"], os.environ["TMPDIR"], "/tmp", "/workspace"):
    try:
        open(os.path.join(d, "left-behind"), "w").write("x")
    except OSError:
        pass
subprocess.Popen(["sleep", "600"], start_new_session=True)
print(os.getpid())
`
	const look = `import os, glob
print(sorted(glob.glob("/workspace/**/left-behind", recursive=True) + glob.glob("/tmp/left-behind") + glob.glob(os.environ["HOME"] + "/left-behind")))
print(sorted(p for p in os.listdir("/proc") if p.isdigit() and "sleep" in open("/proc/%s/cmdline" % p).read()))
`
	for i, src := range []string{leave, look} {
		first := s.state.prep.ready[0]
		went := s.state.prep.went.Load()
		res := codeexectest.MustRun(t, s, codeexectest.Script("scripts/x.py", src))
		if res.ExitCode != 0 {
			t.Fatalf("run %d: exit %d: %s", i, res.ExitCode, res.Stderr.Text)
		}
		if s.state.prep.went.Load() != went+1 {
			t.Errorf("run %d did not run in the prepared sandbox", i)
		}
		if first.pr.Alive() {
			t.Errorf("run %d: the prepared sandbox it took is still alive after it", i)
		}
		if i == 1 && res.Stdout.Text != "[]\n[]\n" {
			t.Errorf("the next run sees the first's files or processes: %q", res.Stdout.Text)
		}
		s.state.prep.waitMade()
		if !readyFor(s, s.cfg.WorkspaceParent()) {
			t.Fatalf("run %d: no sandbox prepared for the next", i)
		}
		if slices.Contains(s.state.prep.ready, first) {
			t.Errorf("run %d: the sandbox it took is ready again", i)
		}
	}
}

// TestPreparedReleased: an idle prepared sandbox is released after
// preparedIdle, and Close releases the ready ones; either way its
// processes, its workspace and its uid are gone.
func TestPreparedReleased(t *testing.T) {
	tests := []struct {
		name    string
		release func(s *Executor)
	}{
		{"idle", func(s *Executor) {
			for deadline := time.Now().Add(10 * time.Second); readyFor(s, s.cfg.WorkspaceParent()) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
		}},
		{"Close", func(s *Executor) { _ = s.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "idle" {
				old := preparedIdle
				preparedIdle = 50 * time.Millisecond
				t.Cleanup(func() { preparedIdle = old })
			}
			s, dir := prepFixture(t)
			ps := s.state.prep.ready[0]
			if !ps.pr.Alive() {
				t.Fatal("the prepared sandbox is not alive")
			}
			tt.release(s)
			s.state.prep.waitMade()
			if readyFor(s, dir) {
				t.Fatal("still ready")
			}
			for deadline := time.Now().Add(host.GroupGoneBound); ps.pr.Alive() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if ps.pr.Alive() {
				t.Errorf("the released sandbox's chain is alive")
			}
			for deadline := time.Now().Add(host.GroupGoneBound); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err := os.Lstat(ps.ws.Root); errors.Is(err, os.ErrNotExist) {
					break
				}
			}
			if _, err := os.Lstat(ps.ws.Root); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("its workspace %s is still there (%v)", ps.ws.Root, err)
			}
			if left := host.Leftovers(dir); len(left) != 0 {
				t.Errorf("the workspace directory holds %v", left)
			}
		})
	}
}

// TestPreparedOff: WithPrepared(0) prepares nothing, a negative count is
// invalid, and WithEgress prepares nothing.
func TestPreparedOff(t *testing.T) {
	for _, opts := range [][]Option{{WithPrepared(0)}, {WithEgress("example.com:443")}} {
		s, dir := prepFixture(t, opts...)
		codeexectest.MustRun(t, s, codeexectest.Script("x.py", "print(1)"))
		s.state.prep.waitMade()
		if readyFor(s, dir) {
			t.Errorf("%d options: a sandbox was prepared", len(opts))
		}
	}
	if err := New(WithPrepared(-1)).Err(); !errors.Is(err, codeexec.ErrInvalidConfig) || !strings.Contains(err.Error(), "WithPrepared") {
		t.Errorf("WithPrepared(-1): %v", err)
	}
}

// TestPreparedViewChanged: a run whose binds differ from those its
// prepared sandbox was made with runs in a sandbox started for it.
func TestPreparedViewChanged(t *testing.T) {
	s, _ := prepFixture(t)
	ps := s.state.prep.ready[0]
	ps.binds = append(slices.Clone(ps.binds), bind{src: "/nonexistent", dst: "/nonexistent"})
	went := s.state.prep.went.Load()
	res := codeexectest.MustRun(t, s, codeexectest.Script("x.py", "print('ran')"))
	if res.ExitCode != 0 || res.Stdout.Text != "ran\n" {
		t.Fatalf("exit %d %q %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	if s.state.prep.went.Load() != went {
		t.Errorf("the run went in a sandbox prepared with other binds")
	}
	if ps.pr.Alive() {
		t.Errorf("the refused prepared sandbox is alive")
	}
}

// TestPreparedWaiterFails: a prepared sandbox whose waiter does not start
// (here its shell exits at once) is not handed out, preparing stops, and
// runs go the usual way.
func TestPreparedWaiterFails(t *testing.T) {
	requireSandbox(t)
	old := waiterScript
	waiterScript = "exit 1"
	t.Cleanup(func() { waiterScript = old })
	s := New(WithWorkspaceDir(hosttest.NewWorkspaceDir(t)))
	t.Cleanup(func() { _ = s.Close() })
	for i := range 2 {
		res := codeexectest.MustRun(t, s, codeexectest.Script("x.py", "print('ran')"))
		if res.ExitCode != 0 || res.Stdout.Text != "ran\n" {
			t.Fatalf("run %d: exit %d %q %q", i, res.ExitCode, res.Stdout.Text, res.Stderr.Text)
		}
		s.state.prep.waitMade()
		if readyFor(s, s.cfg.WorkspaceParent()) {
			t.Errorf("run %d: a sandbox whose waiter did not start is ready", i)
		}
	}
	if !s.state.prep.broken || s.state.prep.went.Load() != 0 {
		t.Errorf("broken %v, went %d: want preparing stopped, no prepared run", s.state.prep.broken, s.state.prep.went.Load())
	}
}

// TestPreparedBackToBack: a run that comes while the sandbox for it is
// being made waits for it rather than starting one beside it.
func TestPreparedBackToBack(t *testing.T) {
	requireSandbox(t)
	s := New(WithWorkspaceDir(hosttest.NewWorkspaceDir(t)))
	t.Cleanup(func() { _ = s.Close() })
	// A context that can end: no warming run before each (see init).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const runs = 4
	for i := range runs {
		res, err := s.Execute(ctx, codeexectest.Script("x.py", "print('ran')"))
		if err != nil || res.ExitCode != 0 || res.Stdout.Text != "ran\n" {
			t.Fatalf("run %d: %v %+v", i, err, res)
		}
	}
	if went := s.state.prep.went.Load(); went != runs-1 {
		t.Errorf("%d of the %d runs after the first went in a prepared sandbox, want all", went, runs-1)
	}
}

// TestPreparedHurried: a run is hurried when the last run was over less
// than a chain's making ago, that making counted up to hurriedBound.
func TestPreparedHurried(t *testing.T) {
	const chain = time.Hour
	for _, c := range []struct {
		name  string
		ago   time.Duration // since the last run was over; 0: none yet
		chain time.Duration
		want  bool
	}{
		{"NoRunYet", 0, chain, false},
		{"RightAfter", time.Millisecond, chain, true},
		{"WithinAChain", hurriedBound / 2, hurriedBound, true},
		{"AfterAChain", hurriedBound / 2, hurriedBound / 4, false},
		{"PastTheBound", 2 * hurriedBound, 4 * hurriedBound, false},
		{"NoChainYet", time.Millisecond, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var pp prepPool
			if c.ago != 0 {
				pp.ended.Store(sinceStart() - int64(c.ago))
			}
			pp.chain.Store(int64(c.chain))
			if got := pp.hurried(); got != c.want {
				t.Errorf("hurried = %v, want %v", got, c.want)
			}
		})
	}
}

// TestPreparedBeside: a hurried run starts the next sandbox's chain beside
// its script, which finds it made while it still runs; a run that is not
// hurried starts it once it is over.
func TestPreparedBeside(t *testing.T) {
	requireSandbox(t)
	const script = 4 * time.Second // the run's length; the next sandbox is made in far less
	for _, hurried := range []bool{true, false} {
		t.Run(fmt.Sprint("Hurried=", hurried), func(t *testing.T) {
			dir := hosttest.NewWorkspaceDir(t)
			s := New(WithWorkspaceDir(dir))
			t.Cleanup(func() { _ = s.Close() })
			ctx, cancel := context.WithCancel(context.Background()) // no warming run (see init)
			defer cancel()
			if _, err := s.Execute(ctx, codeexectest.Script("x.py", "")); err != nil {
				t.Fatal(err)
			}
			pp := &s.state.prep
			pp.waitMade()
			if !readyFor(s, dir) {
				t.Fatal("no prepared sandbox after a run")
			}
			pp.chain.Store(0)
			if hurried {
				pp.chain.Store(int64(hurriedBound))
				pp.ended.Store(sinceStart())
			}
			done := make(chan error, 1)
			go func() {
				res, err := s.Execute(ctx, codeexectest.Script("x.py", fmt.Sprintf("import time; time.sleep(%g)", script.Seconds())))
				if err == nil && res.ExitCode != 0 {
					err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr.Text)
				}
				done <- err
			}()
			made := false
			deadline := time.Now().Add(script - time.Second)
			for pp.went.Load() == 0 && time.Now().Before(deadline) { // the run took the sandbox
				time.Sleep(time.Millisecond)
			}
			for ; !made && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				made = readyFor(s, dir)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if made != hurried {
				t.Errorf("next sandbox made while the script ran: %v, want %v", made, hurried)
			}
			if pp.went.Load() != 1 {
				t.Errorf("%d runs went in a prepared sandbox, want 1", pp.went.Load())
			}
		})
	}
}

// TestPreparedTake: take returns a sandbox ready for the workspace
// directory, waits for one being made for it, and gives up when the
// run's context ends; a sandbox for another directory is not taken.
func TestPreparedTake(t *testing.T) {
	ready := func(parent string) *prepSandbox {
		return &prepSandbox{parent: parent, timer: time.AfterFunc(time.Hour, func() {})}
	}
	t.Run("Ready", func(t *testing.T) {
		var pp prepPool
		a, b := ready("/a"), ready("/b")
		pp.ready = []*prepSandbox{a, b}
		if got := pp.take(context.Background(), "/b"); got != b {
			t.Errorf("took %v, want /b's", got)
		}
		if got := pp.take(context.Background(), "/c"); got != nil {
			t.Errorf("took %v for a directory with none", got)
		}
		if len(pp.ready) != 1 || pp.ready[0] != a {
			t.Errorf("ready %v, want /a's alone", pp.ready)
		}
	})
	t.Run("Making", func(t *testing.T) {
		var pp prepPool
		pp.making = map[string]int{"/a": 1}
		made := ready("/a")
		go func() {
			time.Sleep(20 * time.Millisecond)
			pp.mu.Lock()
			pp.making = nil
			pp.ready = append(pp.ready, made)
			close(pp.madeChan())
			pp.made = nil
			pp.mu.Unlock()
		}()
		if got := pp.take(context.Background(), "/a"); got != made {
			t.Errorf("took %v, want the one made meanwhile", got)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		var pp prepPool
		pp.making = map[string]int{"/a": 1} // never made
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		if got := pp.take(ctx, "/a"); got != nil {
			t.Errorf("took %v", got)
		}
		if d := time.Since(start); d >= preparedWait {
			t.Errorf("waited %v after the context ended", d)
		}
	})
}

// TestPreparedConcurrent: runs at once in one workspace directory all
// succeed, never more than the bound are kept prepared, and Close leaves
// nothing behind: no workspace, no run cgroup.
func TestPreparedConcurrent(t *testing.T) {
	requireSandbox(t)
	const workers, each, bound = 4, 3, 2
	dir := hosttest.NewWorkspaceDir(t)
	before := host.RunCgroups() // other tests' idle sandboxes hold theirs
	s := New(WithWorkspaceDir(dir), WithPrepared(bound))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, workers*each)
	for w := range workers {
		go func() {
			for i := range each {
				res, err := s.Execute(ctx, codeexectest.Script("x.py", "print('ran')"))
				if err == nil && (res.ExitCode != 0 || res.Stdout.Text != "ran\n") {
					err = fmt.Errorf("worker %d run %d: exit %d %q %q", w, i, res.ExitCode, res.Stdout.Text, res.Stderr.Text)
				}
				errs <- err
			}
		}()
	}
	for range workers * each {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	s.state.prep.waitMade()
	if n := len(s.state.prep.ready); n > bound {
		t.Errorf("%d sandboxes prepared, want at most %d", n, bound)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := host.Leftovers(dir); len(left) != 0 {
		t.Errorf("after Close the workspace directory holds %v", left)
	}
	for _, g := range host.RunCgroups() {
		if !slices.Contains(before, g) {
			t.Errorf("after Close the run cgroup %s is left", g)
		}
	}
}

// TestPreparedFailedRun: a run that takes a prepared sandbox and fails
// before it lets it go (its skill is over the staging limit) leaves
// nothing of it: no process, no descriptor of the agent's.
func TestPreparedFailedRun(t *testing.T) {
	s, dir := prepFixture(t)
	ps := s.state.prep.ready[0]
	s.expire(ps)
	before := fdTargets()
	warmPrepared(context.Background(), s)
	if !readyFor(s, dir) {
		t.Fatal("no prepared sandbox")
	}
	ps = s.state.prep.ready[0]
	// What the sandbox holds: the pipes and pidfds more descriptors are
	// open on now (files are workspaces', whose locks the host's spare
	// workspace holds too). By what they are open on, not how many:
	// another test's idle sandbox released meanwhile closes descriptors of
	// its own.
	var held []string
	for target, n := range fdTargets() {
		if n > before[target] && (strings.HasPrefix(target, "pipe:") || strings.HasPrefix(target, "anon_inode:")) {
			held = append(held, target)
		}
	}
	if len(held) == 0 {
		t.Fatal("the prepared sandbox holds no descriptor of the agent's")
	}
	ctx, cancel := context.WithCancel(context.Background()) // no warming run (see init)
	defer cancel()
	req := codeexectest.Script("x.py", "print('ran')")
	req.Limits.MaxSkillBytes = 1
	if _, err := s.Execute(ctx, req); !errors.Is(err, codeexec.ErrTooLarge) {
		t.Fatalf("Execute: %v, want ErrTooLarge", err)
	}
	if ps.pr.Alive() {
		t.Error("the sandbox the failed run took is alive")
	}
	s.state.prep.waitMade()
	if readyFor(s, dir) {
		t.Fatal("a sandbox was prepared after a run that never started")
	}
	now := fdTargets()
	for _, target := range held {
		if now[target] > before[target] {
			t.Errorf("%d descriptors open on %s, %d before the sandbox was prepared", now[target], target, before[target])
		}
	}
}

// TestPreparedUncleanDir: a workspace directory given with a trailing
// slash is the same directory: its runs take the sandboxes prepared for
// it.
func TestPreparedUncleanDir(t *testing.T) {
	requireSandbox(t)
	s := New(WithWorkspaceDir(hosttest.NewWorkspaceDir(t) + "/"))
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithCancel(context.Background()) // no warming run (see init)
	defer cancel()
	for i := range 2 {
		if _, err := s.Execute(ctx, codeexectest.Script("x.py", "print('ran')")); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if went := s.state.prep.went.Load(); went != 1 {
		t.Errorf("%d runs went in a prepared sandbox, want the second", went)
	}
}
