package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adkskills/adkskills/codeexec/internal/egress/hook"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Policy is a parsed allowlist. It is immutable and safe to share between
// proxies (an executor parses it once; each run's proxy uses it).
type Policy struct {
	names     map[string][]uint16 // exact host names, with their ports
	wildcards []wildcard
	addrs     map[netip.AddrPort]bool // literal addresses
	entries   []string                // normalized, deduplicated, in order
	loopback  bool                    // an entry names localhost or a loopback address
}

// wildcard is a "*.domain:port" entry; suffix is ".domain".
type wildcard struct {
	suffix string
	port   uint16
}

// Parse parses allowlist entries. Each is one of
//
//	host:port         api.example.com:443 (that name only)
//	*.domain:port     *.pypi.org:443 (every name below pypi.org, not
//	                  pypi.org itself: list it too if you need it)
//	1.2.3.4:port      a literal IPv4 address
//	[::1]:port        a literal IPv6 address, in brackets
//
// Every entry has a port (1-65535); names are case-insensitive, a trailing
// dot is dropped, and internationalized names are taken in their ASCII
// (xn--) form. A wildcard may not cover a whole public suffix (*.com,
// *.co.uk). The errors of all bad entries are returned together, each
// wrapping [ErrInvalidEntry]. No entry at all is a valid policy that
// refuses everything.
func Parse(entries ...string) (*Policy, error) {
	p := &Policy{names: map[string][]uint16{}, addrs: map[netip.AddrPort]bool{}}
	var errs []error
	for _, e := range entries {
		norm, err := p.add(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w %q: %v", ErrInvalidEntry, e, err))
			continue
		}
		if !slices.Contains(p.entries, norm) {
			p.entries = append(p.entries, norm)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Entries returns the entries in their normalized form.
func (p *Policy) Entries() []string { return slices.Clone(p.entries) }

// add parses one entry into p and returns its normalized form.
func (p *Policy) add(e string) (string, error) {
	e = strings.TrimSpace(e)
	if strings.Contains(e, "://") || strings.ContainsAny(e, "/?#@") {
		return "", errors.New("give host:port, not a URL")
	}
	hostPart, port, err := splitHostPort(e)
	if err != nil {
		return "", err
	}
	if a, ok, err := parseIPHost(hostPart); ok || err != nil {
		if err != nil {
			return "", err
		}
		if why := neverDialed(a); why != "" {
			return "", fmt.Errorf("%s is %s: nothing to connect to", a, why)
		}
		ap := netip.AddrPortFrom(a, port)
		p.addrs[ap] = true
		p.loopback = p.loopback || a.IsLoopback()
		return ap.String(), nil
	}
	if rest, ok := strings.CutPrefix(hostPart, "*."); ok {
		domain, err := entryName(rest)
		if err != nil {
			return "", err
		}
		if ps, icann := publicsuffix.PublicSuffix(domain); icann && ps == domain {
			return "", fmt.Errorf("*.%s covers a whole public suffix: name the domains under it", domain)
		}
		w := wildcard{suffix: "." + domain, port: port}
		if !slices.Contains(p.wildcards, w) {
			p.wildcards = append(p.wildcards, w)
		}
		p.loopback = p.loopback || domain == "localhost"
		return "*." + domain + ":" + strconv.Itoa(int(port)), nil
	}
	name, err := entryName(hostPart)
	if err != nil {
		return "", err
	}
	if !slices.Contains(p.names[name], port) {
		p.names[name] = append(p.names[name], port)
		slices.Sort(p.names[name])
	}
	p.loopback = p.loopback || name == "localhost" || strings.HasSuffix(name, ".localhost")
	return name + ":" + strconv.Itoa(int(port)), nil
}

// splitHostPort splits "host:port" and "[v6]:port", with clear errors for
// what is missing.
func splitHostPort(s string) (string, uint16, error) {
	if s == "" {
		return "", 0, errors.New("empty")
	}
	i := strings.LastIndexByte(s, ':')
	switch {
	case i < 0:
		return "", 0, errors.New("no port: write host:port, e.g. api.example.com:443")
	case !strings.HasPrefix(s, "[") && strings.Count(s, ":") > 1:
		return "", 0, errors.New("an IPv6 address needs brackets: [2001:db8::1]:443")
	case strings.HasPrefix(s, "[") && s[i-1] != ']':
		return "", 0, errors.New("no port after the bracketed address: [2001:db8::1]:443")
	}
	port, err := hook.ParsePort(s[i+1:])
	if err != nil {
		return "", 0, err
	}
	if s[:i] == "" {
		return "", 0, errors.New("no host before the port")
	}
	return s[:i], port, nil
}

// parseIPHost recognizes a literal address: "1.2.3.4" or "[v6]". ok is
// false for a name; err is set for a bracketed or numeric host that is not
// a valid address.
func parseIPHost(h string) (netip.Addr, bool, error) {
	if inner, ok := strings.CutPrefix(h, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		a, err := netip.ParseAddr(inner)
		if !ok || err != nil || !a.Is6() || a.Zone() != "" {
			return netip.Addr{}, false, fmt.Errorf("%s is not an IPv6 address (no zone)", h)
		}
		return a.Unmap(), true, nil
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Is4() {
		return a, true, nil
	}
	return netip.Addr{}, false, nil
}

// entryName normalizes a host name of an entry: lower case, no trailing
// dot, ASCII (an internationalized name becomes its xn-- form).
func entryName(h string) (string, error) {
	switch {
	case !utf8.ValidString(h):
		return "", fmt.Errorf("%q is not valid UTF-8", h)
	case utf8.RuneCountInString(h) != len(h):
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%q is not a valid host name: %v", h, err)
		}
		h = a
	}
	return checkName(h)
}

// checkName validates an ASCII host name and returns it lower-cased,
// without a trailing dot: labels of letters, digits, '-' and '_' (not
// starting or ending with '-'), 1-63 bytes each, 253 in all, and a last
// label that is not all digits (those are numeric addresses).
func checkName(h string) (string, error) {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" || len(h) > 253 {
		return "", fmt.Errorf("%q is not a valid host name", h)
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("%q is not a valid host name", h)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("%q is not a valid host name", h)
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "", fmt.Errorf("%q is neither a dotted IPv4 address nor a host name", h)
	}
	return h, nil
}

// target is where a request asks to go.
type target struct {
	name string     // a host name, or "" for a literal address
	addr netip.Addr // the literal address
	port uint16
}

// String is the target as host:port.
func (t target) String() string {
	if t.name != "" {
		return t.name + ":" + strconv.Itoa(int(t.port))
	}
	return netip.AddrPortFrom(t.addr, t.port).String()
}

// parseTarget parses a request's host:port (CONNECT's authority, a URL's
// host); defPort is used when the port is missing, and 0 requires it.
func parseTarget(s string, defPort uint16) (target, error) {
	hostPart := s
	var port uint16
	if i := strings.LastIndexByte(s, ':'); i >= 0 && (!strings.HasPrefix(s, "[") || strings.HasSuffix(s[:i], "]")) {
		p, err := hook.ParsePort(s[i+1:])
		if err != nil {
			return target{}, err
		}
		hostPart, port = s[:i], p
	}
	if port == 0 {
		if defPort == 0 {
			return target{}, fmt.Errorf("%q has no port", s)
		}
		port = defPort
	}
	if a, ok, err := parseIPHost(hostPart); ok || err != nil {
		return target{addr: a, port: port}, err
	}
	name, err := checkName(hostPart)
	return target{name: name, port: port}, err
}

// match is how a target matched the policy.
type match int

const (
	unlisted match = iota
	byWildcard
	explicitly // an exact name, or a literal address
)

// lookup tells how t matches p: explicitly (an exact name entry, or the
// literal address entry), byWildcard, or not at all.
func (p *Policy) lookup(t target) match {
	if t.name == "" {
		if p.addrs[netip.AddrPortFrom(t.addr, t.port)] {
			return explicitly
		}
		return unlisted
	}
	if slices.Contains(p.names[t.name], t.port) {
		return explicitly
	}
	for _, w := range p.wildcards {
		if w.port == t.port && strings.HasSuffix(t.name, w.suffix) {
			return byWildcard
		}
	}
	return unlisted
}

// otherPorts lists the ports the policy allows for t's host when t's own
// is not among them ("" when the host is not listed at all).
func (p *Policy) otherPorts(t target) string {
	var ports []uint16
	if t.name == "" {
		for ap := range p.addrs {
			if ap.Addr() == t.addr {
				ports = append(ports, ap.Port())
			}
		}
	} else {
		ports = slices.Clone(p.names[t.name])
		for _, w := range p.wildcards {
			if strings.HasSuffix(t.name, w.suffix) {
				ports = append(ports, w.port)
			}
		}
	}
	slices.Sort(ports)
	var s []string
	for _, v := range slices.Compact(ports) {
		s = append(s, strconv.Itoa(int(v)))
	}
	return strings.Join(s, ", ")
}

// literal reports whether the address a is listed with port.
func (p *Policy) literal(a netip.Addr, port uint16) bool {
	return p.addrs[netip.AddrPortFrom(a, port)]
}

// noProxy is what NO_PROXY holds when no entry names the loopback: the
// script's own loopback services stay direct.
const noProxy = "localhost,127.0.0.1,::1"

// Env returns the environment that sends a script's HTTP clients to the
// proxy at 127.0.0.1:port: HTTP_PROXY, HTTPS_PROXY and NO_PROXY, upper and
// lower case (curl reads only http_proxy in lower case; others only upper),
// and NODE_USE_ENV_PROXY=1, which makes Node.js 24 (and late 22 releases)
// use them for fetch and its http modules; older versions ignore it.
// NO_PROXY keeps requests to the sandbox's own loopback direct, unless the
// policy lists localhost or a loopback address: then it is empty, so that
// those requests reach the proxy and, through it, the host's service.
func (p *Policy) Env(port uint16) []string {
	u := "http://127.0.0.1:" + strconv.Itoa(int(port))
	no := noProxy
	if p.loopback {
		no = ""
	}
	return []string{
		"HTTP_PROXY=" + u, "http_proxy=" + u,
		"HTTPS_PROXY=" + u, "https_proxy=" + u,
		"NO_PROXY=" + no, "no_proxy=" + no,
		"NODE_USE_ENV_PROXY=1",
	}
}
