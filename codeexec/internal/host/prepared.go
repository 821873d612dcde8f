package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/adkskills/adkskills/codeexec"
)

// A prepared child is a run's child started ahead of its request, in an
// empty workspace of its own: a sandbox's whole chain of helpers, waiting on
// a descriptor for the script's command line. Its process group, its run
// cgroup, its standard streams (pipes of the pipeline's) and its OOM score
// are set as for any run; only the script is missing. Execute takes one
// from a Preparer, stages the request into its workspace, and lets it go
// (Preparer.Go); a prepared child serves one run and is gone after it.

// Preparer is implemented by a launcher that may run a request in a child
// made ahead (codeexec/sandbox's prepared sandboxes).
type Preparer interface {
	// Take returns a prepared child for a run whose workspace is made
	// under parent, or nil (none ready: the run goes the usual way); it
	// may wait, until ctx ends, for one being made. The child is the
	// caller's from then on; it has set up what names its workspace's
	// path (the run renames it).
	Take(ctx context.Context, parent string) *Prepared
	// Go hands the run of p to the prepared child taken (p.WS is its
	// workspace, staged): true when it runs p, false when it cannot (then
	// it has released the child, and the run starts the usual way, through
	// Command, in the same workspace).
	Go(ctx context.Context, p *Plan) (bool, error)
}

// Prepared is a child made ahead (see Preparer).
type Prepared struct {
	// WS is the child's workspace: empty, its skill folder named
	// SpareSkillName until a run names it.
	WS *Workspace

	cmd            *exec.Cmd
	cleanup        func() // see OnAbandon
	g              *procGroup
	cg             *runCgroup
	stdout, stderr *os.File // the read ends of the child's stdout and stderr
	stdin          *os.File // the write end of the child's stdin
	exited         chan struct{}
	killed         atomic.Bool
}

// SpareSkillName is the skill folder's name of a workspace no run has
// named yet (a prepared child's).
const SpareSkillName = spareSkillName

// NewPreparedWorkspace makes a workspace under parent for a prepared child.
// It is named and locked like a spare (Leftovers and a sweep tell it from
// what a dead agent left), its skill folder SpareSkillName. A run claims
// it (a run's name, its skill folder named) only once the child has set up
// its mounts: the root's path is in the child's command line.
func NewPreparedWorkspace(parent string) (*Workspace, error) {
	parent = filepath.Clean(parent)
	sweepOnce(parent)
	return makeWorkspace(parent)
}

// StartPrepared starts cmd, a run's child made ahead in ws, as Execute
// starts one: leading a process group of its own, bounded by a run cgroup
// of memBytes and procs where the host allows one (build is told whether
// it is), the OOM killer's first choice, its stdin, stdout and stderr pipes
// of the pipeline's. build must return a command made without a context:
// Execute kills it on timeout itself.
func StartPrepared(ws *Workspace, build func(bounded bool) (*exec.Cmd, error), memBytes int64, procs int) (pr *Prepared, err error) {
	pr = &Prepared{WS: ws, exited: make(chan struct{})}
	var closers []*os.File
	defer func() {
		for _, f := range closers {
			f.Close()
		}
		if err != nil {
			pr.closeOurs()
		}
	}()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	closers = append(closers, inR)
	pr.stdin = inW
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	growPipe(outR)
	closers = append(closers, outW)
	pr.stdout = outR
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	growPipe(errR)
	closers = append(closers, errW)
	pr.stderr = errR
	if h, herr := hostCgroups(); herr == nil {
		pr.cg, _ = h.create(memBytes, procs) // none: the launcher's own bounds apply
	}
	cmd, err := build(pr.cg != nil)
	if err != nil {
		if pr.cg != nil {
			pr.cg.remove()
		}
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	closeInherited(cmd)
	pr.g = newProcGroup(cmd)
	cmd, err = startBounded(context.Background(), cmd, pr.cg, nil) // build's is exec.Command's
	pr.cmd = cmd
	if err != nil {
		pr.g.abort()
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if pr.cg != nil {
			pr.cg.remove()
		}
		return nil, err
	}
	pr.g.started(cmd.Process.Pid)
	go func() {
		_ = cmd.Wait()
		close(pr.exited)
	}()
	return pr, nil
}

// Bounded reports whether the child has a run cgroup of its own.
func (pr *Prepared) Bounded() bool { return pr.cg != nil }

// Alive reports whether the child has not exited.
func (pr *Prepared) Alive() bool {
	select {
	case <-pr.exited:
		return false
	default:
		return true
	}
}

// Release kills the child, waits until it is gone and removes its
// workspace (a prepared child no run took).
func (pr *Prepared) Release() {
	pr.Abandon()
	pr.WS.Remove()
}

// Abandon kills the child and waits until it is gone, keeping its
// workspace (a prepared child Go refused, or a run that failed before it
// let it go), and runs the launcher's cleanup.
func (pr *Prepared) Abandon() {
	pr.kill()
	<-pr.exited
	pr.g.finish()
	if pr.cg != nil {
		pr.cg.remove()
		pr.cg = nil
	}
	pr.closeOurs()
	if f := pr.cleanup; f != nil {
		pr.cleanup = nil
		f()
	}
}

// OnAbandon has fn run once, when the child is abandoned: what the
// launcher holds for it (descriptors it would have closed after the run).
func (pr *Prepared) OnAbandon(fn func()) { pr.cleanup = fn }

// kill kills the child's process group.
func (pr *Prepared) kill() {
	if pr.cmd.Process != nil {
		killTree(pr.cmd)
	}
}

// closeOurs closes the pipeline's ends of the child's streams.
func (pr *Prepared) closeOurs() {
	for _, f := range []*os.File{pr.stdin, pr.stdout, pr.stderr} {
		if f != nil {
			f.Close()
		}
	}
	pr.stdin, pr.stdout, pr.stderr = nil, nil, nil
}

// runPrepared is run for a prepared child that Go has let go: it feeds the
// child stdin, captures its output, kills it on timeout, waits for it to
// end and for its process group and cgroup to be gone.
func runPrepared(ctx context.Context, pr *Prepared, cg *runCgroup, stdin []byte, maxChars int, waitDelay time.Duration) (*codeexec.Result, error) {
	stdout := outputOf(pr.stdout, maxChars)
	stderr := outputOf(pr.stderr, maxChars)
	pr.stdout, pr.stderr = nil, nil
	defer stdout.close()
	defer stderr.close()
	start := time.Now()
	stdout.start()
	stderr.start()
	in := pr.stdin
	pr.stdin = nil
	go func() {
		// A script that does not read it has it closed under the write
		// when it ends (EPIPE).
		_, _ = bytes.NewReader(stdin).WriteTo(in)
		in.Close()
	}()
	stop := context.AfterFunc(ctx, func() {
		pr.killed.Store(true)
		pr.kill()
	})
	<-pr.exited
	stop()
	pr.g.finish()
	if cg != nil {
		cg.kill(GroupGoneBound)
	}
	drain([]*output{stdout, stderr}, waitDelay, drainCapWaitDelays*waitDelay)
	dur := time.Since(start)
	if pr.cmd.ProcessState == nil {
		return nil, fmt.Errorf("%w: wait: %w", codeexec.ErrStart, errors.New("no exit status"))
	}
	return &codeexec.Result{
		ExitCode: exitCode(pr.cmd.ProcessState),
		TimedOut: pr.killed.Load(),
		Duration: dur,
		Stdout:   stdout.stream(),
		Stderr:   stderr.stream(),
	}, nil
}

// Pid is the PID of the child's first process (its process group's).
func (pr *Prepared) Pid() int { return pr.cmd.Process.Pid }
