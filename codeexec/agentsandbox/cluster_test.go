//go:build linux

package agentsandbox

import (
	"os"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec/agentsandbox/agentsandboxtest"
)

// The tests run the executor against agentsandboxtest's fake cluster: the
// client's fake clientsets, a reactor playing the controller, and a real
// sandboxd per claim.

func TestMain(m *testing.M) { os.Exit(agentsandboxtest.Main(m)) }

const (
	testPool      = agentsandboxtest.Pool
	testNamespace = agentsandboxtest.Namespace
)

// cluster is the fake cluster, with the executor the tests use.
type cluster struct {
	*agentsandboxtest.Cluster
}

func newCluster(tb agentsandboxtest.TB) *cluster {
	tb.Helper()
	return &cluster{agentsandboxtest.NewCluster(tb)}
}

// executor returns an executor on the cluster's warm pool.
func (c *cluster) executor(opts ...Option) *Executor {
	base := []Option{WithNamespace(testNamespace), WithGRPCPort(c.GRPCPort), WithKubernetes(c.Helper), WithClaimTimeout(10 * time.Second)}
	return New(c.Client, testPool, append(base, opts...)...)
}
