//go:build linux

package agentsandbox

import (
	"testing"

	"github.com/adkskills/adkskills/codeexec"
)

// TestConformance runs codeexec's behaviour suite against the executor on
// real sandboxd pods.
func TestConformance(t *testing.T) {
	c := newCluster(t)
	runConformance(t, func(opts ...Option) codeexec.Executor { return c.executor(opts...) })
}
