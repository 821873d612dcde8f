package sandbox_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/sandbox"
)

// The black-box suite every executor passes.

func TestConformance(t *testing.T) {
	requireBwrap(t)
	codeexectest.Run(t, func() codeexec.Executor { return sandbox.New() })
}

// TestConformanceEgress: behind the egress hook (which starts every
// script) the contract holds the same.
func TestConformanceEgress(t *testing.T) {
	requireBwrap(t)
	codeexectest.Run(t, func() codeexec.Executor { return sandbox.New(sandbox.WithEgress("127.0.0.1:1")) })
}

// requireBwrap skips t where bubblewrap is not installed and fails it where
// the sandbox does not work.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed, so the sandbox cannot be tested here: apt-get install bubblewrap")
	}
	if err := sandbox.New().Probe(context.Background()); err != nil {
		t.Fatalf("bubblewrap is installed but the sandbox does not work: %v", err)
	}
}

// Under a WaitDelay far shorter than a loaded reader takes to drain a pipe,
// tailRuns runs at once still return the end of their output.
const (
	tailRuns      = 32
	tailWaitDelay = time.Millisecond
)

func TestOutputTailShortWaitDelay(t *testing.T) {
	requireBwrap(t)
	codeexectest.OutputTail(t, sandbox.New(sandbox.WithWaitDelay(tailWaitDelay)), tailRuns)
}
