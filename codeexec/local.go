package codeexec

import (
	"context"
	"os/exec"
)

// Local runs scripts as plain subprocesses of the host.
//
// Local provides NO ISOLATION. The script is a host process with the rights
// of the agent's own process (its user, its files, its network). What Local
// guarantees is hygiene, not security: a fresh private workspace per run,
// removed afterwards; an environment built from an allowlist, so the agent's
// secrets (API keys) reach a script only when the operator passes them; the
// whole process group killed on timeout or cancellation and when the script
// exits; bounded output capture; and output files read without following
// symlinks. A script can still read or change anything the agent's user
// can, use the network, and leave a process behind by calling setsid. Use
// [Sandbox] for scripts you do not trust.
//
// A Local is safe for concurrent use; its configuration is fixed by
// [NewLocal].
type Local struct {
	cfg config
}

// NewLocal returns a Local executor configured by opts.
//
// NewLocal does not fail and does not touch the system: an invalid option
// value (a relative workspace directory, a negative WaitDelay, a malformed
// interpreter table, an invalid environment name) is reported by
// [Local.Err] and by every Execute as an error wrapping [ErrInvalidConfig].
//
// Local runs scripts on Linux, macOS and the BSDs. On Windows, Execute
// returns an error wrapping [ErrStart]: there is no process-group kill, so a
// timeout could not stop a script's children.
func NewLocal(opts ...LocalOption) *Local {
	l := &Local{}
	for _, o := range opts {
		if o != nil {
			o.applyLocal(l)
		}
	}
	return l
}

// Err reports the first invalid option NewLocal was given, wrapping
// [ErrInvalidConfig], or nil.
func (l *Local) Err() error { return l.cfg.err() }

// Execute runs req as a host subprocess. See [Executor] and [Local].
func (l *Local) Execute(ctx context.Context, req *Request) (*Result, error) {
	if err := localSupported(); err != nil {
		return nil, err
	}
	return execute(ctx, &l.cfg, localLauncher{}, req)
}

// localLauncher starts the interpreter directly on the host.
type localLauncher struct{}

// stageMode: clones of the snapshot where the file system makes them, else
// hard links (Local runs trusted code as the agent's own user: see
// cache.go for the tamper check).
func (localLauncher) stageMode() stageMode { return stageCloneOrLink }

func (localLauncher) recordsGroup() {}

func (localLauncher) prepare(*workspace) error { return nil }

func (localLauncher) command(ctx context.Context, p *plan) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, p.argv[0], p.argv[1:]...)
	cmd.Dir = p.ws.skill
	cmd.Env = p.env
	return cmd, nil
}
