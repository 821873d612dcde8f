package integration

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/model/scripted"
)

// floodBytes is what flood.sh prints on each stream in the end-to-end
// benchmark: 1 GiB in all through the runner, the tool, the executor and the
// response.
const floodBytes = 512 << 20

// BenchmarkEndToEndFlood pushes floodBytes per stream from a skill script
// through ADK's runner and run_skill_script, and reports the peak Go heap
// growth over the run (sampled) and the throughput of both streams.
//
//	go test -run '^$' -bench EndToEndFlood -benchtime 3x ./integration/
func BenchmarkEndToEndFlood(b *testing.B) {
	var peak atomic.Uint64
	var ms runtime.MemStats
	for range b.N {
		h := newHarness(b, harnessConfig{steps: []scripted.Step{
			call("run_skill_script", map[string]any{"skill_name": "shell-tools", "script_path": "scripts/flood.sh", "args": []any{fmt.Sprint(floodBytes)}}),
			say("flooded"),
		}})
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			var s runtime.MemStats
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					runtime.ReadMemStats(&s)
					if s.HeapInuse > base && s.HeapInuse-base > peak.Load() {
						peak.Store(s.HeapInuse - base)
					}
				}
			}
		})
		_, resp := responseEvent(b, h.say("flood"), "run_skill_script")
		close(stop)
		wg.Wait()
		if resp["status"] != "success" || !strings.Contains(resp["stdout"].(string), "truncated") {
			b.Fatalf("unexpected response: status %v", resp["status"])
		}
		if got := len([]rune(resp["stdout"].(string))); got > codeexec.DefaultMaxOutputChars+200 {
			b.Fatalf("stdout kept %d characters", got)
		}
	}
	b.SetBytes(2 * floodBytes)
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}
