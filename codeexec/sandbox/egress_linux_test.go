package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// The egress tests run as the root agent and, through
// TestSandboxUnprivilegedAgent, as an unprivileged one: the hook is this
// test binary, started in the sandbox as the run's user.

// upstream is a server on the host's loopback that counts what reaches it.
type upstream struct {
	srv  *httptest.Server
	port int
	hits atomic.Int32
}

// startUpstream starts a plain (or TLS) HTTP server on 127.0.0.1 that
// answers "hello from upstream".
func startUpstream(t *testing.T, tls bool) *upstream {
	t.Helper()
	u := &upstream{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		fmt.Fprint(w, "hello from upstream")
	})
	if tls {
		u.srv = httptest.NewTLSServer(h)
	} else {
		u.srv = httptest.NewServer(h)
	}
	t.Cleanup(u.srv.Close)
	p, err := url.Parse(u.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if u.port, err = strconv.Atoi(p.Port()); err != nil {
		t.Fatal(err)
	}
	return u
}

// runLines runs an attack and returns its "name: result" lines.
func runLines(t *testing.T, e *Executor, req *codeexec.Request) (*codeexec.Result, map[string]string) {
	t.Helper()
	res := codeexectest.MustRun(t, e, req)
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(res.Stdout.Text), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		lines[k] = v
	}
	return res, lines
}

// TestSandboxEgress: with an allowlist, curl and Python's urllib reach an
// allowed server on the host's loopback through the proxy the environment
// names, in plain HTTP and through a CONNECT tunnel; another port of the
// same host is refused with the reason, and listed in the run's warnings;
// the same allowed server is unreachable directly. The control, without
// the allowlist, reaches nothing through the proxy either.
func TestSandboxEgress(t *testing.T) {
	requireSandbox(t)
	plain, tlsUp, other := startUpstream(t, false), startUpstream(t, true), startUpstream(t, false)
	P, Q, R := strconv.Itoa(plain.port), strconv.Itoa(tlsUp.port), strconv.Itoa(other.port)
	s := New(WithEgress("127.0.0.1:"+P), WithEgress("localhost:"+Q))
	if err := s.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	req := attack(t, "egress_attack.sh", P, Q, R)
	// A proxy the request names is replaced by the allowlist's.
	req.Env = map[string]string{"HTTP_PROXY": "http://192.0.2.1:1", "https_proxy": "http://192.0.2.1:1"}
	res, lines := runLines(t, s, req)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	const hello = "hello from upstream"
	for k, want := range map[string]string{
		"proxy":            "http://127.0.0.1:3128 http://127.0.0.1:3128 no_proxy=",
		"curl-http":        hello,
		"curl-https":       hello,
		"curl-other":       "403 blocked-by-allowlist",
		"curl-direct":      "Failed to connect",
		"urllib-http":      hello,
		"urllib-https":     hello,
		"urllib-other":     "403 blocked-by-allowlist",
		"urllib-other-tls": "Tunnel connection failed: 403 Forbidden (egress: 127.0.0.1:" + R + " is not on the egress allowlist",
		"direct-loopback":  "ConnectionRefusedError",
		"direct-net":       "Network is unreachable",
	} {
		if !strings.Contains(lines[k], want) {
			t.Errorf("%s: %q, want %q\nstdout:\n%s\nstderr:\n%s", k, lines[k], want, res.Stdout.Text, res.Stderr.Text)
		}
	}
	if lines["proxy"] != "http://127.0.0.1:3128 http://127.0.0.1:3128 no_proxy=" {
		t.Errorf("proxy variables %q", lines["proxy"])
	}
	if n := other.hits.Load(); n != 0 {
		t.Errorf("the unlisted server was reached %d times", n)
	}
	if plain.hits.Load() != 2 || tlsUp.hits.Load() != 2 {
		t.Errorf("the allowed servers were reached %d and %d times, want 2 each (curl and urllib)", plain.hits.Load(), tlsUp.hits.Load())
	}
	want := "the sandbox's network refused: 127.0.0.1:" + R + " (is not on the egress allowlist: only port " + P + " of that host is) x3."
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", res.Warnings, want)
	}

	// The control: the same script without an allowlist reaches nothing,
	// and nothing is refused by a proxy, for there is none.
	res, lines = runLines(t, New(), attack(t, "egress_attack.sh", P, Q, R))
	if !strings.Contains(lines["curl-http"], "Failed to connect") || len(res.Warnings) != 0 {
		t.Errorf("without an allowlist: curl-http %q, warnings %q", lines["curl-http"], res.Warnings)
	}
	if plain.hits.Load() != 2 {
		t.Errorf("without an allowlist the allowed server was reached")
	}
}

// TestSandboxEgressNothingListed: WithEgress with no entries refuses every
// request, unresolved, and says which.
func TestSandboxEgressNothingListed(t *testing.T) {
	requireSandbox(t)
	src := `curl -s -o /dev/null -w '%{http_code} %header{x-proxy-error}' --max-time 20 http://pypi.org/simple/`
	res := codeexectest.MustRun(t, New(WithEgress()), codeexectest.Script("scripts/get.sh", src))
	if res.Stdout.Text != "403 blocked-by-allowlist" {
		t.Errorf("stdout %q, stderr %q", res.Stdout.Text, res.Stderr.Text)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "the sandbox's network refused: pypi.org:80 (is not on the egress allowlist).") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// hookChildEnv marks the copy of this test binary that
// TestSandboxEgressHookUnusable runs from a private copy.
const hookChildEnv = "ADKSKILLS_SANDBOX_HOOK_CHILD"

// TestSandboxEgressHookUnusable: when the run's user cannot execute the
// agent's binary (here a root agent's copy of mode 0700), the probe of a
// sandbox with an allowlist fails closed and no script runs.
func TestSandboxEgressHookUnusable(t *testing.T) {
	if os.Getenv(hookChildEnv) != "" {
		s := New(WithEgress("127.0.0.1:1"))
		err := s.Probe(context.Background())
		if !errors.Is(err, codeexec.ErrSandboxUnavailable) || !strings.Contains(err.Error(), "handed no listener over") {
			t.Fatalf("Probe = %v, want ErrSandboxUnavailable: no listener", err)
		}
		proof := filepath.Join(t.TempDir(), "ran")
		res, err := s.Execute(context.Background(), codeexectest.Script("scripts/a.sh", "touch "+proof))
		if !errors.Is(err, codeexec.ErrSandboxUnavailable) || res != nil {
			t.Errorf("Execute = %v, %v", res, err)
		}
		if _, err := os.Stat(proof); err == nil {
			t.Error("the script ran")
		}
		// Without the allowlist the same binary runs scripts.
		if err := New().Probe(context.Background()); err != nil {
			t.Errorf("without the allowlist: %v", err)
		}
		return
	}
	if os.Getenv(sandboxChildEnv) != "" || os.Geteuid() != 0 {
		t.Skip("needs a root agent, whose runs have a uid of their own")
	}
	requireSandbox(t)
	bin := filepath.Join(t.TempDir(), "sandbox.test")
	copyFile(t, os.Args[0], bin, 0o700)
	cmd := exec.Command(bin, "-test.run=^TestSandboxEgressHookUnusable$", "-test.v")
	cmd.Env = append(os.Environ(), hookChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSandboxEgressHookUnusable") {
		t.Fatalf("%v\n%s", err, out)
	}
}
