package codeexec_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// The black-box suite every executor passes; the host-only tests are in
// host_test.go.

func TestLocalConformance(t *testing.T) {
	codeexectest.Run(t, func() codeexec.Executor { return codeexec.NewLocal() })
}

func TestSandboxConformance(t *testing.T) {
	requireBwrap(t)
	codeexectest.Run(t, func() codeexec.Executor { return codeexec.NewSandbox() })
}

// requireBwrap skips t where bubblewrap is not installed and fails it where
// the sandbox does not work.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed, so the Sandbox cannot be tested here: apt-get install bubblewrap")
	}
	if err := codeexec.NewSandbox().Probe(context.Background()); err != nil {
		t.Fatalf("bubblewrap is installed but the sandbox does not work: %v", err)
	}
}

// Under a WaitDelay far shorter than a loaded reader takes to drain a pipe,
// tailRuns runs at once still return the end of their output.
const (
	tailRuns      = 32
	tailWaitDelay = time.Millisecond
)

func TestLocalOutputTailShortWaitDelay(t *testing.T) {
	codeexectest.OutputTail(t, codeexec.NewLocal(codeexec.WithWaitDelay(tailWaitDelay)), tailRuns)
}

func TestSandboxOutputTailShortWaitDelay(t *testing.T) {
	requireBwrap(t)
	codeexectest.OutputTail(t, codeexec.NewSandbox(codeexec.WithWaitDelay(tailWaitDelay)), tailRuns)
}
