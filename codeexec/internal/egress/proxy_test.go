package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startProxy serves a proxy for entries on a loopback listener of this
// process and returns it with its address; the test closes it.
func startProxy(t testing.TB, entries []string, opts ...Option) (*Proxy, string) {
	t.Helper()
	p, err := Parse(entries...)
	if err != nil {
		t.Fatal(err)
	}
	x := New(p, opts...)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- x.Serve(l) }()
	t.Cleanup(func() {
		x.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve = %v, want ErrClosed", err)
		}
	})
	return x, l.Addr().String()
}

// resolver answers each name from a list of answers, one per lookup (the
// last repeats), and counts the lookups.
type resolver struct {
	mu      sync.Mutex
	answers map[string][]string // name -> answers, each a comma-separated address list
	calls   map[string]int
}

func newResolver(answers map[string][]string) *resolver {
	return &resolver{answers: answers, calls: map[string]int{}}
}

func (r *resolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok || network != "ip" {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	r.calls[host]++
	if len(seq) == 0 {
		return nil, nil
	}
	i := min(r.calls[host]-1, len(seq)-1)
	var out []netip.Addr
	for _, s := range strings.Split(seq[i], ",") {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func (r *resolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// upstream is an HTTP server on a loopback address that counts the
// connections it accepts and answers "hello from ADDR".
type upstream struct {
	*httptest.Server
	conns atomic.Int64
	port  uint16
}

// startUpstream serves on addr ("127.0.0.1:0" for any port), with TLS when
// tlsOn.
func startUpstream(t testing.TB, addr string, tlsOn bool) *upstream {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Query().Has("close") {
			w.Header().Set("Connection", "close")
		}
		if n, err := strconv.Atoi(r.URL.Query().Get("bytes")); err == nil {
			w.Header().Set("Content-Length", strconv.Itoa(n))
			buf := make([]byte, 64<<10)
			for n > 0 {
				k, err := w.Write(buf[:min(n, len(buf))])
				if err != nil {
					return
				}
				n -= k
			}
			return
		}
		fmt.Fprintf(w, "hello from %s", r.Context().Value(http.LocalAddrContextKey))
	}))
	u.Server.Listener.Close()
	u.Server.Listener = l
	u.Server.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.conns.Add(1)
		}
	}
	if tlsOn {
		u.StartTLS()
	} else {
		u.Start()
	}
	t.Cleanup(u.Close)
	u.port = uint16(l.Addr().(*net.TCPAddr).Port)
	return u
}

// client returns an HTTP client that goes through the proxy at addr.
func client(addr string, up *upstream) *http.Client {
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableKeepAlives: true}
	if up != nil && up.TLS != nil {
		tr.TLSClientConfig = up.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		tr.TLSClientConfig.InsecureSkipVerify = true // names from the test resolver are not in the certificate
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// connect sends CONNECT target to the proxy at addr and returns the
// response and the connection (a tunnel when the status is 200).
func connect(t testing.TB, addr, target string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return resp, c, br
}

// get sends GET over a tunnel and returns the body.
func getThrough(t testing.TB, c net.Conn, br *bufio.Reader, host string) string {
	t.Helper()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET through the tunnel: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func body(r *http.Response) string {
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

func TestForward(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", false)
	x, addr := startProxy(t, []string{fmt.Sprintf("127.0.0.1:%d", up.port)})
	resp, err := client(addr, nil).Get(up.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	if got := body(resp); resp.StatusCode != 200 || got != "hello from "+up.Listener.Addr().String() {
		t.Fatalf("GET %s = %d %q", up.URL, resp.StatusCode, got)
	}
	r := x.Report()
	if r.Connections != 1 || r.BytesSent == 0 || r.BytesReceived == 0 || r.Refusals != 0 || r.Warning() != "" {
		t.Errorf("report %+v", r)
	}
}

func TestConnect(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", true)
	x, addr := startProxy(t, []string{fmt.Sprintf("127.0.0.1:%d", up.port)})
	resp, err := client(addr, up).Get(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := body(resp); resp.StatusCode != 200 || !strings.HasPrefix(got, "hello from") {
		t.Fatalf("GET %s = %d %q", up.URL, resp.StatusCode, got)
	}
	if r := x.Report(); r.Connections != 1 || r.BytesSent == 0 || r.BytesReceived == 0 {
		t.Errorf("report %+v", r)
	}
}

// TestConnectBuffered: bytes the client sends right behind its CONNECT,
// before the answer, reach the upstream host.
func TestConnectBuffered(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", false)
	target := up.Listener.Addr().String()
	_, addr := startProxy(t, []string{target})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT = %v, %v", resp, err)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := body(resp); !strings.HasPrefix(got, "hello from") {
		t.Fatalf("GET through the tunnel = %q", got)
	}
}

// TestRefused: what the policy refuses answers 403 with the reason, is
// never dialed, and is recorded.
func TestRefused(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", false)
	P := strconv.Itoa(int(up.port))
	other := startUpstream(t, "127.0.0.1:0", false)
	Q := strconv.Itoa(int(other.port))
	res := newResolver(map[string][]string{
		"lo.test":       {"127.0.0.1"},
		"lo6.test":      {"::1"},
		"mapped.test":   {"::ffff:127.0.0.1"},
		"nat64.test":    {"64:ff9b::7f00:1"},
		"meta.test":     {"169.254.169.254"},
		"private.test":  {"10.0.0.1,192.168.0.1,fd00::1"},
		"zero.named":    {"0.0.0.0"},
		"multi.named":   {"224.0.0.1"},
		"cgnat.test":    {"100.64.0.1"},
		"empty.test":    {""},
		"unknown.named": nil,
	})
	res.answers["empty.test"] = nil
	entries := []string{"127.0.0.1:" + P, "*.test:" + P, "*.test:80", "zero.named:" + P, "multi.named:" + P}
	tests := []struct {
		method, target string
		code, reason   string // X-Proxy-Error and a part of the reason
	}{
		{"CONNECT", "127.0.0.1:" + Q, codeAllowlist, "only port " + P},
		{"GET", "127.0.0.1:" + Q, codeAllowlist, "only port " + P},
		{"CONNECT", "api.example.com:443", codeAllowlist, "not on the egress allowlist"},
		{"GET", "api.example.com", codeAllowlist, "not on the egress allowlist"},
		{"CONNECT", "lo.test:80", codeAddress, "resolves to 127.0.0.1 (a loopback address): list 127.0.0.1:80 or the exact name to allow it"},
		{"GET", "lo.test", codeAddress, "resolves to 127.0.0.1 (a loopback address): list 127.0.0.1:80 or the exact name to allow it"},
		{"CONNECT", "lo6.test:" + P, codeAddress, "loopback"},
		{"CONNECT", "mapped.test:80", codeAddress, "loopback"},
		{"CONNECT", "nat64.test:80", codeAddress, "loopback"},
		{"CONNECT", "meta.test:80", codeAddress, "resolves to 169.254.169.254 (a link-local address"},
		{"CONNECT", "169.254.169.254:80", codeAllowlist, "not on the egress allowlist"},
		{"CONNECT", "[fe80::1]:80", codeAllowlist, "not on the egress allowlist"},
		{"CONNECT", "[::1]:" + P, codeAllowlist, "not on the egress allowlist"},
		{"CONNECT", "private.test:" + P, codeAddress, "resolves to 10.0.0.1 (a private address)"},
		{"CONNECT", "cgnat.test:" + P, codeAddress, "carrier-grade NAT"},
		{"CONNECT", "zero.named:" + P, codeAddress, "resolves to 0.0.0.0 (the unspecified address)"}, // even named explicitly
		{"CONNECT", "multi.named:" + P, codeAddress, "multicast"},
		{"CONNECT", "empty.test:" + P, codeAddress, "resolves to no address"},
	}
	x, addr := startProxy(t, entries, WithResolver(res))
	for _, tt := range tests {
		var resp *http.Response
		if tt.method == "CONNECT" {
			resp, _, _ = connect(t, addr, tt.target)
			if !strings.Contains(resp.Status, "403 Forbidden (egress: "+tt.target) {
				t.Errorf("CONNECT %s: status line %q does not say why", tt.target, resp.Status)
			}
		} else {
			var err error
			resp, err = client(addr, nil).Get("http://" + tt.target + "/")
			if err != nil {
				t.Fatal(err)
			}
		}
		b := body(resp)
		if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != tt.code || !strings.Contains(b, tt.reason) || !strings.Contains(b, tt.target) {
			t.Errorf("%s %s = %d %q %q, want 403 %s %q", tt.method, tt.target, resp.StatusCode, resp.Header.Get("X-Proxy-Error"), b, tt.code, tt.reason)
		}
	}
	if n := up.conns.Load() + other.conns.Load(); n != 0 {
		t.Errorf("the upstream servers saw %d connections", n)
	}
	r := x.Report()
	if r.Connections != 0 || r.Refusals != len(tests) || r.BytesSent+r.BytesReceived != 0 {
		t.Errorf("report %+v, want %d refusals and nothing else", r, len(tests))
	}
	w := r.Warning()
	for _, tt := range tests {
		if !strings.Contains(w, tt.target) {
			t.Errorf("the warning does not name %s: %s", tt.target, w)
		}
	}
	// A name that does not resolve is not a refusal: 502.
	resp, _, _ := connect(t, addr, "unknown.test:"+P)
	if b := body(resp); resp.StatusCode != 502 || resp.Header.Get("X-Proxy-Error") != "upstream-failed" || !strings.Contains(b, "no such host") {
		t.Errorf("CONNECT to an unknown name = %d %q", resp.StatusCode, b)
	}
}

// TestExplicit: internal addresses are reached when the literal address or
// an exact name for it is listed; a wildcard alone never reaches them.
func TestExplicit(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", false)
	P := strconv.Itoa(int(up.port))
	res := newResolver(map[string][]string{"dev.test": {"127.0.0.1"}, "dev.other": {"127.0.0.1"}})
	tests := []struct {
		entries []string
		target  string
		ok      bool
	}{
		{[]string{"dev.test:" + P}, "dev.test:" + P, true},
		{[]string{"*.test:" + P}, "dev.test:" + P, false},
		{[]string{"*.test:" + P, "127.0.0.1:" + P}, "dev.test:" + P, true},
		{[]string{"*.test:" + P, "127.0.0.1:1"}, "dev.test:" + P, false},
		{[]string{"127.0.0.1:" + P}, "127.0.0.1:" + P, true},
		{[]string{"127.0.0.1:" + P}, "dev.other:" + P, false},
	}
	for _, tt := range tests {
		_, addr := startProxy(t, tt.entries, WithResolver(res))
		resp, c, br := connect(t, addr, tt.target)
		switch {
		case tt.ok && resp.StatusCode != 200:
			t.Errorf("%q: CONNECT %s = %s, want 200", tt.entries, tt.target, resp.Status)
		case tt.ok:
			if got := getThrough(t, c, br, "x"); !strings.HasPrefix(got, "hello from 127.0.0.1:"+P) {
				t.Errorf("%q: through the tunnel: %q", tt.entries, got)
			}
		case resp.StatusCode != 403:
			t.Errorf("%q: CONNECT %s = %s, want 403", tt.entries, tt.target, resp.Status)
		}
	}
}

// TestRebinding: a name that resolves to an allowed address once and to
// the loopback next reaches the allowed address, and never the loopback:
// each connection looks the name up once and dials what it checked.
func TestRebinding(t *testing.T) {
	allowed := startUpstream(t, "127.0.0.2:0", false)
	P := strconv.Itoa(int(allowed.port))
	internal, err := net.Listen("tcp", "127.0.0.1:"+P)
	if err != nil {
		t.Skipf("127.0.0.1:%s is taken: %v", P, err)
	}
	var reached atomic.Int64
	go func() {
		for {
			c, err := internal.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	defer internal.Close()
	for _, method := range []string{"CONNECT", "GET"} {
		res := newResolver(map[string][]string{"a.rebind.test": {"127.0.0.2", "127.0.0.1"}})
		_, addr := startProxy(t, []string{"*.rebind.test:" + P, "127.0.0.2:" + P}, WithResolver(res))
		target := "a.rebind.test:" + P
		for i, want := range []int{200, 403, 403} {
			var got string
			var status int
			if method == "CONNECT" {
				resp, c, br := connect(t, addr, target)
				if status = resp.StatusCode; status == 200 {
					got = getThrough(t, c, br, target)
				}
			} else {
				resp, err := client(addr, nil).Get("http://" + target + "/?close")
				if err != nil {
					t.Fatal(err)
				}
				status, got = resp.StatusCode, body(resp)
			}
			if status != want || want == 200 && !strings.HasPrefix(got, "hello from 127.0.0.2:") {
				t.Errorf("%s #%d = %d %q, want %d", method, i, status, got, want)
			}
		}
		if n := res.lookups("a.rebind.test"); n != 3 {
			t.Errorf("%s: %d lookups for 3 connections", method, n)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
}

func TestBadRequests(t *testing.T) {
	_, addr := startProxy(t, []string{"127.0.0.1:1"})
	tests := []struct{ request, want string }{
		{"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", "absolute-form"},
		{"GET https://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "CONNECT for https"},
		{"CONNECT example.com HTTP/1.1\r\nHost: example.com\r\n\r\n", "has no port"},
		{"CONNECT 2130706433:80 HTTP/1.1\r\nHost: x\r\n\r\n", "dotted IPv4"},
		{"GET http://exa_mple..com/ HTTP/1.1\r\nHost: x\r\n\r\n", "bad host"},
	}
	for _, tt := range tests {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, tt.request)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", tt.request, err)
		}
		if b := body(resp); resp.StatusCode != 400 || resp.Header.Get("X-Proxy-Error") != "bad-request" || !strings.Contains(b, tt.want) {
			t.Errorf("%q = %d %q, want 400 with %q", tt.request, resp.StatusCode, b, tt.want)
		}
		c.Close()
	}
}

func TestHeaderLimit(t *testing.T) {
	const limit = 1 << 10
	up := startUpstream(t, "127.0.0.1:0", false)
	_, addr := startProxy(t, []string{up.Listener.Addr().String()}, WithLimits(Limits{MaxHeaderBytes: limit}))
	for _, tt := range []struct {
		size int
		want int
	}{{limit / 2, 200}, {limit + 4096 + 1, 431}} {
		req, _ := http.NewRequest("GET", up.URL, nil)
		req.Header.Set("X-Pad", strings.Repeat("a", tt.size))
		resp, err := client(addr, nil).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body(resp)
		if resp.StatusCode != tt.want {
			t.Errorf("a %d-byte header: %d, want %d", tt.size, resp.StatusCode, tt.want)
		}
	}
}

// TestResponseHeaderLimit: an upstream response header over the limit
// fails the request (502), it is not passed on.
func TestResponseHeaderLimit(t *testing.T) {
	const limit = 1 << 10
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				http.ReadRequest(bufio.NewReader(c))
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Pad: %s\r\nContent-Length: 0\r\n\r\n", strings.Repeat("a", 2*limit))
			}()
		}
	}()
	_, addr := startProxy(t, []string{l.Addr().String()}, WithLimits(Limits{MaxHeaderBytes: limit}))
	resp, err := client(addr, nil).Get("http://" + l.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	if b := body(resp); resp.StatusCode != 502 || !strings.Contains(b, "header") {
		t.Errorf("an oversized response header: %d %q, want 502", resp.StatusCode, b)
	}
}

func TestConnectionLimit(t *testing.T) {
	const limit = 3
	up := startUpstream(t, "127.0.0.1:0", false)
	target := up.Listener.Addr().String()
	x, addr := startProxy(t, []string{target}, WithLimits(Limits{MaxConns: limit}))
	for i := range limit + 2 {
		resp, c, _ := connect(t, addr, target)
		want := 200
		if i >= limit {
			want = 403
		}
		if resp.StatusCode != want || want == 403 && resp.Header.Get("X-Proxy-Error") != codeConns {
			t.Fatalf("connection %d: %s %q, want %d", i, resp.Status, resp.Header.Get("X-Proxy-Error"), want)
		}
		c.Close()
	}
	r := x.Report()
	if r.Connections != limit || len(r.Refused) != 1 || r.Refused[0].Count != 2 || r.Refused[0].Code != codeConns {
		t.Errorf("report %+v", r)
	}
}

func TestTunnelLimit(t *testing.T) {
	const limit = 2
	up := startUpstream(t, "127.0.0.1:0", false)
	target := up.Listener.Addr().String()
	x, addr := startProxy(t, []string{target}, WithLimits(Limits{MaxTunnels: limit}))
	var open []net.Conn
	for range limit {
		resp, c, _ := connect(t, addr, target)
		if resp.StatusCode != 200 {
			t.Fatalf("tunnel: %s", resp.Status)
		}
		open = append(open, c)
	}
	resp, _, _ := connect(t, addr, target)
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != codeTunnels {
		t.Fatalf("tunnel %d: %s, want 403 %s", limit+1, resp.Status, codeTunnels)
	}
	open[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, c, _ := connect(t, addr, target)
		if resp.StatusCode == 200 {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed tunnel's slot never came back: %s", resp.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Idle kept-alive upstream connections of forwarded requests give
	// their slots to new tunnels.
	open[1].Close()
	time.Sleep(50 * time.Millisecond)
	cl := client(addr, nil)
	cl.Transport.(*http.Transport).DisableKeepAlives = false
	for range limit {
		resp, err := cl.Get(up.URL)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		body(resp)
	}
	resp, c, _ := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Errorf("a tunnel after forwarded requests: %s", resp.Status)
	}
	c.Close()
	if r := x.Report(); r.Refusals < 1 || r.Refused[0].Code != codeTunnels {
		t.Errorf("report %+v", r)
	}
}

// TestByteLimit: a run moves exactly its byte limit, both directions
// together; the connection that reaches it is closed, and the next one is
// refused.
func TestByteLimit(t *testing.T) {
	const limit = 256 << 10
	up := startUpstream(t, "127.0.0.1:0", false)
	target := up.Listener.Addr().String()
	x, addr := startProxy(t, []string{target}, WithLimits(Limits{MaxBytes: limit}))
	resp, c, br := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	fmt.Fprintf(c, "GET /?bytes=%d HTTP/1.1\r\nHost: x\r\n\r\n", 2*limit)
	n, _ := io.Copy(io.Discard, br)
	r := x.Report()
	if r.BytesSent+r.BytesReceived != limit || n > limit {
		t.Errorf("moved %d+%d bytes (client read %d), want %d in all", r.BytesSent, r.BytesReceived, n, limit)
	}
	resp, _, _ = connect(t, addr, target)
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != codeBytes {
		t.Errorf("after the limit: %s %q, want 403 %s", resp.Status, resp.Header.Get("X-Proxy-Error"), codeBytes)
	}
	r = x.Report()
	if len(r.Refused) != 1 || r.Refused[0].Code != codeBytes || r.Refused[0].Count != 2 {
		t.Errorf("report %+v", r)
	}
	// Uploads count too: a forwarded request's body past the limit fails.
	x2, addr2 := startProxy(t, []string{target}, WithLimits(Limits{MaxBytes: limit}))
	resp2, err := client(addr2, nil).Post(up.URL, "application/octet-stream", strings.NewReader(strings.Repeat("x", 2*limit)))
	if err == nil {
		body(resp2)
	}
	if r := x2.Report(); r.BytesSent > limit || r.BytesSent < limit/2 || len(r.Refused) != 1 || r.Refused[0].Code != codeBytes {
		t.Errorf("upload report %+v", r)
	}
}

// TestIdle: a tunnel with no byte either way for the idle timeout is
// closed; one that keeps moving in one direction only stays open.
func TestIdle(t *testing.T) {
	const idle = 300 * time.Millisecond
	// An upstream that never writes and counts what it reads.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var got atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				n, _ := io.Copy(io.Discard, c)
				got.Add(n)
				c.Close()
			}()
		}
	}()
	target := l.Addr().String()
	_, addr := startProxy(t, []string{target}, WithLimits(Limits{IdleTimeout: idle}))

	resp, c, br := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	start := time.Now()
	if _, err := br.ReadByte(); err == nil || time.Since(start) < idle || time.Since(start) > 20*idle {
		t.Errorf("an idle tunnel ended after %v (%v), want about %v", time.Since(start), err, idle)
	}
	c.Close()

	resp, c, br = connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	ended := make(chan time.Time, 1)
	go func() {
		br.ReadByte()
		ended <- time.Now()
	}()
	start = time.Now()
	for time.Since(start) < 4*idle {
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatalf("the tunnel closed while the client was sending: %v", err)
		}
		time.Sleep(idle / 5)
	}
	select {
	case <-ended:
		t.Fatal("a tunnel moving bytes one way was closed as idle")
	default:
	}
	if e := <-ended; e.Sub(start) < 4*idle {
		t.Errorf("ended after %v", e.Sub(start))
	}
}

// TestClientLimit: the script's connections beyond MaxClients wait.
func TestClientLimit(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", false)
	_, addr := startProxy(t, []string{up.Listener.Addr().String()}, WithLimits(Limits{MaxClients: 1}))
	hold, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(hold, "GET "+up.URL+" HTTP/1.1\r\nHost: x\r\n\r\n") // served, kept alive
	if resp, err := http.ReadResponse(bufio.NewReader(hold), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first client: %v %v", resp, err)
	}
	cl := client(addr, nil)
	cl.Timeout = 300 * time.Millisecond
	if resp, err := cl.Get(up.URL); err == nil {
		t.Fatalf("a second client was served while the first held the only slot: %s", resp.Status)
	}
	hold.Close()
	cl.Timeout = 10 * time.Second
	resp, err := cl.Get(up.URL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the first client left: %v %v", resp, err)
	}
	body(resp)
}

func TestReport(t *testing.T) {
	const max = 2
	x, addr := startProxy(t, []string{"127.0.0.1:1"}, WithLimits(Limits{MaxRefused: max}))
	for _, target := range []string{"a.example:1", "b.example:1", "a.example:1", "c.example:1", "c.example:1", "a.example:1"} {
		resp, _, _ := connect(t, addr, target)
		if resp.StatusCode != 403 {
			t.Fatalf("CONNECT %s: %s", target, resp.Status)
		}
	}
	r := x.Report()
	if r.Refusals != 6 || len(r.Refused) != max || r.RefusedOmitted != 1 ||
		r.Refused[0].Target != "a.example:1" || r.Refused[0].Count != 3 || r.Refused[1].Target != "b.example:1" || r.Refused[1].Count != 1 {
		t.Fatalf("report %+v", r)
	}
	if w := (Report{Refusals: 1, Refused: []Refusal{{Target: "a.example:1", Reason: "r", Count: 1}}}).Warning(); strings.Contains(w, "more") || strings.Contains(w, " x1") {
		t.Errorf("a warning with nothing omitted: %q", w)
	}
	want := "the sandbox's network refused: a.example:1 (is not on the egress allowlist) x3; b.example:1 (is not on the egress allowlist); and 1 more. "
	if w := r.Warning(); !strings.HasPrefix(w, want) || !strings.Contains(w, "HOST:PORT") {
		t.Errorf("Warning() = %q, want it to start %q", w, want)
	}
	// The report is a copy.
	r.Refused[0].Count = 100
	if x.Report().Refused[0].Count != 3 {
		t.Error("Report shares its slice with the proxy")
	}
}

// TestClose: Close ends open tunnels and forwarded requests, Serve
// returns ErrClosed, and nothing is recorded after.
func TestClose(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", false)
	target := up.Listener.Addr().String()
	p, _ := Parse(target)
	x := New(p)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- x.Serve(l) }()
	resp, c, br := connect(t, l.Addr().String(), target)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("Serve = %v, want ErrClosed", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a tunnel survived Close: %v", err)
	}
	if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
		t.Error("the listener survived Close")
	}
	if err := x.Close(); err != nil {
		t.Errorf("a second Close = %v", err)
	}
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	if err := x.Serve(l2); !errors.Is(err, ErrClosed) {
		t.Errorf("Serve after Close = %v", err)
	}
	if _, err := x.dial(context.Background(), target0(t, target)); !errors.Is(err, ErrClosed) {
		t.Errorf("dial after Close = %v", err)
	}
	x.refuse(codeAllowlist, target0(t, "x.example:1"), "late")
	if r := x.Report(); r.Refusals != 0 || r.Connections != 1 {
		t.Errorf("report after Close: %+v", r)
	}
}

func target0(t *testing.T, s string) target {
	tg, err := parseTarget(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestCheckDialed(t *testing.T) {
	ap := netip.MustParseAddrPort("192.0.2.1:443")
	ctx := context.WithValue(context.Background(), dialedKey{}, ap)
	for _, tt := range []struct {
		ctx     context.Context
		address string
		ok      bool
	}{
		{ctx, "192.0.2.1:443", true},
		{ctx, "[::ffff:192.0.2.1]:443", true},
		{ctx, "192.0.2.2:443", false},
		{ctx, "192.0.2.1:80", false},
		{ctx, "example.com:443", false},
		{context.Background(), "192.0.2.1:443", false},
	} {
		if err := checkDialed(tt.ctx, "tcp", tt.address, nil); (err == nil) != tt.ok {
			t.Errorf("checkDialed(%s) = %v, want ok %t", tt.address, err, tt.ok)
		}
	}
}

// TestNilPolicy: a proxy of no policy refuses everything.
func TestNilPolicy(t *testing.T) {
	x := New(nil)
	defer x.Close()
	if _, err := x.dial(context.Background(), target0(t, "127.0.0.1:80")); err == nil || !strings.Contains(err.Error(), "not on the egress allowlist") {
		t.Errorf("dial = %v", err)
	}
}

// TestOwnAddrs: the agent's own addresses count as internal, and an
// interface list that cannot be read makes every address the agent's.
func TestOwnAddrs(t *testing.T) {
	o := &ownAddrs{list: func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("192.0.2.7")}, &net.IPAddr{IP: net.ParseIP("192.0.2.8")}}, nil
	}}
	if !o.has(netip.MustParseAddr("192.0.2.7")) || !o.has(netip.MustParseAddr("::ffff:192.0.2.7")) || o.has(netip.MustParseAddr("192.0.2.9")) {
		t.Error("own addresses misread")
	}
	o.list = func() ([]net.Addr, error) { return nil, errors.New("no netlink") }
	if o.has(netip.MustParseAddr("192.0.2.9")) {
		t.Error("a cached reading was refreshed too early")
	}
	o.at = time.Now().Add(-2 * ownTTL)
	if !o.has(netip.MustParseAddr("192.0.2.9")) {
		t.Error("an unreadable interface list must make every address the agent's own")
	}
	// The real interfaces: the loopback address is the agent's own.
	if !own.has(netip.MustParseAddr("127.0.0.1")) {
		t.Error("127.0.0.1 is not among this process's addresses")
	}
}

func TestLimitsDefaults(t *testing.T) {
	got := Limits{}.withDefaults()
	want := Limits{MaxConns: DefaultMaxConns, MaxBytes: DefaultMaxBytes, MaxTunnels: DefaultMaxTunnels, MaxClients: DefaultMaxClients,
		IdleTimeout: DefaultIdleTimeout, DialTimeout: DefaultDialTimeout, MaxHeaderBytes: DefaultMaxHeaderBytes, MaxRefused: DefaultMaxRefused}
	if got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	got = Limits{MaxConns: -1, MaxBytes: -1, MaxTunnels: -1, MaxClients: -1, IdleTimeout: -1, DialTimeout: -1, MaxHeaderBytes: -1, MaxRefused: -1}.withDefaults()
	want = Limits{MaxConns: noLimit, MaxBytes: math.MaxInt64, MaxTunnels: noLimit, MaxClients: noLimit, MaxRefused: noLimit}
	if got != want {
		t.Errorf("no limits %+v, want %+v", got, want)
	}
	set := Limits{MaxConns: 1, MaxBytes: 2, MaxTunnels: 3, MaxClients: 4, IdleTimeout: 5, DialTimeout: 6, MaxHeaderBytes: 7, MaxRefused: 8}
	if got := set.withDefaults(); got != set {
		t.Errorf("set limits %+v, want them kept", got)
	}
}

// TestNoLimits: a proxy without limits or timeouts works.
func TestNoLimits(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", false)
	target := up.Listener.Addr().String()
	x, addr := startProxy(t, []string{target}, WithLimits(Limits{MaxConns: -1, MaxBytes: -1, MaxTunnels: -1, MaxClients: -1,
		IdleTimeout: -1, DialTimeout: -1, MaxHeaderBytes: -1, MaxRefused: -1}))
	for range 3 {
		resp, c, br := connect(t, addr, target)
		if resp.StatusCode != 200 || !strings.HasPrefix(getThrough(t, c, br, "x"), "hello from") {
			t.Fatalf("CONNECT: %s", resp.Status)
		}
		c.Close()
	}
	for range 3 {
		resp, err := client(addr, nil).Get(up.URL)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		body(resp)
	}
	if r := x.Report(); r.Refusals != 0 || r.Connections < 4 {
		t.Errorf("report %+v", r)
	}
}

// TestDialTimeout: a lookup (or a connection) that does not answer ends
// after the dial timeout with 502.
func TestDialTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	_, addr := startProxy(t, []string{"slow.test:443"}, WithResolver(blockingResolver{}), WithLimits(Limits{DialTimeout: timeout}))
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "CONNECT slow.test:443 HTTP/1.1\r\nHost: slow.test:443\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if b := body(resp); resp.StatusCode != 502 || !strings.Contains(b, "deadline exceeded") || time.Since(start) < timeout {
		t.Errorf("after %v: %d %q", time.Since(start), resp.StatusCode, b)
	}
}

// blockingResolver answers only when its context ends.
type blockingResolver struct{}

func (blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestHalfClose: a client that closes its sending side still gets the
// whole answer through a tunnel.
func TestHalfClose(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c) // until the client's end of file
		time.Sleep(50 * time.Millisecond)
		fmt.Fprintf(c, "got %d", n)
	}()
	target := l.Addr().String()
	_, addr := startProxy(t, []string{target})
	resp, c, br := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	io.WriteString(c, "0123456789")
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := io.ReadAll(br); string(got) != "got 10" {
		t.Errorf("after a half-close: %q, %v", got, err)
	}
}

// TestIdleOneWay: a tunnel the upstream host keeps sending on, with a
// silent client, is not idle; a tunnel whose upstream host has finished
// and whose client stays silent ends after the idle timeout.
func TestIdleOneWay(t *testing.T) {
	const idle = 300 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for i := 0; ; i++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if i == 0 { // trickle for 4 idle timeouts
				go func() {
					defer c.Close()
					for range 20 {
						c.Write([]byte("x"))
						time.Sleep(idle / 5)
					}
				}()
			} else { // done at once
				c.Close()
			}
		}
	}()
	target := l.Addr().String()
	_, addr := startProxy(t, []string{target}, WithLimits(Limits{IdleTimeout: idle, MaxTunnels: 1}))
	resp, c, br := connect(t, addr, target)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if got, err := io.ReadAll(br); len(got) != 20 {
		t.Errorf("the trickle was cut after %d bytes: %v", len(got), err)
	}
	c.Close()

	resp, c, br = connectWhenFree(t, addr, target) // upstream closes at once
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("want the upstream's end of file, got %v", err)
	}
	// The client holds its side open; the tunnel, and its slot, end
	// after the idle timeout.
	start := time.Now()
	for {
		resp, c2, _ := connect(t, addr, target)
		if resp.StatusCode == 200 {
			c2.Close()
			break
		}
		if time.Since(start) > 20*idle {
			t.Fatalf("a silent half-closed tunnel kept its slot: %s", resp.Status)
		}
		time.Sleep(idle / 5)
	}
	if time.Since(start) < idle/2 {
		t.Errorf("the slot came back after %v, before the idle timeout", time.Since(start))
	}
	c.Close()
}

// connectWhenFree retries a CONNECT refused for the tunnel limit while a
// closed tunnel gives its slot back.
func connectWhenFree(t *testing.T, addr, target string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	for start := time.Now(); ; {
		resp, c, br := connect(t, addr, target)
		if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != codeTunnels || time.Since(start) > 10*time.Second {
			return resp, c, br
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIdleUpload: a forwarded request whose body takes longer than the
// idle timeout to upload, while the upstream host says nothing, is not
// idle.
func TestIdleUpload(t *testing.T) {
	const idle = 300 * time.Millisecond
	up := startUpstream(t, "127.0.0.1:0", false)
	_, addr := startProxy(t, []string{up.Listener.Addr().String()}, WithLimits(Limits{IdleTimeout: idle}))
	pr, pw := io.Pipe()
	go func() {
		for range 20 {
			pw.Write([]byte("x"))
			time.Sleep(idle / 5)
		}
		pw.Close()
	}()
	resp, err := client(addr, nil).Post(up.URL, "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	if b := body(resp); resp.StatusCode != 200 || !strings.HasPrefix(b, "hello from") {
		t.Errorf("a slow upload: %d %q", resp.StatusCode, b)
	}
}
