package host

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/truncate"
)

// captureBufBytes is the read buffer of one captured stream: large reads
// mean few, large writes into the capper, each of which refills its tail
// ring (a cost proportional to the cap, not to the write). Measured here,
// 1 MiB writes cap about twice as fast as 256 KiB ones and five times as
// fast as the 32 KiB of io.Copy.
const captureBufBytes = 1 << 20

// captureBufs recycles read buffers across streams and runs.
var captureBufs = sync.Pool{New: func() any { return new([captureBufBytes]byte) }}

// output is one captured stream of a run: a pipe the pipeline owns, whose
// write end the child inherits as an *os.File (so os/exec starts no copy
// goroutine for it and its WaitDelay never closes it), and a reader of
// ours that drains the read end into a truncate.Capper until EOF. EOF comes when
// every process holding the write end is gone and the pipe is empty,
// however slow the reader; see drain for the only case where the pipeline
// stops reading before it.
type output struct {
	r    *os.File
	capt *truncate.Capper
	read atomic.Int64  // bytes read so far
	done chan struct{} // closed when the reader has returned
}

// newOutput makes the pipe of one stream, enlarged to pipeBytes. w is the
// child's end: the caller hands it to the child and closes its own copy
// right after the start, so the child's processes are its only holders.
func newOutput(maxChars int) (o *output, w *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	growPipe(r)
	return outputOf(r, maxChars), w, nil
}

// outputOf captures the read end r of a stream's pipe (already grown).
func outputOf(r *os.File, maxChars int) *output {
	return &output{r: r, capt: truncate.NewCapper(maxChars), done: make(chan struct{})}
}

// start reads the pipe to its end (or its first error, which is not
// reported: a pipe closed under the reader because a process that escaped
// the run holds it ends the stream) in a goroutine of its own, handing the
// capper full buffers.
func (o *output) start() {
	go func() {
		defer close(o.done)
		b := captureBufs.Get().(*[captureBufBytes]byte)
		defer captureBufs.Put(b)
		fill := 0
		for {
			n, err := o.r.Read(b[fill:])
			fill += n
			o.read.Add(int64(n))
			if fill == len(b) || (err != nil && fill > 0) {
				_, _ = o.capt.Write(b[:fill])
				fill = 0
			}
			if err != nil {
				return
			}
		}
	}()
}

// finished reports whether the reader has returned.
func (o *output) finished() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// close closes the read end: a reader still blocked in it returns. Closing
// twice is harmless.
func (o *output) close() { _ = o.r.Close() }

// stream freezes what was captured. Call it once the reader has returned.
func (o *output) stream() codeexec.Stream {
	return codeexec.Stream{Text: o.capt.String(), TotalChars: o.capt.TotalChars(), TotalBytes: o.capt.TotalBytes(), Truncated: o.capt.Truncated()}
}

// drainCapWaitDelays is the hard cap of drain in WaitDelays: how long
// after the run's process group is dead the pipeline keeps reading a pipe
// that a process which escaped the group holds and keeps writing to.
const drainCapWaitDelays = 20

// Bounds of the interval at which drain looks at pipes still open.
const (
	minDrainPoll = time.Millisecond
	maxDrainPoll = 50 * time.Millisecond
)

// drain returns once every reader of outs has returned. Call it after the
// run's leader has exited and its process group has been killed: from
// then on, a pipe whose write end no process holds any more (POLLHUP) is
// read to EOF, with no time limit, because its content is finite. Only a
// pipe still held, which means by a process that escaped the group, is
// closed under its reader: once it has had nothing to read (FIONREAD 0, no
// byte read) for idle, or hardCap after the start of drain if the escapee
// keeps writing. Closing it loses nothing the run's own processes wrote:
// they are dead, and the pipe was empty or the cap was reached. The
// pipeline passes WaitDelay and drainCapWaitDelays×WaitDelay.
func drain(outs []*output, idle, hardCap time.Duration) {
	start := time.Now()
	capAt := start.Add(hardCap)
	busy := make([]time.Time, len(outs)) // when each pipe last had or gave something to read
	seen := make([]int64, len(outs))
	for i, o := range outs {
		busy[i], seen[i] = start, o.read.Load()
	}
	tick := time.NewTicker(min(max(min(idle, hardCap)/8, minDrainPoll), maxDrainPoll))
	defer tick.Stop()
	check := func(now time.Time) {
		for i, o := range outs {
			if o.finished() {
				continue
			}
			writers, pending, ok := o.pipeState()
			if !ok || !writers {
				continue // EOF comes once the pipe is drained
			}
			if n := o.read.Load(); pending > 0 || n != seen[i] {
				busy[i], seen[i] = now, n
			}
			if now.Sub(busy[i]) >= idle || !now.Before(capAt) {
				o.close()
			}
		}
	}
	for _, o := range outs {
		for !o.finished() {
			select {
			case <-o.done:
			case now := <-tick.C:
				check(now)
			}
		}
	}
}
