//go:build linux

package agentsandbox

import (
	"context"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
)

// BenchmarkTrivialScript is one trivial python run, on the host (Local) and
// through this executor against local sandboxd pods: the difference is the
// executor's per-run overhead (claim and delete on the fake clientsets,
// staging, the run, collection), without a real cluster's API latency.
func BenchmarkTrivialScript(b *testing.B) {
	req := script("scripts/hello.py", "print('hello')\n")
	c := newCluster(b)
	for _, bm := range []struct {
		name string
		exec codeexec.Executor
	}{
		// The same PATH as the pods', so both run /usr/bin/python3.
		{"Local", local.New(local.WithEnv(map[string]string{"PATH": DefaultPATH}))},
		{"AgentSandbox", c.executor()},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := bm.exec.Execute(context.Background(), req)
				if err != nil || res.Stdout.Text != "hello\n" {
					b.Fatalf("%+v, %v", res, err)
				}
			}
		})
	}
}

// floodStreamBytes is what BenchmarkFlood's script prints on each stream.
const floodStreamBytes = 256 << 20

// BenchmarkFlood streams floodStreamBytes on stdout and as many on stderr
// through the executor and reports the peak of the heap above what it was
// before the run (sampled every millisecond): the capture is O(cap).
func BenchmarkFlood(b *testing.B) {
	c := newCluster(b)
	e := c.executor()
	req := script("scripts/flood.py", `import os, sys
n = int(sys.argv[1])
block = b"the quick brown fox jumps over the lazy dog 0123456789\n" * 1200
for fd in (1, 2):
    left = n
    while left:
        left -= os.write(fd, block[:left])
`)
	req.Args = []string{strconv.Itoa(floodStreamBytes)}
	req.Limits.Timeout = 10 * time.Minute
	b.SetBytes(2 * floodStreamBytes)
	b.ReportAllocs()
	var peak atomic.Uint64
	for b.Loop() {
		base := heapBytes()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if h := heapBytes(); h > base && h-base > peak.Load() {
						peak.Store(h - base)
					}
				}
			}
		})
		res, err := e.Execute(context.Background(), req)
		close(stop)
		wg.Wait()
		if err != nil || res.Stdout.TotalChars != floodStreamBytes || res.Stderr.TotalChars != floodStreamBytes {
			b.Fatalf("%v: stdout %d stderr %d characters", err, res.Stdout.TotalChars, res.Stderr.TotalChars)
		}
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

// heapBytes is the heap's live and not yet swept objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
