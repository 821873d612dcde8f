//go:build unix

package local

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// The three figures of the foundation issue. Run them with
//
//	go test -run '^$' -bench . -benchmem -benchtime 3x -count 5 ./codeexec/
//
// and read the medians over -count: the machine is shared.

// benchStreamBytes is what the generator prints per stream.
const benchStreamBytes = 1 << 30

// genSrc prints argv[1] bytes of text to stdout (and as much to stderr when
// argv[2] is "both") in 1 MiB writes, so the benchmark measures the capture,
// not the generator.
const genSrc = `import os, sys
total, both = int(sys.argv[1]), sys.argv[2] == "both"
block = 1 << 20
line = b"the quick brown fox jumps over the lazy dog 0123456789 " * 18 + b"\n"
buf = (line * (block // len(line) + 1))[:block]
fds = (1, 2) if both else (1,)
for _ in range(total // block):
    for fd in fds:
        mv = memoryview(buf)
        while mv:
            mv = mv[os.write(fd, mv):]
`

const trivialSrc = "print('hi')\n"

// plainRun is the baseline: the same interpreter on the same file, started
// with plain os/exec.
type plainRun struct {
	python string // the interpreter Local resolves python3 to
	dir    string // holds the script at the same relative path
}

func newPlainRun(b *testing.B, path, src string) *plainRun {
	b.Helper()
	argv, err := host.ResolveInterpreter([]string{"python3"}, []string{"PATH=" + os.Getenv("PATH")}, "")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, path), []byte(src), 0o755); err != nil {
		b.Fatal(err)
	}
	return &plainRun{python: argv[0], dir: dir}
}

func (p *plainRun) run(b *testing.B, stdout, stderr io.Writer, args ...string) {
	cmd := exec.Command(p.python, args...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
}

// heapSampler records the peak of the Go heap (live and unswept objects)
// while it runs, without stopping the world.
type heapSampler struct {
	base, peak atomic.Uint64
	stop       chan struct{}
	wg         sync.WaitGroup
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapNow() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	h := &heapSampler{stop: make(chan struct{})}
	h.base.Store(heapNow())
	h.peak.Store(h.base.Load())
	h.wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				if v := heapNow(); v > h.peak.Load() {
					h.peak.Store(v)
				}
			}
		}
	})
	return h
}

// growth stops the sampler and returns the peak growth over the baseline.
func (h *heapSampler) growth() uint64 {
	close(h.stop)
	h.wg.Wait()
	if v := heapNow(); v > h.peak.Load() {
		h.peak.Store(v)
	}
	return h.peak.Load() - h.base.Load()
}

// BenchmarkLocalMemory is figure 1: 1 GiB to stdout and 1 GiB to stderr
// through Local; the peak Go heap growth must stay under 64 MiB.
func BenchmarkLocalMemory(b *testing.B) {
	e := New()
	req := codeexectest.Script("scripts/gen.py", genSrc)
	req.Args = []string{strconv.Itoa(benchStreamBytes), "both"}
	req.Limits.Timeout = 10 * time.Minute
	var peak uint64
	b.SetBytes(2 * benchStreamBytes)
	b.ResetTimer()
	for b.Loop() {
		h := startHeapSampler()
		res, err := e.Execute(context.Background(), req)
		peak = max(peak, h.growth())
		if err != nil || res.ExitCode != 0 || res.Stdout.TotalChars != benchStreamBytes || res.Stderr.TotalChars != benchStreamBytes {
			b.Fatalf("err %v exit %d totals %d %d stderr %q", err, res.ExitCode, res.Stdout.TotalChars, res.Stderr.TotalChars, res.Stderr.Text[:min(200, len(res.Stderr.Text))])
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// BenchmarkCaptureThroughput is figure 2: 1 GiB of stdout through Local
// against the same interpreter and file under plain os/exec with stdout to
// io.Discard, alternating in one run. Target: ratio >= 0.8.
func BenchmarkCaptureThroughput(b *testing.B) {
	e := New()
	req := codeexectest.Script("scripts/gen.py", genSrc)
	req.Args = []string{strconv.Itoa(benchStreamBytes), "stdout"}
	req.Limits.Timeout = 10 * time.Minute
	plain := newPlainRun(b, req.Script, genSrc)
	var local, base, localCPU, baseCPU time.Duration
	b.SetBytes(benchStreamBytes)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		runLocal := func() {
			start, cpu := time.Now(), selfCPU()
			res, err := e.Execute(context.Background(), req)
			local += time.Since(start)
			localCPU += selfCPU() - cpu
			if err != nil || res.ExitCode != 0 || res.Stdout.TotalChars != benchStreamBytes {
				b.Fatalf("err %v res %+v", err, res)
			}
		}
		runPlain := func() {
			start, cpu := time.Now(), selfCPU()
			plain.run(b, io.Discard, io.Discard, append([]string{req.Script}, req.Args...)...)
			base += time.Since(start)
			baseCPU += selfCPU() - cpu
		}
		if i%2 == 0 {
			runLocal()
			runPlain()
		} else {
			runPlain()
			runLocal()
		}
		i++
	}
	mibps := func(d time.Duration) float64 { return float64(i) * benchStreamBytes / (1 << 20) / d.Seconds() }
	b.ReportMetric(mibps(local), "local-MiB/s")
	b.ReportMetric(mibps(base), "plain-MiB/s")
	b.ReportMetric(base.Seconds()/local.Seconds(), "throughput-ratio")
	// CPU of this process (the reading side) per GiB: the cost of capture,
	// less sensitive than wall time to a contended machine.
	b.ReportMetric(localCPU.Seconds()*1e3/float64(i), "local-cpu-ms/GiB")
	b.ReportMetric(baseCPU.Seconds()*1e3/float64(i), "plain-cpu-ms/GiB")
}

// selfCPU is the user+system CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPerRunOverhead is figure 3: a trivial python script through
// Local against the same interpreter on the same file under plain os/exec
// (stdout captured), alternating in one run. Target: ratio < 1.15. It
// reports medians over the pairs, which a contended machine disturbs less
// than means. The workspace is created in os.TempDir (the default) and,
// where it exists, on the tmpfs /dev/shm: on a disk mounted with discard,
// removing the workspace alone costs milliseconds.
func BenchmarkPerRunOverhead(b *testing.B) {
	b.Run("TempDir", func(b *testing.B) { benchPerRun(b, os.TempDir()) })
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		b.Run("DevShm", func(b *testing.B) { benchPerRun(b, "/dev/shm") })
	}
}

func benchPerRun(b *testing.B, workspaceDir string) {
	e := New(WithWorkspaceDir(workspaceDir))
	req := codeexectest.Script("scripts/trivial.py", trivialSrc)
	plain := newPlainRun(b, req.Script, trivialSrc)
	var local, base, outside []time.Duration
	b.ResetTimer()
	for b.Loop() {
		runLocal := func() {
			start := time.Now()
			res, err := e.Execute(context.Background(), req)
			local = append(local, time.Since(start))
			outside = append(outside, local[len(local)-1]-res.Duration)
			if err != nil || res.Stdout.Text != "hi\n" {
				b.Fatalf("err %v res %+v", err, res)
			}
		}
		runPlain := func() {
			var out sink
			start := time.Now()
			plain.run(b, &out, &out, req.Script)
			base = append(base, time.Since(start))
		}
		if len(local)%2 == 0 {
			runLocal()
			runPlain()
		} else {
			runPlain()
			runLocal()
		}
	}
	l, p := median(local), median(base)
	b.ReportMetric(float64(l)/1e6, "local-ms/run")
	b.ReportMetric(float64(p)/1e6, "plain-ms/run")
	b.ReportMetric(float64(l-p)/1e6, "overhead-ms/run")
	b.ReportMetric(float64(l)/float64(p), "overhead-ratio")
	// The time Execute spends outside the child (validation, staging,
	// resolving the interpreter, collecting, removing the workspace): the
	// overhead without the child's start-up noise.
	b.ReportMetric(float64(median(outside))/1e6, "outside-child-ms/run")
}

// median returns the median of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}

// sink is a plain buffer the baseline writes into.
type sink struct{ b []byte }

func (c *sink) Write(p []byte) (int, error) { c.b = append(c.b, p...); return len(p), nil }
