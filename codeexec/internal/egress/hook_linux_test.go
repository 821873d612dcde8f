package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec/internal/egress/hook"

	"golang.org/x/sys/unix"
)

// hookChildEnv marks the copy of this test binary that TestHookUnprivileged
// runs as an unprivileged user.
const hookChildEnv = "ADKSKILLS_EGRESS_TEST_CHILD"

// testNobody is the unprivileged user the tests run agents as.
const testNobody = 65534

// The sandbox as the tests build it, the way the executor's does for the
// script: bubblewrap with a user and a network namespace of their own (only
// loopback), the agent's executable shown read-only at hookExe through a
// descriptor, and the handoff socket at hookFD.
const (
	hookExe   = "/run/adkskills/egress-hook"
	hookFD    = 3 // the child end of Pair
	hookExeFD = 4 // an O_PATH descriptor of the agent's executable
)

// requireBwrap skips the test when bubblewrap is missing.
func requireBwrap(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
	}
	return p
}

// sandboxRun is one script run in a sandbox behind the hook, with its
// proxy.
type sandboxRun struct {
	out, errOut string
	exit        int
	report      Report
	handoff     error         // ReceiveListener's error
	cpu         time.Duration // user and system time of the sandbox's processes
}

// runSandboxed runs script (sh -c) in a sandbox; with hook, behind the
// hook and a proxy for entries, with env as the policy's.
func runSandboxed(t testing.TB, entries []string, script string, behind bool) sandboxRun {
	t.Helper()
	bwrap := requireBwrap(t)
	p, err := Parse(entries...)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--unshare-net", "--unshare-user", "--unshare-pid", "--die-with-parent", "--uid", strconv.Itoa(testNobody), "--gid", strconv.Itoa(testNobody),
		"--dev-bind", "/", "/", "--tmpfs", "/run", "--perms", "0755", "--dir", "/run/adkskills",
		"--ro-bind-fd", strconv.Itoa(hookExeFD), hookExe, "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp"}
	for _, kv := range p.Env(InsidePort) {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	// The sandbox's rlimits (codeexec's defaults) apply to the hook too.
	args = append(args, "--", "prlimit", "--core=0", "--as=2147483648", "--nproc=256", "--fsize=134217728", "--cpu=120", "--")
	if behind {
		args = append(args, hook.Args(hookExe, hookFD, InsidePort)...)
	}
	args = append(args, "/bin/sh", "-c", script)

	agent, child, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	exe, err := os.OpenFile("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	cmd := exec.Command(bwrap, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.ExtraFiles = []*os.File{child, exe} // hookFD, hookExeFD
	if !behind {
		cmd.ExtraFiles[0] = nil // nothing to hand over: the agent sees the end at once
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child.Close()

	x := New(p)
	served := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		l, err := ReceiveListener(ctx, agent, InsidePort)
		if err != nil {
			served <- err
			return
		}
		served <- nil
		_ = x.Serve(l)
	}()
	err = cmd.Wait()
	var r sandboxRun
	if ps := cmd.ProcessState; ps != nil {
		r.cpu = ps.UserTime() + ps.SystemTime()
	}
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	agent.Close() // the handoff, if it never came, ends here
	r.handoff = <-served
	x.Close()
	r.out, r.errOut, r.report = stdout.String(), stderr.String(), x.Report()
	return r
}

// hookScript exercises the network from inside: through the proxy with
// curl and Python's urllib (allowed: 127.0.0.1:$P plain, localhost:$Q
// TLS; refused: 127.0.0.1:$R, a live port not listed), and directly, with
// no proxy. Each line is "name: result".
const hookScript = `
echo "curl-http: $(curl -sS --max-time 20 http://127.0.0.1:$P/curl)"
echo "curl-https: $(curl -sS -k --max-time 20 https://localhost:$Q/)"
echo "curl-other: $(curl -s -o /dev/null -w '%{http_code} %header{x-proxy-error}' --max-time 20 http://127.0.0.1:$R/)"
curl -sS -k --max-time 20 https://127.0.0.1:$R/ 2>&1 | sed 's/^/curl-other-tls: /'
/usr/bin/python3 - <<'EOF'
import os, socket, ssl, urllib.error, urllib.request
P, Q, R = (os.environ[k] for k in ("P", "Q", "R"))
def show(name, f):
    try:
        print(name + ":", f())
    except urllib.error.HTTPError as e:
        print(name + ":", e.code, e.headers.get("X-Proxy-Error"))
    except Exception as e:
        print(name + ":", type(e).__name__, getattr(e, "reason", e))
insecure = ssl._create_unverified_context()
show("urllib-http", lambda: urllib.request.urlopen("http://127.0.0.1:%s/urllib" % P, timeout=20).read().decode())
show("urllib-https", lambda: urllib.request.urlopen("https://localhost:%s/" % Q, timeout=20, context=insecure).read().decode())
show("urllib-other", lambda: urllib.request.urlopen("http://127.0.0.1:%s/" % R, timeout=20).read())
show("urllib-other-tls", lambda: urllib.request.urlopen("https://127.0.0.1:%s/" % R, timeout=20, context=insecure).read())
show("direct-loopback", lambda: socket.create_connection(("127.0.0.1", int(P)), timeout=5))
show("direct-net", lambda: socket.create_connection(("192.0.2.1", 80), timeout=5))
EOF
` + hookTrace

// hookTrace prints what the hook must leave as it found it: the open
// descriptors, the blocked and ignored signals, the descriptor limit.
const hookTrace = `
echo "fds: $(ls -l /proc/self/fd | sed -n 's/.* \([0-9]*\) -> \(.*\)/\1>\2/p' | grep -v '>/proc/' | cut -d'>' -f1 | tr '\n' ' ')"
echo "signals: $(grep -E '^Sig(Blk|Ign)' /proc/self/status | tr -s '\t\n' '  ')"
echo "nofile: $(ulimit -Sn)"
`

func TestHook(t *testing.T) {
	requireBwrap(t)
	plain := startUpstream(t, "127.0.0.1:0", false)
	tlsUp := startUpstream(t, "127.0.0.1:0", true)
	other := startUpstream(t, "127.0.0.1:0", false)
	env := fmt.Sprintf("export P=%d Q=%d R=%d\n", plain.port, tlsUp.port, other.port)
	entries := []string{fmt.Sprintf("127.0.0.1:%d", plain.port), fmt.Sprintf("localhost:%d", tlsUp.port)}
	r := runSandboxed(t, entries, env+hookScript, true)
	if r.handoff != nil || r.exit != 0 {
		t.Fatalf("exit %d, handoff %v\nstdout:\n%s\nstderr:\n%s", r.exit, r.handoff, r.out, r.errOut)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		lines[k] = v
	}
	R := strconv.Itoa(int(other.port))
	for k, want := range map[string]string{
		"curl-http":        "hello from 127.0.0.1:",
		"curl-https":       "hello from 127.0.0.1:",
		"curl-other":       "403 blocked-by-allowlist",
		"curl-other-tls":   "CONNECT tunnel failed, response 403",
		"urllib-http":      "hello from 127.0.0.1:",
		"urllib-https":     "hello from 127.0.0.1:",
		"urllib-other":     "403 blocked-by-allowlist",
		"urllib-other-tls": "Tunnel connection failed: 403 Forbidden (egress: 127.0.0.1:" + R + " is not on the egress allowlist",
		"direct-loopback":  "ConnectionRefusedError",
		"direct-net":       "OSError [Errno 101] Network is unreachable",
	} {
		if !strings.Contains(lines[k], want) {
			t.Errorf("%s: %q, want %q\nstdout:\n%s\nstderr:\n%s", k, lines[k], want, r.out, r.errOut)
		}
	}
	if n := other.conns.Load(); n != 0 {
		t.Errorf("the unlisted server was reached %d times", n)
	}
	if len(r.report.Refused) != 1 || r.report.Refused[0].Target != "127.0.0.1:"+R || r.report.Refused[0].Count != 4 {
		t.Errorf("report %+v", r.report)
	}
	// Two tunnels, and one or two forwarding connections (kept alive).
	if r.report.Connections < 3 || r.report.BytesReceived == 0 {
		t.Errorf("report %+v", r.report)
	}
	// The hook leaves no trace on the script: the same descriptors,
	// signals and descriptor limit as without it.
	bare := runSandboxed(t, entries, hookTrace, false)
	for _, k := range []string{"fds", "signals", "nofile"} {
		if want := k + ": " + lines[k]; !strings.Contains(bare.out, want) {
			t.Errorf("behind the hook %q; without it:\n%s", want, bare.out)
		}
	}
}

// TestHookUnprivileged runs TestHook again in a copy of this test binary
// started as an unprivileged user: the agent that is not root.
func TestHookUnprivileged(t *testing.T) {
	switch {
	case os.Getenv(hookChildEnv) != "":
		t.Skip("already the unprivileged copy")
	case os.Geteuid() != 0:
		t.Skip("not root: TestHook already ran unprivileged")
	}
	requireBwrap(t)
	bin := copyTestBinary(t)
	home := filepath.Join(filepath.Dir(bin), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, testNobody, testNobody); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^(TestHook|TestReceiveListener)$", "-test.v")
	cmd.Dir = home
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home, hookChildEnv + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testNobody, Gid: testNobody}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestHook ") || !strings.Contains(string(out), "--- PASS: TestReceiveListener ") {
		t.Fatalf("as uid %d: %v\n%s", testNobody, err, out)
	}
}

// copyTestBinary copies this test binary where the unprivileged user can
// run it (t.TempDir's parent is private to root).
func copyTestBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "adkskills-egress-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "egress.test")
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestHookFails: a hook that cannot hand over or cannot run the command
// says so and exits as a shell would, and the agent learns that no
// listener came.
func TestHookFails(t *testing.T) {
	requireBwrap(t)
	r := runSandboxed(t, nil, "exit 0", false) // no hook: nothing handed over
	if !errors.Is(r.handoff, ErrHandoff) || !strings.Contains(r.handoff.Error(), "ended before its hook handed a listener over") {
		t.Errorf("no hook: handoff %v", r.handoff)
	}
	r = runSandboxed(t, nil, "exit 0", true) // hook, then sh -c
	if r.handoff != nil || r.exit != 0 {
		t.Errorf("hook: exit %d, handoff %v, %s", r.exit, r.handoff, r.errOut)
	}

	// In-process, before anything is executed.
	agent, child, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	defer child.Close()
	// The hook's failures are package hook's tests; here, one that
	// handed a listener over before its command failed.
	var stderr bytes.Buffer
	if code := hook.Run([]string{strconv.Itoa(int(dupFd(t, child))), freePort(t), "--", "/nonexistent/command"}, &stderr); code != hook.NotFound {
		t.Errorf("hook.Run = %d %q, want %d", code, stderr.String(), hook.NotFound)
	}
	// It handed a listener of this process's namespace over, which the
	// agent refuses.
	if _, err := ReceiveListener(context.Background(), agent, 0); !errors.Is(err, ErrHandoff) {
		t.Errorf("ReceiveListener = %v", err)
	}
}

// dupFd duplicates f's descriptor for a test that hands it away.
func dupFd(t *testing.T, f *os.File) uintptr {
	t.Helper()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	return uintptr(fd)
}

// freePort returns a loopback port free right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestReceiveListener: what comes over the handoff comes from the
// sandbox, and only a TCP listener on 127.0.0.1:port of another network
// namespace is taken.
func TestReceiveListener(t *testing.T) {
	const port = InsidePort
	socket := func(domain, typ int, listen bool, addr unix.Sockaddr) func(t *testing.T) []int {
		return func(t *testing.T) []int {
			s, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			if addr != nil {
				if err := unix.Bind(s, addr); err != nil {
					t.Fatal(err)
				}
			}
			if listen {
				if err := unix.Listen(s, 1); err != nil {
					t.Fatal(err)
				}
			}
			return []int{s}
		}
	}
	lo := func(p int) *unix.SockaddrInet4 { return &unix.SockaddrInet4{Port: p, Addr: [4]byte{127, 0, 0, 1}} }
	room := (unix.CmsgSpace(4) - unix.CmsgLen(0)) / 4 // descriptors ReceiveListener's buffer holds
	tests := []struct {
		name string
		in   bool                     // run in a network namespace of its own
		fds  func(t *testing.T) []int // what the "sandbox" sends; nil: nothing, then it closes
		want string                   // a part of the error, "" for success
	}{
		{"nothing", false, nil, "ended before"},
		{"a pipe", false, func(t *testing.T) []int {
			var p [2]int
			if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
				t.Fatal(err)
			}
			unix.Close(p[1])
			return p[:1]
		}, "not a listening TCP socket"},
		{"UDP", true, socket(unix.AF_INET, unix.SOCK_DGRAM, false, lo(port)), "type"},
		{"IPv6", true, socket(unix.AF_INET6, unix.SOCK_STREAM, true, &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}), "domain"},
		{"not listening", true, socket(unix.AF_INET, unix.SOCK_STREAM, false, lo(port)), "listening"},
		{"another port", true, socket(unix.AF_INET, unix.SOCK_STREAM, true, lo(port+1)), "want 127.0.0.1:3128"},
		{"another address", true, socket(unix.AF_INET, unix.SOCK_STREAM, true, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 2}}), "want 127.0.0.1:3128"},
		// The control buffer has room for what one descriptor's is padded
		// to; the kernel drops what does not fit and says so.
		{"more than fit", true, func(t *testing.T) []int {
			var fds []int
			for i := range room + 1 {
				fds = append(fds, socket(unix.AF_INET, unix.SOCK_STREAM, true, lo(port+i))(t)...)
			}
			return fds
		}, fmt.Sprintf("got %d (truncated: true)", room)},
		{"two that fit", true, func(t *testing.T) []int {
			return append(socket(unix.AF_INET, unix.SOCK_STREAM, true, lo(port))(t), socket(unix.AF_INET, unix.SOCK_STREAM, true, lo(port+1))(t)...)
		}, fmt.Sprintf("want one descriptor from the sandbox, got %d (truncated: %t)", min(2, room), room < 2)},
		{"no descriptor", false, func(t *testing.T) []int { return nil }, "got 0 (truncated: false)"},
		{"the agent's own namespace", false, socket(unix.AF_INET, unix.SOCK_STREAM, true, lo(0)), ""}, // port fixed below
		{"good", true, socket(unix.AF_INET, unix.SOCK_STREAM, true, lo(port)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in && os.Geteuid() != 0 {
				t.Skip("a network namespace of the test's own needs root here (TestHook covers the unprivileged agent)")
			}
			agent, child, err := Pair()
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			want, wantPort := tt.want, uint16(port)
			send := func() {
				defer child.Close()
				if tt.fds == nil {
					return
				}
				fds := tt.fds(t)
				defer closeAll(fds)
				var rights []byte
				if len(fds) > 0 {
					rights = unix.UnixRights(fds...)
				}
				if tt.name == "the agent's own namespace" {
					sa, _ := unix.Getsockname(fds[0])
					wantPort = uint16(sa.(*unix.SockaddrInet4).Port)
					want = "agent's own network namespace"
					if os.Geteuid() != 0 {
						want = "not one of the sandbox's"
					}
				}
				if err := unix.Sendmsg(int(child.Fd()), []byte{'L'}, rights, nil, 0); err != nil {
					t.Error(err)
				}
			}
			if tt.in {
				inNewNetns(t, send)
			} else {
				send()
			}
			l, err := ReceiveListener(context.Background(), agent, wantPort)
			if want == "" {
				if err != nil {
					t.Fatal(err)
				}
				l.Close()
				return
			}
			if !errors.Is(err, ErrHandoff) || !strings.Contains(err.Error(), want) {
				t.Errorf("ReceiveListener = %v, want ErrHandoff with %q", err, want)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		agent, child, err := Pair()
		if err != nil {
			t.Fatal(err)
		}
		defer agent.Close()
		defer child.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := ReceiveListener(ctx, agent, port); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ReceiveListener = %v, want the context's error", err)
		}
	})
}

// inNewNetns runs f on a thread moved to a new network namespace (with its
// loopback up), then moves the thread back.
func inNewNetns(t testing.TB, f func()) {
	t.Helper()
	ns := newNetns(t)
	if err := inNetns(ns, func() error { f(); return nil }); err != nil {
		t.Fatal(err)
	}
}

// newNetns makes a network namespace with its loopback up and returns a
// descriptor of it, closed when the test ends.
func newNetns(t testing.TB) int {
	t.Helper()
	fd := -1
	err := onThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return err
		}
		// ip runs as a child of this thread, in its namespace.
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return fmt.Errorf("ip link set lo up: %w: %s", err, out)
		}
		var err error
		fd, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		t.Fatalf("a network namespace: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// inNetns runs f on a thread that joins the network namespace ns and
// leaves it afterwards: the setns way (a) of making a socket in a
// sandbox's namespace, which needs CAP_SYS_ADMIN in the agent's user
// namespace and in the namespace's.
func inNetns(ns int, f func() error) error {
	return onThread(func() error {
		if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
			return err
		}
		return f()
	})
}

// onThread runs f on a locked thread, restoring the thread's network
// namespace after; a thread that cannot be restored is never reused (it
// exits with its goroutine).
func onThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(orig)
		err = f()
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// TestSetnsNeedsPrivilege documents why the hook exists: joining a
// sandbox's network namespace (way a) takes CAP_SYS_ADMIN in the agent's
// own user namespace, which an agent that is not root lacks, even over a
// namespace of its own user namespace's; and a multithreaded process (any
// Go program) may not join the user namespace first.
func TestSetnsNeedsPrivilege(t *testing.T) {
	if os.Getenv(hookChildEnv) == "" {
		if os.Geteuid() != 0 {
			t.Skip("needs root to start the unprivileged copy")
		}
		requireBwrap(t)
		bin := copyTestBinary(t)
		cmd := exec.Command(bin, "-test.run=^TestSetnsNeedsPrivilege$", "-test.v")
		cmd.Env = []string{"PATH=/usr/bin:/bin", hookChildEnv + "=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testNobody, Gid: testNobody}}
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("as uid %d: %v\n%s", testNobody, err, out)
		}
		return
	}
	// The unprivileged agent: a sandbox of its own, then setns.
	cmd := exec.Command(requireBwrap(t), "--unshare-user", "--unshare-net", "--ro-bind", "/", "/", "--", "sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	// bwrap's child is the sleeping sandbox.
	var ns string
	deadline := time.Now().Add(10 * time.Second)
	for ns == "" && time.Now().Before(deadline) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns = "/proc/" + f[0] + "/ns/"
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ns == "" {
		t.Fatal("no sandbox process")
	}
	errs := make(chan [2]error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var e [2]error
		for i, kind := range []struct {
			name string
			flag int
		}{{"net", unix.CLONE_NEWNET}, {"user", unix.CLONE_NEWUSER}} {
			fd, err := unix.Open(ns+kind.name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				e[i] = err
				continue
			}
			e[i] = unix.Setns(fd, kind.flag)
			unix.Close(fd)
		}
		errs <- e
	}()
	e := <-errs
	if !errors.Is(e[0], unix.EPERM) || !errors.Is(e[1], unix.EINVAL) {
		t.Fatalf("setns(net) = %v (want EPERM), setns(user) = %v (want EINVAL: multithreaded)", e[0], e[1])
	}
}

var _ = io.Discard
