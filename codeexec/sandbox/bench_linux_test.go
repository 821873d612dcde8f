package sandbox

import (
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/local"

	"github.com/adkskills/adkskills/codeexec"

	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkSandboxOverhead measures what the sandbox adds to one run: a
// trivial python script through Local and through Sandbox, alternating in
// the same loop so both see the same machine. It reports each executor's
// median time per run, the difference and the ratio.
func BenchmarkSandboxOverhead(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
	}
	ctx := context.Background()
	sb, local := New(), local.New()
	if err := sb.Probe(ctx); err != nil {
		b.Fatal(err)
	}
	req := codeexectest.Script("scripts/trivial.py", "print('hi')\n")
	run := func(e codeexec.Executor) time.Duration {
		start := time.Now()
		res, err := e.Execute(ctx, req)
		d := time.Since(start)
		if err != nil || res.ExitCode != 0 || res.Stdout.Text != "hi\n" {
			b.Fatalf("%T: %v %+v", e, err, res)
		}
		return d
	}
	run(local) // warm the page cache and the sandbox's interpreter view
	run(sb)
	var ld, sd []time.Duration
	for b.Loop() {
		ld = append(ld, run(local))
		sd = append(sd, run(sb))
	}
	lm, sm := sandboxMedian(ld), sandboxMedian(sd)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lm), "local-ms/run")
	b.ReportMetric(ms(sm), "sandbox-ms/run")
	b.ReportMetric(ms(sm-lm), "added-ms/run")
	b.ReportMetric(float64(sm)/float64(lm), "ratio")
}

// sandboxMedian is the median of ds (which it sorts).
func sandboxMedian(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
