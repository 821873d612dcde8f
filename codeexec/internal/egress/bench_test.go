package egress

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"testing"
)

// downloadBytes is the size of the download benchmarks' file.
const downloadBytes = 100 << 20

// BenchmarkRequest: one small GET, directly and through the proxy (with
// the client's connection kept alive, and with a new one each time: a new
// tunnel for HTTPS); the difference is the proxy's added latency.
func BenchmarkRequest(b *testing.B) {
	for _, tlsOn := range []bool{false, true} {
		up := startUpstream(b, "127.0.0.1:0", tlsOn)
		_, addr := startProxy(b, []string{up.Listener.Addr().String()}, WithLimits(Limits{MaxConns: -1, MaxBytes: -1}))
		kind := "http"
		if tlsOn {
			kind = "https"
		}
		for _, name := range []string{"direct", "direct-new-conn", "proxied", "proxied-new-conn"} {
			c := client(addr, up)
			switch name {
			case "direct":
				c = up.Client()
			case "direct-new-conn":
				c = up.Client()
				c.Transport = c.Transport.(*http.Transport).Clone()
				c.Transport.(*http.Transport).DisableKeepAlives = true
			case "proxied":
				c.Transport.(*http.Transport).DisableKeepAlives = false
			}
			b.Run(kind+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					resp, err := c.Get(up.URL + "/")
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
	}
}

// BenchmarkDownload: a 100 MiB download over plain HTTP (forwarded) and
// HTTPS (tunnelled), directly and through the proxy.
func BenchmarkDownload(b *testing.B) {
	for _, tlsOn := range []bool{false, true} {
		up := startUpstream(b, "127.0.0.1:0", tlsOn)
		_, addr := startProxy(b, []string{up.Listener.Addr().String()}, WithLimits(Limits{MaxConns: -1, MaxBytes: -1}))
		kind := "http"
		if tlsOn {
			kind = "https"
		}
		for _, name := range []string{"direct", "proxied"} {
			c := client(addr, up)
			if name == "direct" {
				c = up.Client()
			}
			b.Run(kind+"/"+name, func(b *testing.B) {
				b.SetBytes(downloadBytes)
				b.ReportAllocs()
				for b.Loop() {
					download(b, c, fmt.Sprintf("%s/?bytes=%d", up.URL, downloadBytes))
				}
			})
		}
	}
}

// download GETs u and checks its length.
func download(b *testing.B, c *http.Client, u string) {
	resp, err := c.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != downloadBytes {
		b.Fatalf("downloaded %d bytes: %v", n, err)
	}
}

// BenchmarkForwarderHop measures way (b) of reaching the sandbox: a
// forwarder inside it relaying every connection from 127.0.0.1:PORT to the
// proxy over a Unix socket. It adds one copy of every byte, in a process
// that lives as long as the run; the hook hands the listener over instead
// and adds nothing.
func BenchmarkForwarderHop(b *testing.B) {
	up := startUpstream(b, "127.0.0.1:0", true)
	p, err := Parse(up.Listener.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	x := New(p, WithLimits(Limits{MaxConns: -1, MaxBytes: -1}))
	sock := filepath.Join(b.TempDir(), "proxy.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	go x.Serve(ul)
	b.Cleanup(func() { x.Close() })
	fl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fl.Close() })
	go func() {
		for {
			c, err := fl.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { io.Copy(u, c); u.(*net.UnixConn).CloseWrite() }()
				io.Copy(c, u)
			}()
		}
	}()
	c := client(fl.Addr().String(), up)
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Get(up.URL + "/")
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("download", func(b *testing.B) {
		b.SetBytes(downloadBytes)
		for b.Loop() {
			download(b, c, fmt.Sprintf("%s/?bytes=%d", up.URL, downloadBytes))
		}
	})
}

// BenchmarkNew: a run's proxy, made and closed.
func BenchmarkNew(b *testing.B) {
	p, err := Parse("api.example.com:443", "*.pypi.org:443", "127.0.0.1:8080")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		New(p).Close()
	}
}

// BenchmarkDecide: the policy's decision for one connection, a name
// resolved to a public address (the own-address cache warm).
func BenchmarkDecide(b *testing.B) {
	p, err := Parse("api.example.com:443", "*.pypi.org:443", "127.0.0.1:8080")
	if err != nil {
		b.Fatal(err)
	}
	x := New(p)
	defer x.Close()
	t := target{name: "files.pypi.org", port: 443}
	addr := netip.AddrFrom4([4]byte{192, 0, 2, 1})
	b.ReportAllocs()
	for b.Loop() {
		if x.policy.lookup(t) == unlisted || x.addrRefusal(addr, 443, byWildcard) != "" {
			b.Fatal("refused")
		}
	}
}
