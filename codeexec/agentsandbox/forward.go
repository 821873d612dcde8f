package agentsandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
)

// forward is a port-forward to one pod, brokered by the Kubernetes API
// server as for kubectl port-forward: one SPDY connection, and a pair of
// streams (errors, data) per dial. Nothing listens on the agent's host.
type forward struct {
	conn httpstream.Connection
	port int
	next atomic.Int64 // request IDs
}

// openForward opens a port-forward session to sb's pod, on the API server
// of the executor's Kubernetes clients, within the connect timeout.
func (e *Executor) openForward(sb *sandbox.Sandbox) (*forward, error) {
	h := e.cfg.helper
	pod := sb.PodName()
	if pod == "" {
		return nil, fmt.Errorf("sandbox %s has no pod name", sb.SandboxName())
	}
	transport, upgrader, err := spdy.RoundTripperFor(h.RestConfig)
	if err != nil {
		return nil, err
	}
	url := h.CoreClient.RESTClient().Post().Resource("pods").Namespace(e.cfg.namespace).Name(pod).SubResource("portforward").URL()
	// The timeout bounds the upgrade; the session it opens outlives it.
	client := &http.Client{Transport: transport, Timeout: e.cfg.connectTimeout}
	conn, _, err := spdy.NewDialerForStreaming(upgrader, client, http.MethodPost, url).Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", e.cfg.namespace, pod, err)
	}
	return &forward{conn: conn, port: e.cfg.grpcPort}, nil
}

// dial opens a connection to the pod's port (the address is ignored: the
// session names the pod).
func (f *forward) dial(_ context.Context, _ string) (net.Conn, error) {
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, strconv.Itoa(f.port))
	h.Set(corev1.PortForwardRequestIDHeader, strconv.FormatInt(f.next.Add(1), 10))
	errStream, err := f.conn.CreateStream(h)
	if err != nil {
		return nil, err
	}
	_ = errStream.Close() // the agent writes nothing on it
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := f.conn.CreateStream(h)
	if err != nil {
		f.conn.RemoveStreams(errStream)
		return nil, err
	}
	c := &streamConn{Stream: data, f: f, errStream: errStream}
	go c.watch()
	return c, nil
}

// close ends the session and every stream on it.
func (f *forward) close() { _ = f.conn.Close() }

// maxForwardError bounds what is kept of a pod's error stream.
const maxForwardError = 4 << 10

// streamConn is a net.Conn over one data stream of a port-forward.
type streamConn struct {
	httpstream.Stream
	f         *forward
	errStream httpstream.Stream
	once      sync.Once

	mu  sync.Mutex
	err error // what the pod's side reported on the error stream
}

// watch reads the error stream: the kubelet writes there when it cannot
// reach the port, and the data stream is then ended.
func (c *streamConn) watch() {
	msg, _ := io.ReadAll(io.LimitReader(c.errStream, maxForwardError))
	if len(msg) == 0 {
		return
	}
	c.mu.Lock()
	c.err = errors.New(string(msg))
	c.mu.Unlock()
	_ = c.Stream.Reset()
}

// Read reads from the data stream; once the pod's side has reported an
// error, that error.
func (c *streamConn) Read(b []byte) (int, error) {
	n, err := c.Stream.Read(b)
	if err != nil {
		c.mu.Lock()
		if c.err != nil {
			err = c.err
		}
		c.mu.Unlock()
	}
	return n, err
}

// Close ends the data stream and removes both streams from the session.
func (c *streamConn) Close() error {
	c.once.Do(func() {
		_ = c.Stream.Reset()
		c.f.conn.RemoveStreams(c.errStream, c.Stream)
	})
	return nil
}

// forwardAddr is the address a streamConn reports on both ends.
type forwardAddr struct{}

func (forwardAddr) Network() string { return "port-forward" }
func (forwardAddr) String() string  { return "port-forward" }

// LocalAddr implements net.Conn.
func (c *streamConn) LocalAddr() net.Addr { return forwardAddr{} }

// RemoteAddr implements net.Conn.
func (c *streamConn) RemoteAddr() net.Addr { return forwardAddr{} }

// SetDeadline implements net.Conn. A stream has no deadlines: the
// executor bounds its calls with contexts, and closing the connection ends
// a blocked Read or Write.
func (c *streamConn) SetDeadline(time.Time) error { return nil }

// SetReadDeadline implements net.Conn; see SetDeadline.
func (c *streamConn) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline implements net.Conn; see SetDeadline.
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }
