package host

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// drainLimit is the limit under test in TestDrain; the other limit of
// each case is drainNever, so that only one rule can end it.
const (
	drainLimit = 50 * time.Millisecond
	drainNever = time.Hour
)

// TestDrain drives drain with the test itself holding the write end of the
// pipe, in the roles the processes of a run can play.
func TestDrain(t *testing.T) {
	block := bytes.Repeat([]byte("0123456789abcde\n"), pipeBytes/16)
	tests := []struct {
		name          string
		idle, hardCap time.Duration
		// before plays the run's dead processes: it writes to w, returns
		// what it wrote and may close w, all before drain starts.
		before func(w *os.File) int
		// during plays an escapee: it runs in its own goroutine until
		// drained is closed (or its writes fail), then closes w and
		// returns what it wrote.
		during   func(w *os.File, drained <-chan struct{}) int
		min, max time.Duration // drain's duration
		all      bool          // every byte written is captured
	}{
		// Every writer is dead, the pipe full: drain reads it to EOF,
		// however short its limits.
		{name: "WritersGone", idle: time.Nanosecond, hardCap: time.Nanosecond,
			before: func(w *os.File) int {
				n, _ := w.Write(block[:pipeBytes/2])
				w.Close()
				return n
			}, max: hosttest.Grace, all: true},
		// An escapee holds the pipe and writes nothing: closed once it has
		// been idle that long.
		{name: "IdleEscapee", idle: drainLimit, hardCap: drainNever,
			before: func(w *os.File) int {
				n, _ := w.Write(block[:pipeBytes/4])
				return n
			},
			during: func(w *os.File, drained <-chan struct{}) int {
				<-drained
				w.Close()
				return 0
			}, min: drainLimit, max: drainLimit + hosttest.Grace, all: true},
		// An escapee that keeps writing: closed at the hard cap.
		{name: "WritingEscapee", idle: drainNever, hardCap: drainLimit,
			during: func(w *os.File, drained <-chan struct{}) int {
				defer w.Close()
				total := 0
				for {
					n, err := w.Write(block[:len(block)/16])
					total += n
					if err != nil { // EPIPE: drain closed the read end
						return total
					}
				}
			}, min: drainLimit, max: drainLimit + hosttest.Grace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, w, err := newOutput(codeexec.DefaultMaxOutputChars)
			if err != nil {
				t.Fatal(err)
			}
			defer o.close()
			o.start()
			wrote := 0
			if tt.before != nil {
				wrote = tt.before(w)
			}
			later, drained := make(chan int, 1), make(chan struct{})
			if tt.during != nil {
				go func() { later <- tt.during(w, drained) }()
			} else {
				later <- 0
			}
			start := time.Now()
			drain([]*output{o}, tt.idle, tt.hardCap)
			elapsed := time.Since(start)
			close(drained)
			if elapsed < tt.min || elapsed > tt.max {
				t.Errorf("drain took %v, want %v to %v", elapsed, tt.min, tt.max)
			}
			wrote += <-later
			got := o.stream()
			if tt.all && got.TotalChars != int64(wrote) {
				t.Errorf("captured %d chars of %d written", got.TotalChars, wrote)
			}
			if got.TotalChars > int64(wrote) {
				t.Errorf("captured %d chars, more than the %d written", got.TotalChars, wrote)
			}
		})
	}
}

// TestLocalEscapeeKeepsWriting: a process that escaped the group and
// floods the stdout it inherited cannot hold the call open past the hard
// cap of drainCapWaitDelays WaitDelays.
func TestLocalEscapeeKeepsWriting(t *testing.T) {
	const delay = 20 * time.Millisecond
	marker := hosttest.NewMarker(t)
	src := `setsid yes spam &
pid=$!
until [ "$(cut -d' ' -f6 /proc/$pid/stat)" = "$pid" ]; do sleep 0.01; done
echo started >&2
`
	req := codeexectest.Script("scripts/flood.sh", src)
	req.Env = map[string]string{hosttest.MarkerVar: marker}
	res, elapsed := hosttest.RunBounded(t, newLocal(withWaitDelay(delay)), req, 0, marker)
	if limit := drainCapWaitDelays*delay + hosttest.Grace; elapsed > limit {
		t.Errorf("Execute took %v, want within %v", elapsed, limit)
	}
	if res.ExitCode != 0 || !strings.HasPrefix(res.Stdout.Text, "spam\n") || res.Stderr.Text != "started\n" {
		t.Errorf("exit %d stdout %.20q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	t.Logf("returned after %v with %d chars of stdout (hard cap %v)", elapsed, res.Stdout.TotalChars, drainCapWaitDelays*delay)
}

func withWaitDelay(d time.Duration) func(*Config) {
	return func(c *Config) { c.SetWaitDelay(d) }
}
