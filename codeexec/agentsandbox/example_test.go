//go:build linux

package agentsandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/agentsandbox/agentsandboxtest"
)

// In a cluster the client comes from the agent's service account:
//
//	client, err := sandbox.NewClient(ctx, sandbox.Options{
//		Runtime:      sandbox.RuntimeSandboxd,
//		Connectivity: sandbox.ConnectivityInClusterPodIP,
//	})
//
// Here it is the fake cluster the tests use: agent-sandbox's fake
// clientsets and a local sandboxd per claim.
func ExampleNew() {
	tb := &agentsandboxtest.Standalone{}
	defer tb.Close()
	c := newCluster(tb)

	exec := New(c.Client, "skills-pool",
		WithNamespace("agents"),
		WithGRPCPort(c.GRPCPort), // the template's --grpc-port; 9090 by default
		WithKubernetes(c.Helper), // optional: a missing pool fails at once
	)
	res, err := exec.Execute(context.Background(), &codeexec.Request{
		Files: []codeexec.File{{Path: "scripts/hello.py", Data: []byte(
			"import sys\nprint('hello,', sys.argv[1])\nopen('greeting.txt', 'w').write('hi')\n")}},
		Script: "scripts/hello.py",
		Args:   []string{"pod"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Stdout.Text)
	for _, f := range res.Files {
		fmt.Printf("%s: %q\n", f.Path, f.Data)
	}
	created, deleted := c.Counts()
	fmt.Println("claims created:", created, "deleted:", deleted)
	// Output:
	// hello, pod
	// greeting.txt: "hi"
	// claims created: 1 deleted: 1
}

// At start-up, Probe checks with one claim round trip that scripts can
// run, and says what to change when they cannot.
func ExampleExecutor_Probe() {
	tb := &agentsandboxtest.Standalone{}
	defer tb.Close()
	c := newCluster(tb)
	ctx := context.Background()

	exec := New(c.Client, "skills-pool", WithNamespace("agents"), WithGRPCPort(c.GRPCPort), WithKubernetes(c.Helper))
	if err := exec.Probe(ctx); err != nil {
		fmt.Println(err) // in an agent: log.Fatal(err)
		return
	}
	fmt.Println("ready")

	wrong := New(c.Client, "skills-pool", WithNamespace("default"), WithKubernetes(c.Helper))
	err := wrong.Probe(ctx)
	fmt.Println(errors.Is(err, ErrNoWarmPool), errors.Is(err, codeexec.ErrSandboxUnavailable))
	// Output:
	// ready
	// true true
}
