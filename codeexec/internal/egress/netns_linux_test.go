package egress

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// netnsChildEnv marks the copy of this test binary that TestNamespaces
// starts in a network namespace of its own.
const netnsChildEnv = "ADKSKILLS_EGRESS_NETNS_CHILD"

// TestNamespaces reaches real hosts on real addresses of every class,
// never outside the machine: the test runs in a network namespace of its
// own (the agent's, A), joined by a veth pair to another (B), whose
// servers listen on a public-looking address, a private one, a link-local
// one (where cloud metadata lives) and a carrier-grade NAT one; A has an
// address of its own with a server on it.
func TestNamespaces(t *testing.T) {
	if os.Getenv(netnsChildEnv) == "" {
		if os.Geteuid() != 0 {
			t.Skip("needs root to make network namespaces")
		}
		if _, err := exec.LookPath("ip"); err != nil {
			t.Skip("iproute2 (ip) is not installed: apt-get install iproute2")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestNamespaces$", "-test.v")
		cmd.Env = append(os.Environ(), netnsChildEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestNamespaces") {
			t.Fatalf("in a network namespace: %v\n%s", err, out)
		}
		return
	}
	// A: this process. B: a namespace joined by vA (A) and vB (B).
	b := newNetns(t)
	bPath := fmt.Sprintf("/proc/self/fd/%d", b)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ipB := func(args ...string) {
		t.Helper()
		if err := inNetns(b, func() error {
			out, err := exec.Command("ip", args...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}); err != nil {
			t.Fatalf("ip %s in B: %v", strings.Join(args, " "), err)
		}
	}
	ip("link", "set", "lo", "up")
	// ip opens bPath itself: the descriptor is this process's, so it is
	// passed on as the same number.
	cmd := exec.Command("ip", "link", "add", "vA", "type", "veth", "peer", "name", "vB", "netns", "/proc/self/fd/3")
	cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(b), bPath)}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("veth: %v: %s", err, out)
	}
	for _, a := range []string{"192.0.2.1/24", "10.99.0.1/24"} {
		ip("addr", "add", a, "dev", "vA")
	}
	ip("link", "set", "vA", "up")
	for _, r := range []string{"169.254.0.0/16", "100.64.0.0/10"} {
		ip("route", "add", r, "dev", "vA")
	}
	for _, a := range []string{"192.0.2.10/24", "10.99.0.10/24", "169.254.169.254/16", "100.64.0.10/10"} {
		ipB("addr", "add", a, "dev", "vB")
	}
	ipB("link", "set", "vB", "up")
	ipB("route", "add", "default", "dev", "vB")

	// B's server on every address of B, and A's on its own address.
	var mu sync.Mutex
	reached := map[string]int{}
	serve := func(l net.Listener, who string) {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			local := r.Context().Value(http.LocalAddrContextKey).(net.Addr).String()
			mu.Lock()
			reached[local]++
			mu.Unlock()
			fmt.Fprintf(w, "%s %s", who, local)
		})}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
	}
	var lb net.Listener
	if err := inNetns(b, func() (err error) {
		lb, err = net.Listen("tcp4", "0.0.0.0:80")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	serve(lb, "B")
	la, err := net.Listen("tcp4", "192.0.2.1:80")
	if err != nil {
		t.Fatal(err)
	}
	serve(la, "A")

	res := newResolver(map[string][]string{
		"pub.test":      {"192.0.2.10"},
		"self.test":     {"192.0.2.1"},
		"meta.test":     {"169.254.169.254"},
		"cgnat.test":    {"100.64.0.10"},
		"priv.test":     {"10.99.0.10"},
		"meta.named":    {"169.254.169.254"},
		"private.named": {"10.99.0.10"},
		"self.named":    {"192.0.2.1"},
	})
	entries := []string{"*.test:80", "meta.named:80", "private.named:80", "self.named:80"}
	_, addr := startProxy(t, entries, WithResolver(res))
	tests := []struct {
		host, want string // want: the body, or the X-Proxy-Error and a part of the reason
	}{
		{"pub.test", "B 192.0.2.10:80"},
		{"self.test", "blocked-address self.test:80 resolves to 192.0.2.1 (an address of the agent's own): list 192.0.2.1:80 or the exact name"},
		{"meta.test", "blocked-address meta.test:80 resolves to 169.254.169.254 (a link-local address"},
		{"cgnat.test", "blocked-address cgnat.test:80 resolves to 100.64.0.10 (a shared (carrier-grade NAT) address)"},
		{"priv.test", "blocked-address priv.test:80 resolves to 10.99.0.10 (a private address)"},
		{"meta.named", "B 169.254.169.254:80"},
		{"private.named", "B 10.99.0.10:80"},
		{"self.named", "A 192.0.2.1:80"},
		{"192.0.2.10", "blocked-by-allowlist 192.0.2.10:80 is not on the egress allowlist"},
	}
	for _, tt := range tests {
		for _, method := range []string{"GET", "CONNECT"} {
			var got string
			if method == "GET" {
				resp, err := client(addr, nil).Get("http://" + tt.host + "/")
				if err != nil {
					t.Fatal(err)
				}
				got = body(resp)
				if resp.StatusCode != 200 {
					got = resp.Header.Get("X-Proxy-Error") + " " + strings.TrimPrefix(got, "egress: refused: ")
				}
			} else {
				resp, c, br := connect(t, addr, tt.host+":80")
				if resp.StatusCode == 200 {
					got = getThrough(t, c, br, tt.host)
				} else {
					got = resp.Header.Get("X-Proxy-Error") + " " + strings.TrimPrefix(body(resp), "egress: refused: ")
				}
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("%s %s = %q, want %q", method, tt.host, got, tt.want)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for local, n := range reached {
		switch local {
		case "192.0.2.10:80", "169.254.169.254:80", "10.99.0.10:80", "192.0.2.1:80":
		default:
			t.Errorf("%s was reached %d times", local, n)
		}
	}
	for _, local := range []string{"192.0.2.10:80", "169.254.169.254:80", "10.99.0.10:80", "192.0.2.1:80"} {
		if reached[local] != 2 {
			t.Errorf("%s was reached %d times, want 2", local, reached[local])
		}
	}
}
