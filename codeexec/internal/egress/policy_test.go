package egress

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   []string
		want []string // normalized entries
	}{
		{nil, nil},
		{[]string{"api.example.com:443"}, []string{"api.example.com:443"}},
		{[]string{" API.Example.COM.:443 "}, []string{"api.example.com:443"}},
		{[]string{"*.pypi.org:443", "*.PyPI.org:443"}, []string{"*.pypi.org:443"}},
		{[]string{"1.2.3.4:80"}, []string{"1.2.3.4:80"}},
		{[]string{"[::1]:443", "[::ffff:127.0.0.1]:443"}, []string{"[::1]:443", "127.0.0.1:443"}},
		{[]string{"[2001:DB8::1]:8443"}, []string{"[2001:db8::1]:8443"}},
		{[]string{"localhost:8080", "localhost:8080", "localhost:3000"}, []string{"localhost:8080", "localhost:3000"}},
		{[]string{"bücher.example:443"}, []string{"xn--bcher-kva.example:443"}},
		{[]string{"*.github.io:443"}, []string{"*.github.io:443"}}, // a private-section suffix
		{[]string{"_svc.corp.example:65535", "devbox:1"}, []string{"_svc.corp.example:65535", "devbox:1"}},
		{[]string{"a-z_09.AZ.example:443"}, []string{"a-z_09.az.example:443"}}, // the ends of each character range
		{[]string{longest63 + ".example:1"}, []string{longest63 + ".example:1"}},
		{[]string{longest253 + ":1"}, []string{longest253 + ":1"}},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in...)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := p.Entries(); !slices.Equal(got, tt.want) {
			t.Errorf("Parse(%q).Entries() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Host names at their limits: a 63-byte label, 253 bytes in all.
var (
	longest63  = strings.Repeat("a", 63)
	longest253 = strings.Repeat(strings.Repeat("b", 62)+".", 4)[:252] + "c"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in, want string // want: a part of the error
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"api.example.com", "no port"},
		{"api.example.com:", "no port"},
		{":443", "no host"},
		{"api.example.com:0", "not a number from 1 to 65535"},
		{"api.example.com:65536", "not a number from 1 to 65535"},
		{"api.example.com:080", "not a number"},
		{"api.example.com:+80", "not a number"},
		{"api.example.com:http", "not a number"},
		{"https://api.example.com:443", "not a URL"},
		{"api.example.com:443/path", "not a URL"},
		{"user@api.example.com:443", "not a URL"},
		{"::1:443", "needs brackets"},
		{"[::1]", "no port after the bracketed"},
		{"[::1:443", "no port after the bracketed"},
		{"[1.2.3.4]:443", "not an IPv6 address"},
		{"[fe80::1%eth0]:443", "not an IPv6 address"},
		{"[nonsense]:443", "not an IPv6 address"},
		{"0.0.0.0:80", "unspecified"},
		{"[::]:80", "unspecified"},
		{"224.0.0.1:80", "multicast"},
		{"[ff02::1]:80", "multicast"},
		{"1.2.3:80", "neither a dotted IPv4"},
		{"2130706433:80", "neither a dotted IPv4"},
		{"01.2.3.4:80", "neither a dotted IPv4"},
		{"*:443", "not a valid host name"},
		{"*.*.example.com:443", "not a valid host name"},
		{"a.*.example.com:443", "not a valid host name"},
		{"*.com:443", "whole public suffix"},
		{"*.co.uk:443", "whole public suffix"},
		{"-bad.example.com:443", "not a valid host name"},
		{"bad-.example.com:443", "not a valid host name"},
		{"a..example.com:443", "not a valid host name"},
		{"sp ace.example.com:443", "not a valid host name"},
		{strings.Repeat("a", 64) + ".example.com:443", "not a valid host name"},
		{strings.Repeat("abcdefghi.", 26) + "com:443", "not a valid host name"},
		{longest253 + "d:443", "not a valid host name"},
		{"\x80.example:443", "not valid UTF-8"},
		{"\ufffd.example:443", "idna"},
		{"a/b:443", "not a URL"},
		{"a`b.example:443", "not a valid host name"}, // the characters around each range
		{"a{b.example:443", "not a valid host name"},
		{"a@b.example:443", "not a URL"},
		{"a[b.example:443", "not a valid host name"},
		{"a/b.example:443", "not a URL"},
		{"a:b.example:443", "brackets"},
		{"a.b.example.:443x", "not a number"},
	}
	for _, tt := range tests {
		_, err := Parse("ok.example.com:443", tt.in)
		if !errors.Is(err, ErrInvalidEntry) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want ErrInvalidEntry with %q", tt.in, err, tt.want)
		}
	}
	// Every bad entry is named, not only the first.
	_, err := Parse("a:1", "b", "c:0")
	if err == nil || !strings.Contains(err.Error(), `"b"`) || !strings.Contains(err.Error(), `"c:0"`) {
		t.Errorf("Parse with two bad entries = %v, want both named", err)
	}
}

func TestLookup(t *testing.T) {
	p, err := Parse("api.example.com:443", "*.pypi.org:443", "1.2.3.4:80", "[2001:db8::1]:443", "*.example.net:8080", "files.example.net:443")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target string
		want   match
		other  string // otherPorts for an unlisted target
	}{
		{"api.example.com:443", explicitly, ""},
		{"API.example.com.:443", explicitly, ""},
		{"api.example.com:80", unlisted, "443"},
		{"www.api.example.com:443", unlisted, ""},
		{"example.com:443", unlisted, ""},
		{"files.pypi.org:443", byWildcard, ""},
		{"a.b.pypi.org:443", byWildcard, ""},
		{"pypi.org:443", unlisted, ""}, // the apex is not below itself
		{"evilpypi.org:443", unlisted, ""},
		{"pypi.org.evil.com:443", unlisted, ""},
		{"files.pypi.org:80", unlisted, "443"},
		{"1.2.3.4:80", explicitly, ""},
		{"[::ffff:1.2.3.4]:80", explicitly, ""},
		{"1.2.3.4:443", unlisted, "80"},
		{"1.2.3.5:80", unlisted, ""},
		{"[2001:db8::1]:443", explicitly, ""},
		{"[2001:db8::2]:443", unlisted, ""},
		{"x.example.net:8080", byWildcard, ""},
		{"files.example.net:8080", byWildcard, ""},
		{"files.example.net:80", unlisted, "443, 8080"},
	}
	for _, tt := range tests {
		tg, err := parseTarget(tt.target, 0)
		if err != nil {
			t.Fatalf("parseTarget(%q): %v", tt.target, err)
		}
		if got := p.lookup(tg); got != tt.want {
			t.Errorf("lookup(%s) = %v, want %v", tt.target, got, tt.want)
		}
		if got := p.otherPorts(tg); tt.want == unlisted && got != tt.other {
			t.Errorf("otherPorts(%s) = %q, want %q", tt.target, got, tt.other)
		}
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in      string
		defPort uint16
		want    string // target.String(), or "" for an error
	}{
		{"example.com:443", 0, "example.com:443"},
		{"Example.COM", 80, "example.com:80"},
		{"example.com", 0, ""},
		{"example.com:0", 80, ""},
		{"example.com:99999", 80, ""},
		{"1.2.3.4:80", 0, "1.2.3.4:80"},
		{"[::1]:443", 0, "[::1]:443"},
		{"[::1]", 80, "[::1]:80"},
		{"[::1]", 0, ""},
		{"[fe80::1%25eth0]:80", 0, ""},
		{"2130706433:80", 0, ""},
		{"0x7f.1:80", 0, ""},
		{"exa mple.com:80", 0, ""},
		{"example.com\r\nX-Evil: 1:80", 0, ""},
		{":80", 0, ""},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in, tt.defPort)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("parseTarget(%q) = %s, want an error", tt.in, got)
		case tt.want != "" && (err != nil || got.String() != tt.want):
			t.Errorf("parseTarget(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestEnv(t *testing.T) {
	tests := []struct {
		entries []string
		noProxy string
	}{
		{[]string{"api.example.com:443"}, noProxy},
		{[]string{"localhost:8080"}, ""},
		{[]string{"dev.localhost:8080"}, ""},
		{[]string{"*.localhost:8080"}, ""},
		{[]string{"127.0.0.1:8080"}, ""},
		{[]string{"127.1.2.3:8080"}, ""},
		{[]string{"[::1]:8080"}, ""},
		{[]string{"localhost.example.com:8080"}, noProxy},
	}
	for _, tt := range tests {
		p, err := Parse(tt.entries...)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
			"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
			"NO_PROXY=" + tt.noProxy, "no_proxy=" + tt.noProxy,
			"NODE_USE_ENV_PROXY=1",
		}
		if got := p.Env(InsidePort); !slices.Equal(got, want) {
			t.Errorf("Env for %q = %q, want %q", tt.entries, got, want)
		}
	}
}

func TestClass(t *testing.T) {
	tests := []struct {
		addr, want string // want: a part of the class, "" for the internet
	}{
		{"8.8.8.8", ""},
		{"192.0.2.10", ""}, // documentation ranges lead nowhere internal
		{"2001:4860:4860::8888", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "this-network"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.127.255.255", "carrier-grade NAT"},
		{"100.128.0.1", ""},
		{"192.0.0.8", "IETF"},
		{"198.18.0.1", "benchmarking"},
		{"198.20.0.1", ""},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "reserved"},
		{"::7f00:1", "IPv4-compatible"},
		{"100::1", "discard"},
		{"64:ff9b:1::1", "local NAT64"},
		{"fec0::1", "site-local"},
		{"64:ff9b::7f00:1", "loopback"},      // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", "link-local"}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", ""},             // NAT64 of 8.8.8.8
		{"2002:a00:1::1", "private"},         // 6to4 of 10.0.0.1
		{"2002:808:808::1", ""},              // 6to4 of 8.8.8.8
	}
	for _, tt := range tests {
		got := class(netip.MustParseAddr(tt.addr))
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("class(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	if got := class(netip.MustParseAddr("fe80::1%eth0")); !strings.Contains(got, "link-local") && !strings.Contains(got, "scoped") {
		t.Errorf("class(fe80::1%%eth0) = %q", got)
	}
	if got := class(netip.MustParseAddr("2001:db8::1%eth0")); got != "a scoped address" {
		t.Errorf("class(2001:db8::1%%eth0) = %q, want a scoped address", got)
	}
}

// FuzzParse: any input gives entries or ErrInvalidEntry, never a panic;
// what it accepts normalizes to a fixed point with a port.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"api.example.com:443", "*.pypi.org:443", "1.2.3.4:80", "[::1]:443", "[::ffff:1.2.3.4]:1",
		"bücher.example:443", "::1:443", "*.com:443", "a:65535", "[fe80::1%eth0]:1", "*.:1", "xn--:1", ".:1", "a.:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidEntry) {
				t.Fatalf("Parse(%q) = %v, not ErrInvalidEntry", s, err)
			}
			return
		}
		es := p.Entries()
		if len(es) != 1 {
			t.Fatalf("Parse(%q) gave %d entries", s, len(es))
		}
		q, err := Parse(es[0])
		if err != nil || !slices.Equal(q.Entries(), es) {
			t.Fatalf("Parse(%q) = %q, which parses to %v, %v", s, es, q, err)
		}
		if _, port, err := splitHostPort(es[0]); err != nil || port == 0 {
			t.Fatalf("entry %q has no port: %v", es[0], err)
		}
	})
}

// FuzzParseTarget: a request's target parses or fails, never panics, and
// one that parses prints back to itself.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"example.com:443", "[::1]:80", "1.2.3.4", "[::1", "a:b:c", "%", "[]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := parseTarget(s, 80)
		if err != nil {
			return
		}
		again, err := parseTarget(tg.String(), 0)
		if err != nil || again != tg {
			t.Fatalf("parseTarget(%q) = %s, which parses to %v, %v", s, tg, again, err)
		}
	})
}
