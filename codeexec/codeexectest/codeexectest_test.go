package codeexectest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/local"
)

// brokenEnv names the broken executor a child test binary runs the suite
// against.
const brokenEnv = "CODEEXECTEST_BROKEN"

// broken are executors that each break one promise of the contract, and the
// subtest of the suite that must catch it.
var broken = map[string]struct {
	wrap    func(req *codeexec.Request, res *codeexec.Result)
	subtest string
}{
	// Runs past every time limit.
	"IgnoresTimeout": {wrap: func(req *codeexec.Request, _ *codeexec.Result) {
		if req.Limits.Timeout > 0 {
			req.Limits.Timeout *= 10
		}
	}, subtest: "ProcessTree/InfiniteLoop"},
	// Hands the agent's environment to the script.
	"LeaksEnvironment": {wrap: func(req *codeexec.Request, _ *codeexec.Result) {
		req.Env = map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			req.Env[k] = v
		}
	}, subtest: "SecretsDoNotLeak"},
	// Does not cap the streams.
	"NoCap": {wrap: func(req *codeexec.Request, _ *codeexec.Result) {
		req.Limits.MaxOutputChars = 1 << 30
	}, subtest: "OutputCapping/OverDefault"},
	// Reports the request's own files as outputs.
	"ReportsInputs": {wrap: func(req *codeexec.Request, res *codeexec.Result) {
		if res != nil {
			res.Files = append(res.Files, req.Files...)
		}
	}, subtest: "OutputFiles"},
	// Never reports a deletion.
	"HidesDeletions": {wrap: func(_ *codeexec.Request, res *codeexec.Result) {
		if res != nil {
			res.Deleted = nil
		}
	}, subtest: "Deletions/Cases"},
	// Reports every extra file deleted, whatever the run did to it.
	"DeletesAllInputs": {wrap: func(req *codeexec.Request, res *codeexec.Result) {
		if res != nil {
			res.Deleted = codeexectest.Paths(req.Files)
		}
	}, subtest: "Deletions/Cases"},
	// Stops listing deletions at the output files' count.
	"CapsDeletions": {wrap: func(_ *codeexec.Request, res *codeexec.Result) {
		if res != nil && len(res.Deleted) > codeexec.DefaultMaxOutputFiles {
			res.Deleted = res.Deleted[:codeexec.DefaultMaxOutputFiles]
		}
	}, subtest: "Deletions/Thousands"},
	// Loses stdin.
	"DropsStdin": {wrap: func(req *codeexec.Request, _ *codeexec.Result) {
		req.Stdin = nil
	}, subtest: "Stdin/Bytes"},
}

// brokenExecutor is Local with one promise broken: wrap changes the request
// before the run and the result after it.
type brokenExecutor struct {
	wrap func(*codeexec.Request, *codeexec.Result)
}

func (b brokenExecutor) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	if req != nil {
		r := *req
		req = &r
		b.wrap(req, nil)
	}
	res, err := local.New().Execute(ctx, req)
	if req != nil {
		b.wrap(req, res)
	}
	return res, err
}

// TestBrokenChild is the suite against the broken executor named in
// brokenEnv; it runs only in the child TestBrokenExecutorsFail starts.
func TestBrokenChild(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("runs only as the child of TestBrokenExecutorsFail")
	}
	codeexectest.Run(t, func() codeexec.Executor { return brokenExecutor{wrap: broken[name].wrap} })
}

// TestBrokenExecutorsFail: each broken executor fails the subtest that
// guards the promise it breaks. (codeexec's TestLocalConformance runs the
// whole suite against Local unbroken, which passes.)
func TestBrokenExecutorsFail(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("already the child")
	}
	for name, b := range broken {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			filter := "^TestBrokenChild$"
			for _, part := range strings.Split(b.subtest, "/") {
				filter += "/^" + part + "$"
			}
			cmd := exec.Command(os.Args[0], "-test.run="+filter, "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed an executor that breaks %s:\n%s", b.subtest, out)
			}
			if want := "--- FAIL: TestBrokenChild/" + b.subtest; !strings.Contains(string(out), want) {
				t.Errorf("the suite failed, but not with %q:\n%s", want, out)
			}
		})
	}
}
