package egress

import (
	"net"
	"os"
	"testing"
	"time"
)

// BenchmarkHandoff: what reaching the sandbox costs a run. bwrap is a
// sandbox running sh -c 'exit 0' under prlimit (the baseline); hook is the
// same behind the hook, the listener handed over and the proxy served on
// it (the difference is the hook's cost, way b; cpu-ms/op is the
// sandbox's processes' CPU time); setns is way (a), the agent making the
// listener in an existing namespace itself (root only).
func BenchmarkHandoff(b *testing.B) {
	for _, behind := range []bool{false, true} {
		name := "bwrap"
		if behind {
			name = "hook"
		}
		b.Run(name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				r := runSandboxed(b, nil, "exit 0", behind)
				if r.exit != 0 || behind && r.handoff != nil {
					b.Fatalf("exit %d, handoff %v: %s", r.exit, r.handoff, r.errOut)
				}
				cpu += r.cpu
			}
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
		})
	}
	b.Run("setns", func(b *testing.B) {
		if os.Geteuid() != 0 {
			b.Skip("joining a namespace needs CAP_SYS_ADMIN")
		}
		ns := newNetns(b)
		b.ReportAllocs()
		for b.Loop() {
			var l net.Listener
			if err := inNetns(ns, func() (err error) {
				l, err = net.Listen("tcp4", "127.0.0.1:3128")
				return err
			}); err != nil {
				b.Fatal(err)
			}
			l.Close()
		}
	})
}
