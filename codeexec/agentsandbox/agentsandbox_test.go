//go:build linux

package agentsandbox

import (
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// TestConformance runs codeexec's behaviour suite against the executor on
// real sandboxd pods.
func TestConformance(t *testing.T) {
	c := newCluster(t)
	codeexectest.Run(t, func() codeexec.Executor { return c.executor() })
}

// TestConformanceThroughPortForward runs the suite with sandboxd reached
// through port-forwards that the (fake) API server brokers, as from a
// laptop.
func TestConformanceThroughPortForward(t *testing.T) {
	c := newCluster(t)
	codeexectest.Run(t, func() codeexec.Executor { return c.executor(WithPortForward()) })
	if c.Forwards() == 0 {
		t.Error("no run went through a port-forward")
	}
}

// Bounds of this package's own tests: a run may take grace past its limit
// on a contended machine; a test gives up on a run after hardDeadline.
const (
	grace        = 3 * time.Second
	hardDeadline = 60 * time.Second
)

// script is a request running one script, the skill's only file.
var script = codeexectest.Script
