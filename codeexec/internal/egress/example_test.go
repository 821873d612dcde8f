package egress_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/adkskills/adkskills/codeexec/internal/egress"
)

func ExampleParse() {
	p, err := egress.Parse("API.example.com:443", "*.pypi.org:443", "[::1]:8080")
	fmt.Println(p.Entries(), err)
	_, err = egress.Parse("api.example.com", "*.com:443")
	fmt.Println(errors.Is(err, egress.ErrInvalidEntry))
	fmt.Println(err)
	// Output:
	// [api.example.com:443 *.pypi.org:443 [::1]:8080] <nil>
	// true
	// egress: invalid allowlist entry "api.example.com": no port: write host:port, e.g. api.example.com:443
	// egress: invalid allowlist entry "*.com:443": *.com covers a whole public suffix: name the domains under it
}

func ExampleNew() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hello")
	}))
	defer upstream.Close()
	// A local development server, listed by its literal address.
	p, err := egress.Parse(upstream.Listener.Addr().String())
	if err != nil {
		panic(err)
	}
	proxy := egress.New(p, egress.WithLimits(egress.Limits{MaxConns: 10}))
	l, err := net.Listen("tcp", "127.0.0.1:0") // in a sandbox: ReceiveListener's
	if err != nil {
		panic(err)
	}
	go proxy.Serve(l)

	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: l.Addr().String()})}}
	for _, u := range []string{upstream.URL, "http://metadata.google.internal/"} {
		resp, err := c.Get(u)
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("X-Proxy-Error"), strings.TrimSpace(string(b)))
	}
	proxy.Close()
	r := proxy.Report()
	fmt.Println(r.Connections, r.Refused[0].Target)
	// Output:
	// 200  hello
	// 403 blocked-by-allowlist egress: refused: metadata.google.internal:80 is not on the egress allowlist
	// 1 metadata.google.internal:80
}
