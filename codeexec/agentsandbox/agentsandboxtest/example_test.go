//go:build linux

package agentsandboxtest_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/agentsandbox"
	"github.com/adkskills/adkskills/codeexec/agentsandbox/agentsandboxtest"
)

func TestMain(m *testing.M) { os.Exit(agentsandboxtest.Main(m)) }

// A test of code that runs scripts with agentsandbox gets a cluster from
// NewCluster (here outside a test, so with a Standalone TB) and builds the
// executor on its client, as it would on a real one.
func ExampleNewCluster() {
	tb := &agentsandboxtest.Standalone{}
	defer tb.Close()
	c := agentsandboxtest.NewCluster(tb)

	exec := agentsandbox.New(c.Client, agentsandboxtest.Pool,
		agentsandbox.WithNamespace(agentsandboxtest.Namespace),
		agentsandbox.WithGRPCPort(c.GRPCPort),
		agentsandbox.WithKubernetes(c.Helper),
	)
	res, err := exec.Execute(context.Background(), &codeexec.Request{
		Files:  []codeexec.File{{Path: "scripts/hello.sh", Data: []byte("echo hello from a pod")}},
		Script: "scripts/hello.sh",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Stdout.Text)
	created, deleted := c.Counts()
	fmt.Println("claims created:", created, "deleted:", deleted)
	// Output:
	// hello from a pod
	// claims created: 1 deleted: 1
}
