package egress

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// budget is a run's bytes: reserved before they move, so the cap is exact.
type budget struct {
	max            int64
	used           atomic.Int64
	sent, received atomic.Int64
}

// left is how many bytes may still move.
func (b *budget) left() int64 { return b.max - b.used.Load() }

// take reserves up to n bytes and returns how many it got.
func (b *budget) take(n int) int {
	for {
		used := b.used.Load()
		g := min(int64(n), b.max-used)
		if g == 0 {
			return 0
		}
		if b.used.CompareAndSwap(used, used+g) {
			return int(g)
		}
	}
}

// give returns n reserved bytes that did not move.
func (b *budget) give(n int) { b.used.Add(-int64(n)) }

// bufferPool holds the copy buffers of tunnels and forwarded bodies.
var bufferPool = sync.Pool{New: func() any { return new([copyBuffer]byte) }}

// copyBuffer is the size of a copy buffer.
const copyBuffer = 32 << 10

// buffers lends copy buffers (an httputil.BufferPool).
type buffers struct{}

func (buffers) Get() []byte { return bufferPool.Get().(*[copyBuffer]byte)[:] }

// Put takes back a buffer of Get's.
func (buffers) Put(b []byte) { bufferPool.Put((*[copyBuffer]byte)(b)) }

// errBytes ends a connection at the run's byte limit.
var errBytes = errors.New("egress: the run's byte limit is reached")

// activity is the time of the last byte of a connection (or tunnel), in
// either direction.
type activity struct{ last atomic.Int64 }

func (a *activity) touch() { a.last.Store(time.Now().UnixNano()) }

// idleRead reads from c into p, failing with os.ErrDeadlineExceeded only
// when neither direction has moved a byte for idle (0: no limit).
func idleRead(c net.Conn, p []byte, act *activity, idle time.Duration) (int, error) {
	if idle == 0 {
		return c.Read(p)
	}
	for {
		deadline := time.Unix(0, act.last.Load()).Add(idle)
		if !time.Now().Before(deadline) {
			return 0, os.ErrDeadlineExceeded
		}
		_ = c.SetReadDeadline(deadline)
		n, err := c.Read(p)
		if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			act.touch() // a byte, or the end: either way not idle
			return n, err
		}
	}
}

// upConn is an upstream connection: counted against the run's bytes and
// open connections, closed when idle, and closed by the proxy's Close.
type upConn struct {
	net.Conn
	x      *Proxy
	t      target
	act    *activity
	once   sync.Once
	capped atomic.Bool // the byte limit ended it (reported once)
}

// track wraps and registers a new upstream connection.
func (x *Proxy) track(c net.Conn, t target) *upConn {
	u := &upConn{Conn: c, x: x, t: t, act: &activity{}}
	u.act.touch()
	x.mu.Lock()
	closed := x.closed
	if !closed {
		x.live[u] = struct{}{}
	}
	x.mu.Unlock()
	if closed {
		u.Close()
	}
	return u
}

func (u *upConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return u.Conn.Read(p)
	}
	g := u.x.bytes.take(len(p))
	if g == 0 {
		return 0, u.overLimit()
	}
	n, err := idleRead(u.Conn, p[:g], u.act, u.x.lim.IdleTimeout)
	u.x.bytes.give(g - n)
	u.x.bytes.received.Add(int64(n))
	return n, err
}

func (u *upConn) Write(p []byte) (int, error) {
	var done int
	for len(p) > 0 {
		g := u.x.bytes.take(len(p))
		if g == 0 {
			return done, u.overLimit()
		}
		n, err := u.Conn.Write(p[:g])
		u.x.bytes.give(g - n)
		u.x.bytes.sent.Add(int64(n))
		done += n
		u.act.touch()
		if err != nil {
			return done, err
		}
		p = p[n:]
	}
	return done, nil
}

// overLimit records that the byte limit ended this connection, closes it,
// and returns errBytes.
func (u *upConn) overLimit() error {
	if !u.capped.Swap(true) {
		u.x.refuse(codeBytes, u.t, "reached this run's "+strconv.FormatInt(u.x.lim.MaxBytes, 10)+" bytes: the connection was closed")
	}
	u.Close()
	return errBytes
}

// CloseWrite half-closes a TCP connection, or closes another.
func (u *upConn) CloseWrite() error {
	if cw, ok := u.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return u.Close()
}

// Close closes the connection once, giving its slot back.
func (u *upConn) Close() error {
	err := net.ErrClosed
	u.once.Do(func() {
		err = u.Conn.Close()
		u.x.mu.Lock()
		delete(u.x.live, u)
		u.x.active--
		u.x.mu.Unlock()
	})
	return err
}

// clientConn is the script's side of a tunnel: its reads share the
// tunnel's idle clock.
type clientConn struct {
	net.Conn
	act  *activity
	idle time.Duration
}

func (c *clientConn) Read(p []byte) (int, error) { return idleRead(c.Conn, p, c.act, c.idle) }

// tunnel copies between the script's connection and the upstream one
// until both directions end, an error ends one, the tunnel is idle for the
// idle timeout, or the proxy closes.
func (x *Proxy) tunnel(conn net.Conn, buffered *bufio.Reader, up *upConn) {
	cc := &clientConn{Conn: conn, act: up.act, idle: x.lim.IdleTimeout}
	x.mu.Lock()
	closed := x.closed
	if !closed {
		x.live[conn] = struct{}{}
	}
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		delete(x.live, conn)
		x.mu.Unlock()
		conn.Close()
		up.Close()
	}()
	if closed {
		return
	}
	// What the client sent right behind its CONNECT, before the answer
	// (usually nothing).
	early, _ := buffered.Peek(buffered.Buffered())
	if _, err := up.Write(early); err != nil {
		return
	}
	done := make(chan error, 2)
	pipe := func(dst interface {
		io.Writer
		CloseWrite() error
	}, src io.Reader) {
		buf := buffers{}.Get()
		_, err := io.CopyBuffer(dst, src, buf)
		buffers{}.Put(buf)
		if err == nil {
			err = dst.CloseWrite()
		}
		done <- err
	}
	go pipe(up, cc)
	go pipe(writeCloser{conn}, up)
	for range 2 {
		if err := <-done; err != nil {
			conn.Close()
			up.Close()
		}
	}
}

// writeCloser half-closes the script's connection when it can.
type writeCloser struct{ net.Conn }

func (w writeCloser) CloseWrite() error {
	if cw, ok := w.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return w.Close()
}

// limitListener serves at most cap(sem) connections at once; the others
// wait in the kernel's listen queue.
type limitListener struct {
	net.Listener
	sem  chan struct{}
	done chan struct{}
	once sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed, and keeps CloseWrite.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}
