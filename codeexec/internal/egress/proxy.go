package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Resolver looks names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Option configures a Proxy.
type Option func(*Proxy)

// WithLimits sets the proxy's limits (see [Limits] for the defaults).
func WithLimits(l Limits) Option { return func(x *Proxy) { x.lim = l.withDefaults() } }

// WithResolver sets how names are looked up; the default is
// net.DefaultResolver.
func WithResolver(r Resolver) Option { return func(x *Proxy) { x.resolver = r } }

// Proxy is one run's egress proxy: a forward HTTP/1.1 proxy enforcing a
// [Policy] within [Limits]. CONNECT requests become tunnels (the TLS
// inside is not touched); absolute-form http:// requests are forwarded.
// Anything else is refused: a refusal by the policy or a limit answers 403
// with the reason in the body, the X-Proxy-Error header and, for a
// CONNECT, the status line (which clients show for a failed tunnel), and
// is recorded in the [Report].
//
// A Proxy serves one run: its limits and report are the run's, and Close
// ends every connection of it. It is safe for concurrent use.
type Proxy struct {
	policy   *Policy
	lim      Limits
	resolver Resolver
	dialer   net.Dialer
	srv      *http.Server
	tr       *http.Transport
	rp       *httputil.ReverseProxy
	ctx      context.Context
	cancel   context.CancelFunc
	bytes    budget

	mu      sync.Mutex
	closed  bool
	active  int                    // upstream connections open now
	live    map[io.Closer]struct{} // open upstream and tunnelled client conns
	wg      sync.WaitGroup         // requests in flight
	rep     Report
	refused map[string]int // target -> index in rep.Refused
}

// New returns a proxy enforcing p; serve it with Serve. A nil p refuses
// everything.
func New(p *Policy, opts ...Option) *Proxy {
	if p == nil {
		p, _ = Parse()
	}
	x := &Proxy{policy: p, lim: Limits{}.withDefaults(), resolver: net.DefaultResolver,
		live: map[io.Closer]struct{}{}, refused: map[string]int{}}
	for _, o := range opts {
		o(x)
	}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	x.bytes.max = x.lim.MaxBytes
	x.dialer.ControlContext = checkDialed
	discard := log.New(io.Discard, "", 0)
	var h1 http.Protocols
	h1.SetHTTP1(true)
	x.tr = &http.Transport{
		DialContext:            x.dialTransport,
		Protocols:              &h1,
		DisableCompression:     true,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        x.lim.IdleTimeout,
		ResponseHeaderTimeout:  x.lim.IdleTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: int64(x.lim.MaxHeaderBytes),
	}
	x.rp = &httputil.ReverseProxy{
		Rewrite:      func(*httputil.ProxyRequest) {}, // the URL is already the target
		Transport:    x.tr,
		ErrorLog:     discard,
		ErrorHandler: x.fail,
		BufferPool:   buffers{},
	}
	x.srv = &http.Server{
		Handler:           handler{x},
		Protocols:         &h1,
		ReadHeaderTimeout: x.lim.IdleTimeout,
		IdleTimeout:       x.lim.IdleTimeout,
		MaxHeaderBytes:    x.lim.MaxHeaderBytes,
		ErrorLog:          discard,
		BaseContext:       func(net.Listener) context.Context { return x.ctx },
	}
	return x
}

// Serve accepts the script's connections on l until Close; it closes l and
// returns ErrClosed after Close, or the error that stopped it.
func (x *Proxy) Serve(l net.Listener) error {
	if x.lim.MaxClients != noLimit {
		l = &limitListener{Listener: l, sem: make(chan struct{}, x.lim.MaxClients), done: make(chan struct{})}
	}
	err := x.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return ErrClosed
	}
	return err
}

// Close stops the proxy: it closes the listeners and every connection,
// tunnels included, and returns once no request is in flight, so that the
// Report is final.
func (x *Proxy) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	live := make([]io.Closer, 0, len(x.live))
	for c := range x.live {
		live = append(live, c)
	}
	x.mu.Unlock()
	x.cancel()
	err := x.srv.Close()
	for _, c := range live {
		c.Close()
	}
	x.tr.CloseIdleConnections()
	x.wg.Wait()
	return err
}

// handler serves the proxy's requests.
type handler struct{ x *Proxy }

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := h.x
	x.mu.Lock()
	closed := x.closed
	if !closed {
		x.wg.Add(1)
	}
	x.mu.Unlock()
	if closed {
		http.Error(w, "egress proxy closed", http.StatusServiceUnavailable)
		return
	}
	defer x.wg.Done()
	if r.Method == http.MethodConnect {
		x.connect(w, r)
		return
	}
	x.forward(w, r)
}

// connect opens a tunnel to the CONNECT request's authority.
func (x *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	t, err := parseTarget(r.Host, 0)
	if err != nil {
		badRequest(w, fmt.Sprintf("CONNECT needs host:port: %v", err))
		return
	}
	up, err := x.dial(r.Context(), t)
	if err != nil {
		x.fail(w, r, err)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	_ = conn.SetDeadline(time.Time{})
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		conn.Close()
		return
	}
	x.tunnel(conn, brw.Reader, up)
}

// forward sends an absolute-form http:// request on.
func (x *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		badRequest(w, "this is an HTTP proxy: send absolute-form http:// URLs, and CONNECT for https")
		return
	}
	t, err := parseTarget(r.URL.Host, 80)
	if err != nil {
		badRequest(w, fmt.Sprintf("bad host: %v", err))
		return
	}
	// Refuse an unlisted target without looking it up; the dial enforces
	// the whole policy again.
	if rf := x.listed(t); rf != nil {
		x.fail(w, r, rf)
		return
	}
	x.rp.ServeHTTP(w, r)
}

// badRequest answers 400 with why.
func badRequest(w http.ResponseWriter, why string) {
	w.Header().Set("X-Proxy-Error", "bad-request")
	w.Header().Set("Connection", "close")
	http.Error(w, "egress: "+why, http.StatusBadRequest)
}

// fail answers a request the proxy could not serve (and is the forwarding
// proxy's ErrorHandler): 403 for a refusal (see Proxy), 502 otherwise.
func (x *Proxy) fail(w http.ResponseWriter, r *http.Request, err error) {
	var rf *refusal
	if !errors.As(err, &rf) {
		w.Header().Set("X-Proxy-Error", "upstream-failed")
		http.Error(w, "egress: "+err.Error(), http.StatusBadGateway)
		return
	}
	body := "egress: refused: " + rf.Error() + "\n"
	if r.Method == http.MethodConnect {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			defer conn.Close()
			_, _ = fmt.Fprintf(conn, "HTTP/1.1 403 Forbidden (egress: %s)\r\nX-Proxy-Error: %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
				rf.Error(), rf.code, len(body), body)
			return
		}
	}
	w.Header().Set("X-Proxy-Error", rf.code)
	w.Header().Set("Connection", "close")
	http.Error(w, strings.TrimSuffix(body, "\n"), http.StatusForbidden)
}

// Refusal codes, the X-Proxy-Error header's values.
const (
	codeAllowlist = "blocked-by-allowlist"
	codeAddress   = "blocked-address"
	codeConns     = "connection-limit"
	codeBytes     = "byte-limit"
	codeTunnels   = "tunnel-limit"
)

// refusal is a request refused by the policy or a limit.
type refusal struct {
	code, target, reason string
}

func (r *refusal) Error() string { return r.target + " " + r.reason }

// refuse records a refusal of target and returns it.
func (x *Proxy) refuse(code string, t target, reason string) *refusal {
	rf := &refusal{code: code, target: t.String(), reason: reason}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return rf
	}
	x.rep.Refusals++
	if i, ok := x.refused[rf.target]; ok {
		if i >= 0 {
			x.rep.Refused[i].Count++
		}
		return rf
	}
	if len(x.rep.Refused) >= x.lim.MaxRefused {
		x.rep.RefusedOmitted++
		x.refused[rf.target] = -1
		return rf
	}
	x.refused[rf.target] = len(x.rep.Refused)
	x.rep.Refused = append(x.rep.Refused, Refusal{Target: rf.target, Code: code, Reason: reason, Count: 1})
	return rf
}

// listed refuses a target the policy does not list.
func (x *Proxy) listed(t target) *refusal {
	if x.policy.lookup(t) != unlisted {
		return nil
	}
	if ports := x.policy.otherPorts(t); ports != "" {
		return x.refuse(codeAllowlist, t, "is not on the egress allowlist: only port "+ports+" of that host is")
	}
	return x.refuse(codeAllowlist, t, "is not on the egress allowlist")
}

// dialTransport is the forwarding transport's dial: the same policy as a
// CONNECT.
func (x *Proxy) dialTransport(ctx context.Context, _, addr string) (net.Conn, error) {
	t, err := parseTarget(addr, 0)
	if err != nil {
		return nil, err
	}
	c, err := x.dial(ctx, t)
	if err != nil {
		return nil, err // not a nil *upConn in a non-nil net.Conn
	}
	return c, nil
}

// dial connects to t if the policy and the limits allow it: a name is
// looked up once, each address checked, and only a checked address is
// dialed.
func (x *Proxy) dial(ctx context.Context, t target) (*upConn, error) {
	m := x.policy.lookup(t)
	if m == unlisted {
		return nil, x.listed(t)
	}
	if x.lim.DialTimeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.lim.DialTimeout)
		defer cancel()
	}
	addrs := []netip.Addr{t.addr}
	if t.name != "" {
		var err error
		if addrs, err = x.resolver.LookupNetIP(ctx, "ip", t.name); err != nil {
			return nil, fmt.Errorf("looking up %s: %w", t.name, err)
		}
	}
	var ok []netip.Addr
	why := "no address"
	for _, a := range addrs {
		a = a.Unmap()
		w := x.addrRefusal(a, t.port, m)
		switch {
		case w == "":
			ok = append(ok, a)
		case len(ok) == 0 && why == "no address":
			why = fmt.Sprintf("%s (%s)", a, w)
			if neverDialed(a) == "" {
				why += fmt.Sprintf(": list %s or the exact name to allow it", netip.AddrPortFrom(a, t.port))
			}
		}
	}
	if len(ok) == 0 {
		return nil, x.refuse(codeAddress, t, "resolves to "+why)
	}
	var errs []error
	for _, a := range ok {
		if err := x.acquire(t); err != nil {
			return nil, err
		}
		ap := netip.AddrPortFrom(a, t.port)
		c, err := x.dialer.DialContext(context.WithValue(ctx, dialedKey{}, ap), "tcp", ap.String())
		if err != nil {
			x.release()
			errs = append(errs, err)
			continue
		}
		return x.track(c, t), nil
	}
	return nil, errors.Join(errs...)
}

// addrRefusal says why address a may not be dialed on port for a target
// matched by m, or returns "". An internal address (see class) or one of
// the agent's own is dialed only for an explicit entry: the literal
// address, or an exact name for it.
func (x *Proxy) addrRefusal(a netip.Addr, port uint16, m match) string {
	if why := neverDialed(a); why != "" {
		return why
	}
	if m == explicitly || x.policy.literal(a, port) {
		return ""
	}
	if c := class(a); c != "" {
		return c
	}
	if own.has(a) {
		return "an address of the agent's own"
	}
	return ""
}

// dialedKey carries the checked address to checkDialed.
type dialedKey struct{}

// checkDialed refuses a socket connecting anywhere but the address the
// policy checked: nothing dials a name behind the checks' back.
func checkDialed(ctx context.Context, _, address string, _ syscall.RawConn) error {
	want, _ := ctx.Value(dialedKey{}).(netip.AddrPort)
	got, err := netip.ParseAddrPort(address)
	if err != nil || !want.IsValid() || got.Addr().Unmap() != want.Addr() || got.Port() != want.Port() {
		return fmt.Errorf("egress: dialing %s, not the checked %s", address, want)
	}
	return nil
}

// acquire counts a new upstream connection to t against the limits.
func (x *Proxy) acquire(t target) error {
	for retried := false; ; retried = true {
		x.mu.Lock()
		switch {
		case x.closed:
			x.mu.Unlock()
			return ErrClosed
		case x.rep.Connections >= x.lim.MaxConns:
			x.mu.Unlock()
			return x.refuse(codeConns, t, "would exceed this run's "+strconv.Itoa(x.lim.MaxConns)+" connections")
		case x.bytes.left() == 0:
			x.mu.Unlock()
			return x.refuse(codeBytes, t, "would exceed this run's "+strconv.FormatInt(x.lim.MaxBytes, 10)+" bytes")
		case x.active < x.lim.MaxTunnels:
			x.active++
			x.rep.Connections++
			x.mu.Unlock()
			return nil
		}
		x.mu.Unlock()
		if retried {
			return x.refuse(codeTunnels, t, "would exceed this run's "+strconv.Itoa(x.lim.MaxTunnels)+" connections open at once")
		}
		// Idle kept-alive connections count too: let them go first.
		x.tr.CloseIdleConnections()
	}
}

// release gives back a connection acquire counted.
func (x *Proxy) release() {
	x.mu.Lock()
	x.active--
	x.mu.Unlock()
}

// Report returns what the proxy has done so far.
func (x *Proxy) Report() Report {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.rep
	r.Refused = append([]Refusal(nil), x.rep.Refused...)
	r.BytesSent, r.BytesReceived = x.bytes.sent.Load(), x.bytes.received.Load()
	return r
}
