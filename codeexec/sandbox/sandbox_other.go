//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"runtime"

	"github.com/adkskills/adkskills/codeexec"
)

// sandboxState is empty off Linux: there is no machine to probe.
type sandboxState struct{} //lint:ignore U1000 the portable Sandbox holds one

// errNoSandbox is what Probe and Execute return off Linux.
func errNoSandbox() error {
	return fmt.Errorf("%w: bubblewrap sandboxing needs Linux (this is %s): use Local for code you trust, or a remote executor such as codeexec/agentsandbox", codeexec.ErrSandboxUnavailable, runtime.GOOS)
}

// Execute returns an error wrapping [codeexec.ErrSandboxUnavailable]: the sandbox
// needs Linux. The script does not run.
func (s *Executor) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	if err := s.cfg.Err(); err != nil {
		return nil, err
	}
	return nil, errNoSandbox()
}

// Probe returns an error wrapping [codeexec.ErrSandboxUnavailable]: the sandbox
// needs Linux.
func (s *Executor) Probe(ctx context.Context) error {
	if err := s.cfg.Err(); err != nil {
		return err
	}
	return errNoSandbox()
}

// Describe says that the sandbox needs Linux.
func (s *Executor) Describe() string { return errNoSandbox().Error() }

// closePrepared has nothing to release here.
func (s *Executor) closePrepared() {}

// probeCacheFile is "" here: there is no probe to remember.
func probeCacheFile(string) string { return "" }
