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
// NewCluster (here outside a test, so with a TB of its own) and builds the
// executor on its client, as it would on a real one.
func ExampleNewCluster() {
	tb := &exampleTB{}
	defer tb.close()
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

// exampleTB is a TB for an Example.
type exampleTB struct{ cleanups []func() }

func (*exampleTB) Helper() {}

func (tb *exampleTB) TempDir() string {
	dir, err := os.MkdirTemp("", "agentsandboxtest-example-")
	if err != nil {
		panic(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (tb *exampleTB) Cleanup(f func()) { tb.cleanups = append(tb.cleanups, f) }

func (*exampleTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

func (*exampleTB) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (tb *exampleTB) close() {
	for i := len(tb.cleanups) - 1; i >= 0; i-- {
		tb.cleanups[i]()
	}
}
