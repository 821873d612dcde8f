package codeexec

import (
	"io"
	"sync"
	"syscall"

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

// pipeBytes is the pipe capacity asked for (F_SETPIPE_SZ), so a child
// writing large blocks wakes the reader once per block, not per 64 KiB. It
// is best effort: an unprivileged process is bounded by
// /proc/sys/fs/pipe-max-size (1 MiB by default).
const pipeBytes = 1 << 20

// capture is the writer a captured stream is given: a truncate.Capper fed
// in large blocks. os/exec copies the child's pipe into it with io.Copy,
// which uses ReadFrom.
type capture struct {
	c *truncate.Capper
}

func newCapture(maxChars int) *capture {
	return &capture{c: truncate.NewCapper(maxChars)}
}

// Write feeds p to the capper; it never fails, so the pipe keeps draining.
func (w *capture) Write(p []byte) (int, error) { return w.c.Write(p) }

// ReadFrom drains r to EOF (or its first error, which is not reported: a
// pipe closed by WaitDelay ends the stream), handing the capper full
// buffers.
func (w *capture) ReadFrom(r io.Reader) (int64, error) {
	growPipe(r)
	b := captureBufs.Get().(*[captureBufBytes]byte)
	defer captureBufs.Put(b)
	buf := b[:]
	var total int64
	fill := 0
	for {
		n, err := r.Read(buf[fill:])
		fill += n
		total += int64(n)
		if fill == len(buf) || (err != nil && fill > 0) {
			w.c.Write(buf[:fill])
			fill = 0
		}
		if err != nil {
			return total, nil
		}
	}
}

// stream freezes the capture into a Stream.
func (w *capture) stream() Stream {
	return Stream{Text: w.c.String(), TotalChars: w.c.TotalChars(), Truncated: w.c.Truncated()}
}

// growPipe asks for a pipeBytes capacity on r when it is a pipe.
func growPipe(r io.Reader) {
	sc, ok := r.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	const fSETPIPESZ = 1031 // F_SETPIPE_SZ
	_ = rc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSETPIPESZ, pipeBytes)
	})
}
