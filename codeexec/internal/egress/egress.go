// Package egress is the sandbox's egress allowlist: a forward HTTP/1.1
// proxy that lets a sandboxed script reach the host:port pairs an operator
// lists, and nothing else.
//
// The script keeps a network namespace of its own with only a loopback
// interface. A hook started inside it before the script (the agent's own
// executable, see package hook) listens on 127.0.0.1:[InsidePort] there and
// hands the listening socket to the agent ([ReceiveListener]), which serves
// a [Proxy] on it; [Policy.Env] points the script's HTTP_PROXY, HTTPS_PROXY
// and NO_PROXY at it. HTTPS goes through as CONNECT tunnels (no TLS
// interception), plain HTTP as absolute-form requests.
//
// The proxy decides by what it connects to, not only by name: it resolves
// names itself, refuses loopback, link-local (cloud metadata), private and
// other internal addresses and the agent's own unless the literal address,
// or a name for it, is listed; and it dials the address it checked. A run's
// connections, bytes and concurrent tunnels are bounded, and every refusal
// is recorded for the run's [Report].
package egress

import (
	"errors"
	"math"
	"time"
)

// Sentinel errors.
var (
	// ErrInvalidEntry: an allowlist entry [Parse] cannot accept.
	ErrInvalidEntry = errors.New("egress: invalid allowlist entry")
	// ErrClosed: Serve returns it once the proxy is closed.
	ErrClosed = errors.New("egress: proxy closed")
	// ErrHandoff: the listener from the sandbox never came, or is not the
	// one the hook was asked to make.
	ErrHandoff = errors.New("egress: listener handoff failed")
)

// InsidePort is the port the hook listens on, on 127.0.0.1 in the
// sandbox's own network namespace, where no other process can hold it.
const InsidePort = 3128

// Defaults of [Limits]; a zero field takes its default, a negative one
// means no limit.
const (
	// DefaultMaxConns bounds the upstream connections a run opens.
	DefaultMaxConns = 1024
	// DefaultMaxBytes bounds the bytes a run exchanges with upstream
	// hosts, both directions together: 1 GiB.
	DefaultMaxBytes int64 = 1 << 30
	// DefaultMaxTunnels bounds the upstream connections open at once.
	DefaultMaxTunnels = 64
	// DefaultMaxClients bounds the script's connections to the proxy
	// served at once; more wait in the listen queue.
	DefaultMaxClients = 128
	// DefaultIdleTimeout closes a connection with no byte either way for
	// this long, and a client that sends no request for this long.
	DefaultIdleTimeout = time.Minute
	// DefaultDialTimeout bounds one lookup and connection attempt.
	DefaultDialTimeout = 15 * time.Second
	// DefaultMaxHeaderBytes bounds a request's header (the server allows
	// 4 KiB more) and a response's.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxRefused is how many distinct refused targets a Report
	// lists.
	DefaultMaxRefused = 32
)

// Limits bound what one proxy (one run) may do. Zero fields take the
// defaults above; negative ones mean no limit (for a timeout: none; for
// MaxHeaderBytes: net/http's own, 1 MiB for a request, 10 MiB for a
// response).
type Limits struct {
	// MaxConns: upstream connections opened in all (DefaultMaxConns).
	MaxConns int
	// MaxBytes: bytes sent to and received from upstream hosts, together
	// (DefaultMaxBytes). A connection that reaches it is closed.
	MaxBytes int64
	// MaxTunnels: upstream connections open at once (DefaultMaxTunnels).
	MaxTunnels int
	// MaxClients: the script's connections served at once
	// (DefaultMaxClients).
	MaxClients int
	// IdleTimeout (DefaultIdleTimeout), DialTimeout (DefaultDialTimeout).
	IdleTimeout, DialTimeout time.Duration
	// MaxHeaderBytes: request and response headers (DefaultMaxHeaderBytes).
	MaxHeaderBytes int
	// MaxRefused: distinct refused targets a Report lists
	// (DefaultMaxRefused).
	MaxRefused int
}

// noLimit is what a count without a limit is bounded by.
const noLimit = math.MaxInt

// withDefaults resolves l: zero fields take their defaults, and "no limit"
// becomes a bound no run reaches (a timeout: zero, none).
func (l Limits) withDefaults() Limits {
	count := func(v *int, d int) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = noLimit
		}
	}
	count(&l.MaxConns, DefaultMaxConns)
	count(&l.MaxTunnels, DefaultMaxTunnels)
	count(&l.MaxClients, DefaultMaxClients)
	count(&l.MaxRefused, DefaultMaxRefused)
	switch {
	case l.MaxHeaderBytes == 0:
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	case l.MaxHeaderBytes < 0:
		l.MaxHeaderBytes = 0 // net/http's default
	}
	switch {
	case l.MaxBytes == 0:
		l.MaxBytes = DefaultMaxBytes
	case l.MaxBytes < 0:
		l.MaxBytes = math.MaxInt64
	}
	timeout := func(v *time.Duration, d time.Duration) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	timeout(&l.IdleTimeout, DefaultIdleTimeout)
	timeout(&l.DialTimeout, DefaultDialTimeout)
	return l
}
