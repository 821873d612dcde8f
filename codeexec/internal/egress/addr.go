package egress

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// internalRanges are the ranges, beyond what netip classifies, that lead
// into a network rather than out to the internet (RFC 6890's registry).
var internalRanges = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a this-network address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

// Prefixes whose addresses embed an IPv4 address, which decides.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// neverDialed names what a is when no entry can make it a destination
// (the unspecified address connects to the host itself; multicast is not
// for TCP), or "".
func neverDialed(a netip.Addr) string {
	switch a = a.Unmap(); {
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	}
	return ""
}

// class names what kind of internal address a is, or returns "" for an
// address on the internet. An IPv4 address embedded in a NAT64 or 6to4
// address is classified in its place.
func class(a netip.Addr) string {
	a = a.Unmap()
	if why := neverDialed(a); why != "" {
		return why
	}
	switch {
	case a.Zone() != "":
		return "a scoped address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsLinkLocalUnicast():
		return "a link-local address, where cloud metadata lives"
	case a.IsPrivate():
		return "a private address"
	case nat64.Contains(a):
		b := a.As16()
		return class(netip.AddrFrom4([4]byte(b[12:])))
	case sixToFour.Contains(a):
		b := a.As16()
		return class(netip.AddrFrom4([4]byte(b[2:6])))
	}
	for _, r := range internalRanges {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	return ""
}

// ownAddrs caches the addresses of this process's interfaces (those of its
// network namespace) for ownTTL: interfaces change rarely, and a lookup
// costs a netlink dump.
type ownAddrs struct {
	mu    sync.Mutex
	at    time.Time
	addrs map[netip.Addr]bool
	list  func() ([]net.Addr, error)
}

// ownTTL is how long a reading of the interfaces is used.
const ownTTL = time.Second

// own is the process's cache: the interfaces are the process's.
var own = &ownAddrs{list: net.InterfaceAddrs}

// has reports whether a is an address of one of the agent's interfaces.
// When the interfaces cannot be read, every address counts as the agent's
// own: the check fails closed.
func (o *ownAddrs) has(a netip.Addr) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.addrs == nil || time.Since(o.at) > ownTTL {
		as, err := o.list()
		if err != nil {
			o.addrs = nil
			return true
		}
		o.addrs = make(map[netip.Addr]bool, len(as))
		for _, x := range as {
			if n, ok := x.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					o.addrs[ip.Unmap()] = true
				}
			}
		}
		o.at = time.Now()
	}
	return o.addrs[a.Unmap()]
}
