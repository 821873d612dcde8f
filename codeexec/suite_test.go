package codeexec_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// The black-box suite every executor passes; the host-only tests are in
// host_test.go.

func TestLocalConformance(t *testing.T) {
	codeexectest.Run(t, func() codeexec.Executor { return codeexec.NewLocal() })
}

func TestSandboxConformance(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed, so the Sandbox cannot be tested here: apt-get install bubblewrap")
	}
	if err := codeexec.NewSandbox().Probe(context.Background()); err != nil {
		t.Fatalf("bubblewrap is installed but the sandbox does not work: %v", err)
	}
	codeexectest.Run(t, func() codeexec.Executor { return codeexec.NewSandbox() })
}
