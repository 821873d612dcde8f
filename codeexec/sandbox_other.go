//go:build !linux

package codeexec

import (
	"context"
	"fmt"
	"runtime"
)

// sandboxState is empty off Linux: there is no machine to probe.
type sandboxState struct{} //lint:ignore U1000 the portable Sandbox holds one

// errNoSandbox is what Probe and Execute return off Linux.
func errNoSandbox() error {
	return fmt.Errorf("%w: bubblewrap sandboxing needs Linux (this is %s): use Local for code you trust, or a remote executor such as codeexec/agentsandbox", ErrSandboxUnavailable, runtime.GOOS)
}

// Execute returns an error wrapping [ErrSandboxUnavailable]: the sandbox
// needs Linux. The script does not run.
func (s *Sandbox) Execute(ctx context.Context, req *Request) (*Result, error) {
	if err := s.cfg.err(); err != nil {
		return nil, err
	}
	return nil, errNoSandbox()
}

// Probe returns an error wrapping [ErrSandboxUnavailable]: the sandbox
// needs Linux.
func (s *Sandbox) Probe(ctx context.Context) error {
	if err := s.cfg.err(); err != nil {
		return err
	}
	return errNoSandbox()
}
