// Package agentsandbox runs skill scripts in Kubernetes pods managed by
// kubernetes-sigs/agent-sandbox: the executor for agents that run as
// replicated servers, where a host sandbox (bubblewrap) usually cannot start
// and scripts must not share a machine with the agent.
//
// Each [Executor.Execute] claims a fresh sandbox from a SandboxWarmPool (one
// pod per run, never reused), stages the skill folder into it, runs the
// interpreter with argv through the pod's sandboxd ProcessService, streams
// stdout and stderr into the same capper the host executors use (memory
// stays O(cap) however much a script prints), enforces the time limit by
// cancelling the process stream (sandboxd then kills the process tree),
// collects the files the run wrote with the host executors' limits and link
// rules, and deletes the claim on every path: success, failure, timeout,
// cancellation and error.
//
// # What the pod must provide
//
// The executor talks to sandboxd directly on its gRPC port (default 9090), so
// the agent runs where it can reach sandbox pods: in the cluster, with the
// client built for sandboxd and in-cluster connectivity:
//
//	client, err := sandbox.NewClient(ctx, sandbox.Options{
//		Runtime:      sandbox.RuntimeSandboxd,
//		Connectivity: sandbox.ConnectivityInClusterPodIP,
//	})
//
// (or ConnectivityInClusterService with [WithServiceDNS]; [WithDialer] for
// anything else, such as a port-forward from a laptop). The pod's image runs
// sandboxd and holds the interpreters of the table ([codeexec.DefaultInterpreters]:
// python3, bash, node) and the tools the executor drives with argv:
// /bin/sh, env, GNU tar, GNU find and setsid (every Debian or Ubuntu based
// image has them). deploy/agent-sandbox in this repository has a SandboxTemplate
// (gVisor, non-root, no service-account token, no egress), a
// SandboxWarmPool and the RBAC the agent needs.
//
// # How a run maps onto sandboxd
//
// Staging is one process, GNU tar reading a stream the executor writes from
// the request's files with WriteStdin (nothing is buffered whole). The
// script runs under a fixed POSIX sh trampoline that starts the interpreter
// with the request's argv ("$@", never a shell string built from it) in a
// session of its own, waits for it, and kills that session's process group
// when it exits, so background children die with the run; the environment
// is cleared with env -i and rebuilt from the host executors' allowlist.
// Collection is GNU find (lstat, never following a link) and GNU tar of the
// files to return (tar stores a link or a FIFO as such and never opens it).
package agentsandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/adkskills/adkskills/codeexec"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
)

// Errors an Execute returns, wrapped, for callers that branch on them. Each
// of the first three also wraps [codeexec.ErrSandboxUnavailable]: the script
// did not run.
var (
	// ErrNoWarmPool: the SandboxWarmPool named in New does not exist in the
	// namespace (checked when the executor has Kubernetes clients, see
	// WithKubernetes).
	ErrNoWarmPool = errors.New("agentsandbox: no such warm pool")
	// ErrClaimNotReady: the claim's sandbox did not become Ready within the
	// claim timeout (WithClaimTimeout), or the claim could not be created.
	ErrClaimNotReady = errors.New("agentsandbox: sandbox claim not ready")
	// ErrUnreachable: the sandbox is Ready but its sandboxd does not answer.
	ErrUnreachable = errors.New("agentsandbox: sandboxd unreachable")
	// ErrConnectionLost: the connection to sandboxd broke during a run. The
	// error is a *LostError that says whether the script had started.
	ErrConnectionLost = errors.New("agentsandbox: connection to sandboxd lost")
)

// LostError reports a connection to sandboxd that broke during a run.
type LostError struct {
	// Started reports whether sandboxd had started the script: when true,
	// the script may have run in part (and had its effects); when false, it
	// did not run and the error also wraps codeexec.ErrSandboxUnavailable.
	Started bool
	// Err is the transport's error.
	Err error
}

// Error says what broke and whether the script had started.
func (e *LostError) Error() string {
	if e.Started {
		return fmt.Sprintf("%v after the script started (it may have run in part): %v", ErrConnectionLost, e.Err)
	}
	return fmt.Sprintf("%v before the script started (it did not run): %v", ErrConnectionLost, e.Err)
}

// Unwrap returns ErrConnectionLost, the transport's error and, when the
// script did not start, codeexec.ErrSandboxUnavailable.
func (e *LostError) Unwrap() []error {
	errs := []error{ErrConnectionLost, e.Err}
	if !e.Started {
		errs = append(errs, codeexec.ErrSandboxUnavailable)
	}
	return errs
}

// Executor runs each script in a pod of its own, claimed from a warm pool.
// It implements codeexec.Executor and is safe for concurrent use: each
// Execute claims its own sandbox.
type Executor struct {
	client   *sandbox.Client
	warmPool string
	cfg      config
}

// New returns an Executor that claims its sandboxes from the SandboxWarmPool
// warmPool through client (built with Runtime: sandbox.RuntimeSandboxd; see
// the package documentation for connectivity).
//
// New does not fail: a nil client, an empty warm pool name or an invalid
// option is reported by [Executor.Err] and by every Execute, wrapping
// [codeexec.ErrInvalidConfig] (and skilltoolset.New refuses the executor).
func New(client *sandbox.Client, warmPool string, opts ...Option) *Executor {
	e := &Executor{client: client, warmPool: warmPool, cfg: defaultConfig()}
	for _, o := range opts {
		if o != nil {
			o(&e.cfg)
		}
	}
	e.cfg.check()
	if client == nil {
		e.cfg.shared.Invalid(errors.New("nil sandbox client"))
	}
	if warmPool == "" {
		e.cfg.shared.Invalid(errors.New("empty warm pool name"))
	}
	return e
}

// Err returns nil, or the first invalid part of the executor's
// configuration, wrapping codeexec.ErrInvalidConfig.
func (e *Executor) Err() error {
	return e.cfg.shared.Err()
}

// Interpreters returns a copy of the table e runs scripts with
// (WithInterpreters, else codeexec.DefaultInterpreters). The commands are
// looked up in the pod, not on the agent's host.
func (e *Executor) Interpreters() codeexec.Interpreters { return e.cfg.shared.Interpreters() }

// Execute runs req in a freshly claimed sandbox pod and deletes the claim
// before it returns. See [codeexec.Executor] and the package documentation.
//
// A run the caller cancels returns a Result with TimedOut set and no output
// files (collecting them would need the connection the caller gave up).
func (e *Executor) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	j, err := newJob(req)
	if err != nil {
		return nil, err
	}
	if j.interp, err = e.cfg.shared.InterpreterFor(j.req); err != nil {
		return nil, err
	}
	if err := j.checkSize(); err != nil {
		return nil, err
	}
	sb, err := e.claim(ctx)
	if err != nil {
		return nil, err
	}
	defer e.release(ctx, sb)
	p, err := e.connect(sb)
	if err != nil {
		return nil, err
	}
	defer p.close()
	return p.execute(ctx, j)
}
