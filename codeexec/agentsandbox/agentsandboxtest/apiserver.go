//go:build linux

package agentsandboxtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// serveAPI is the fake API server: it serves
// POST /api/v1/namespaces/NS/pods/NAME/portforward, and brokers each pair of
// an error and a data stream to the pod's port, as the API server and the
// kubelet do for kubectl port-forward (SPDY). Anything else is 404.
func (c *Cluster) serveAPI(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 7 || parts[0] != "api" || parts[1] != "v1" ||
		parts[2] != "namespaces" || parts[4] != "pods" || parts[6] != "portforward" {
		http.NotFound(w, r)
		return
	}
	p := c.podNamed(parts[3], parts[5])
	if p == nil {
		http.Error(w, fmt.Sprintf("pods %q not found", parts[5]), http.StatusNotFound)
		return
	}
	if _, err := httpstream.Handshake(r, w, []string{portforward.PortForwardProtocolV1Name}); err != nil {
		return // Handshake answered
	}
	b := &broker{ip: p.ip, errs: map[string]httpstream.Stream{}}
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, b.stream)
	if conn == nil {
		return // UpgradeResponse answered
	}
	c.forwards.Add(1)
	<-conn.CloseChan()
	b.wg.Wait()
}

// broker forwards the streams of one port-forward session to a pod.
type broker struct {
	ip string
	wg sync.WaitGroup

	mu   sync.Mutex
	errs map[string]httpstream.Stream // error streams by request ID
}

// stream takes a new stream: the client opens a request's error stream,
// then its data stream.
func (b *broker) stream(s httpstream.Stream, replySent <-chan struct{}) error {
	h := s.Headers()
	id := h.Get(corev1.PortForwardRequestIDHeader)
	switch h.Get(corev1.StreamType) {
	case corev1.StreamTypeError:
		b.mu.Lock()
		b.errs[id] = s
		b.mu.Unlock()
	case corev1.StreamTypeData:
		b.mu.Lock()
		errStream := b.errs[id]
		delete(b.errs, id)
		b.mu.Unlock()
		if errStream == nil {
			return fmt.Errorf("data stream %s without an error stream", id)
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			<-replySent
			b.forward(s, errStream, h.Get(corev1.PortHeader))
		}()
	default:
		return fmt.Errorf("unknown stream type %q", h.Get(corev1.StreamType))
	}
	return nil
}

// forward copies between data and the pod's port until either side ends;
// a failure to reach the port is written on the error stream, as the
// kubelet does.
func (b *broker) forward(data, errStream httpstream.Stream, port string) {
	defer errStream.Close()
	defer data.Close()
	conn, err := net.Dial("tcp", net.JoinHostPort(b.ip, port))
	if err != nil {
		fmt.Fprintf(errStream, "error forwarding port %s to pod: %v", port, err)
		return
	}
	defer conn.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(conn, data)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(data, conn)
	_ = data.Close()
	<-done
}
