package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hostsuite"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// sandboxChildEnv marks the copy of this test binary that
// TestSandboxUnprivilegedAgent runs as an unprivileged user.
const sandboxChildEnv = "ADKSKILLS_SANDBOX_TEST_CHILD"

// requireSandbox skips the test when bubblewrap is not installed, and fails
// it when bubblewrap is installed but the sandbox does not work here.
func requireSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed, so the Sandbox cannot be tested here: apt-get install bubblewrap")
	}
	if err := New().Probe(context.Background()); err != nil {
		t.Fatalf("bubblewrap is installed but the sandbox does not work: %v", err)
	}
}

// newSandbox builds an Executor with the host suite's options.
func newSandbox(o hostsuite.Options) codeexec.Executor {
	var opts []Option
	if o.Env != nil {
		opts = append(opts, WithEnv(o.Env))
	}
	if o.PassEnv != nil {
		opts = append(opts, WithPassEnv(o.PassEnv...))
	}
	if o.WaitDelay != 0 {
		opts = append(opts, WithWaitDelay(o.WaitDelay))
	}
	if o.WorkspaceDir != "" {
		opts = append(opts, WithWorkspaceDir(o.WorkspaceDir))
	}
	if o.MemoryLimit != 0 {
		opts = append(opts, WithMemoryLimit(o.MemoryLimit))
	}
	if o.DependencyStore != "" {
		opts = append(opts, WithDependencyStore(o.DependencyStore, 0))
	}
	if o.NoInstall {
		opts = append(opts, WithDependencies(false))
	}
	return New(opts...)
}

// runUserOK reports whether uid:gid, seen from the host, is who a
// sandboxed script must be: under a root agent a uid of the default range
// (and the gid of the same number), otherwise the agent itself.
func runUserOK(uid, gid int) bool {
	if os.Geteuid() == 0 {
		return uid >= DefaultFirstUID && uid < DefaultFirstUID+DefaultUIDCount && gid == uid
	}
	return uid == os.Geteuid() && gid == os.Getegid()
}

// testNobody is the unprivileged user the tests start agents and other
// host processes as.
const testNobody = 65534

// attack is a request running the attack script testdata/name.
func attack(t *testing.T, name string, args ...string) *codeexec.Request {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return &codeexec.Request{
		Skill:  codeexectest.Skill(map[string]string{"scripts/" + name: string(src)}),
		Script: "scripts/" + name,
		Args:   args,
		Limits: codeexec.Limits{Timeout: time.Minute},
	}
}

// decode unmarshals a run's stdout, failing the test with the run's output.
func decode(t *testing.T, res *codeexec.Result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(res.Stdout.Text), v); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", res.ExitCode, res.Stdout.Text, res.Stderr.Text, err)
	}
}

func TestSandboxHost(t *testing.T) {
	requireSandbox(t)
	hostsuite.RunSuite(t, newSandbox)
}

// TestSandboxUnprivilegedAgent runs the Sandbox tests again in a copy of
// this test binary started as an unprivileged user: the single,
// unprivileged bubblewrap path that serves agents not running as root.
func TestSandboxUnprivilegedAgent(t *testing.T) {
	switch {
	case os.Getenv(sandboxChildEnv) != "":
		t.Skip("already the unprivileged copy")
	case os.Geteuid() != 0:
		t.Skip("the agent is not root: the other Sandbox tests already run unprivileged")
	}
	requireSandbox(t)
	uid, gid := testNobody, testNobody
	dir, err := os.MkdirTemp("", "adkskills-sandbox-child-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	for _, d := range []string{home, filepath.Join(home, "tmp")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "codeexec.test")
	copyFile(t, os.Args[0], bin, 0o755)

	args := []string{"-test.run=^TestSandbox", "-test.timeout=10m"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + filepath.Join(home, "tmp"),
		sandboxChildEnv + "=1",
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("the Sandbox tests as uid %d: %v\n%s", uid, err, out)
	}
	if testing.Verbose() {
		t.Logf("the Sandbox tests as uid %d:\n%s", uid, out)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// hostIPv4 is a non-loopback IPv4 address of this host, or "".
func hostIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

func TestSandboxNetwork(t *testing.T) {
	requireSandbox(t)
	var accepted atomic.Int32
	listen := func(network, addr string) string {
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		return ln.Addr().String()
	}
	loopback := listen("tcp", "127.0.0.1:0")
	targets := []string{loopback, listen("unix", "@adkskills-test-"+hosttest.RandHex(8))}
	if ip := hostIPv4(); ip != "" {
		targets = append(targets, listen("tcp", ip+":0"))
	}
	tests := []struct {
		name string
		opts []Option
		// reachable: the control. With the network on, the same attack
		// reaches the host: the test can tell.
		reachable bool
	}{
		{"Off", nil, false},
		{"OnControl", []Option{WithNetwork(true)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := accepted.Load()
			res := codeexectest.MustRun(t, New(tt.opts...), attack(t, "net_attack.py", targets...))
			var got struct {
				Interfaces []string
				Targets    map[string]string
			}
			decode(t, res, &got)
			n := accepted.Load() - before
			if tt.reachable {
				if got.Targets[loopback] != "connected" || n == 0 {
					t.Errorf("control: %s: %q, %d connections accepted; want connected", loopback, got.Targets[loopback], n)
				}
				return
			}
			if !slices.Equal(got.Interfaces, []string{"lo"}) {
				t.Errorf("interfaces %v, want only [lo]", got.Interfaces)
			}
			for _, target := range targets {
				if !strings.HasPrefix(got.Targets[target], "blocked") {
					t.Errorf("%s: %q, want blocked", target, got.Targets[target])
				}
			}
			if n != 0 {
				t.Errorf("the host's listeners accepted %d connections from the sandbox", n)
			}
		})
	}
}

// interpreterPrefixes are the installation directories of the python3 the
// executor runs, asked of the interpreter itself on the host.
func interpreterPrefixes(t *testing.T) []string {
	t.Helper()
	env := host.BuildEnv(host.Dirs{}, os.Getenv("PATH"), (&host.Config{}).EnvLayers()...)
	prefix, err := host.ResolveInterpreter([]string{"python3"}, env, "/")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(prefix[0], "-c", "import sys; print(sys.prefix); print(sys.base_prefix); print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}

func TestSandboxFilesystem(t *testing.T) {
	requireSandbox(t)
	secret := readableSecret(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(home, ".adkskills-sandbox-secret-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() { os.Remove(f.Name()) })
	// Everything in the agent's home must be invisible, except the way
	// to an interpreter installed there (pyenv), read-only.
	allowed := map[string]bool{}
	for _, p := range interpreterPrefixes(t) {
		if rel, err := filepath.Rel(home, p); err == nil && inDir(p, home) && p != home {
			allowed[filepath.Join(home, strings.Split(rel, "/")[0])] = true
		}
	}
	entries, _ := os.ReadDir(home)
	var homePaths []string
	for _, e := range entries {
		homePaths = append(homePaths, filepath.Join(home, e.Name()))
	}

	token := hosttest.RandHex(8)
	res := codeexectest.MustRun(t, New(), attack(t, "fs_attack.py", append([]string{token, secret, f.Name()}, homePaths...)...))
	var got struct {
		Read     map[string]string
		Exists   map[string]bool
		Writable []string
		Mounts   [][3]string // mount point, options, root
		Remount  map[string]string
		WriteEtc string `json:"write /etc"`
		WriteTmp string `json:"write /tmp"`
	}
	decode(t, res, &got)

	for _, p := range []string{secret, f.Name()} {
		if got.Exists[p] || !strings.HasPrefix(got.Read[p], "denied") {
			t.Errorf("%s: exists %v, read %q; want invisible", p, got.Exists[p], got.Read[p])
		}
	}
	for _, p := range homePaths {
		if got.Exists[p] && !allowed[p] {
			t.Errorf("%s of the agent's home is visible in the sandbox", p)
		}
	}
	// The mount table: nothing but the system, the interpreters, /proc,
	// /dev, the private /tmp and the workspace; all but /tmp, the workspace
	// and the kernel's read-only.
	prefixes := interpreterPrefixes(t)
	for _, m := range got.Mounts {
		point, opts := m[0], strings.Split(m[1], ",")
		switch {
		case point == "/tmp" || point == sandboxWorkspace || inDir(point, "/proc") || (inDir(point, "/dev") && point != "/dev"):
		case point == "/" || point == "/dev" || slices.Contains(systemDirs, point) || slices.Contains(prefixes, point):
			if !slices.Contains(opts, "ro") {
				t.Errorf("%s is mounted %s, want read-only", point, m[1])
			}
		default:
			t.Errorf("unexpected mount in the sandbox: %s (%s) from %s", point, m[1], m[2])
		}
	}
	// Only the workspace and the private /tmp are writable, and both are.
	for _, d := range got.Writable {
		if !inDir(d, sandboxWorkspace) && !inDir(d, "/tmp") && d != "/dev/shm" {
			t.Errorf("%s is writable", d)
		}
	}
	for _, d := range []string{"/tmp", "/dev/shm", sandboxWorkspace + "/" + codeexec.DefaultSkillName, sandboxWorkspace + "/" + host.HomeDirName, sandboxWorkspace + "/" + host.TmpDirName} {
		if !slices.Contains(got.Writable, d) {
			t.Errorf("%s is not writable (writable: %v)", d, got.Writable)
		}
	}
	checks := []struct {
		name, got, want string
	}{
		{"remount / rw", got.Remount["/"], "denied"},
		{"remount /usr rw", got.Remount["/usr"], "denied"},
		{"remount /etc rw", got.Remount["/etc"], "denied"},
		{"mount tmpfs on /etc", got.Remount["tmpfs on /etc"], "denied"},
		{"write /etc", got.WriteEtc, "denied"},
		{"write the private /tmp", got.WriteTmp, "ok"},
	}
	for _, c := range checks {
		if !strings.HasPrefix(c.got, c.want) {
			t.Errorf("%s: %q, want %s", c.name, c.got, c.want)
		}
	}
	for _, p := range []string{"/etc/adkskills-escape-" + token, "/tmp/adkskills-private-" + token, filepath.Join(os.TempDir(), "adkskills-private-"+token)} {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s appeared on the host", p)
		}
	}
}

// readableSecret writes a file every user may read, in a directory every
// user may enter: only the sandbox's mounts can hide it, not permissions.
func readableSecret(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "adkskills-secret-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("test secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	return secret
}

func TestSandboxPrivileges(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	marker := hosttest.NewMarker(t)
	req := attack(t, "priv_attack.py", "release")
	req.Env = map[string]string{hosttest.MarkerVar: marker}
	type outcome struct {
		res *codeexec.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := New(WithWorkspaceDir(dir)).Execute(context.Background(), req)
		done <- outcome{res, err}
	}()

	// From the host: the file the script wrote, and its processes.
	var owned string
	for deadline := time.Now().Add(hosttest.HardDeadline); owned == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		owned = findFile(dir, "owned-by.txt")
	}
	if owned == "" {
		o := <-done
		t.Fatalf("the script wrote no owned-by.txt: %v %+v", o.err, o.res)
	}
	fi, err := os.Lstat(owned)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if !runUserOK(int(st.Uid), int(st.Gid)) {
		t.Errorf("a file the script wrote is owned by %d:%d on the host", st.Uid, st.Gid)
	}
	wantUID, wantGID := int(st.Uid), int(st.Gid)
	var scripts int
	for _, pid := range hosttest.MarkedProcesses(marker) {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if !strings.HasPrefix(string(comm), "python") {
			continue // bubblewrap's own processes
		}
		scripts++
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") {
				want := strconv.Itoa(wantUID)
				if f[0] == "Gid:" {
					want = strconv.Itoa(wantGID)
				}
				if !slices.Equal(f[1:], []string{want, want, want, want}) {
					t.Errorf("the script's process %d, seen from the host: %s, want %s everywhere", pid, l, want)
				}
			}
		}
	}
	if scripts == 0 {
		t.Error("found no process of the script from the host")
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(owned), "release"), nil, 0o644); err != nil {
		t.Error(err)
	}
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	var got map[string]any
	decode(t, o.res, &got)
	const noCaps = "0000000000000000"
	tests := []struct{ key, want string }{
		{"CapInh", noCaps}, {"CapPrm", noCaps}, {"CapEff", noCaps}, {"CapBnd", noCaps}, {"CapAmb", noCaps},
		{"NoNewPrivs", "1"},
		{"setuid(0)", "denied"}, {"setgid(0)", "denied"},
		{"unshare(user)", "denied"}, {"unshare(mount)", "denied"}, {"unshare(net)", "denied"},
		{"chown to root", "denied"},
	}
	for _, tt := range tests {
		if s, _ := got[tt.key].(string); !strings.HasPrefix(s, tt.want) {
			t.Errorf("%s: %q, want %s", tt.key, s, tt.want)
		}
	}
}

func TestSandboxEnvironment(t *testing.T) {
	requireSandbox(t)
	secrets := map[string]string{
		"GOOGLE_API_KEY":        "AIza-sandbox-secret-" + hosttest.RandHex(4),
		"AWS_SECRET_ACCESS_KEY": "aws-sandbox-secret-" + hosttest.RandHex(4),
		"ADKSKILLS_HOST_ONLY":   "host-only-" + hosttest.RandHex(4),
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	res := codeexectest.MustRun(t, New(), attack(t, "env_attack.py"))
	var got struct {
		Env  map[string]string
		Proc map[string]string
	}
	decode(t, res, &got)
	// Exactly the allowlist, plus PWD (bubblewrap's --chdir sets it).
	want := []string{"PWD"}
	for _, kv := range host.BuildEnv(host.Dirs{}, "", (&host.Config{}).EnvLayers()...) {
		want = append(want, strings.SplitN(kv, "=", 2)[0])
	}
	var keys []string
	for k := range got.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("environment %v, want exactly %v", keys, want)
	}
	for name, secret := range secrets {
		for pid, environ := range got.Proc {
			if strings.Contains(environ, secret) {
				t.Errorf("%s is readable in /proc/%s/environ", name, pid)
			}
		}
	}
	// The workspace is seen at the sandbox's path, not the host's.
	for _, k := range []string{"HOME", "TMPDIR", "SKILL_DIR", "PYTHONPATH", "PWD"} {
		if !inDir(got.Env[k], sandboxWorkspace) {
			t.Errorf("%s=%s, want a path under %s", k, got.Env[k], sandboxWorkspace)
		}
	}
}

func TestSandboxLimits(t *testing.T) {
	requireSandbox(t)
	const (
		procs    = 16
		memory   = 256 << 20
		fileSize = 1 << 20
	)
	tests := []struct {
		name    string
		opt     Option
		req     *codeexec.Request
		timeout time.Duration
		check   func(t *testing.T, res *codeexec.Result)
	}{
		{"Processes", WithProcessLimit(procs), attack(t, "fork_storm.py", strconv.Itoa(4*procs)), time.Minute,
			func(t *testing.T, res *codeexec.Result) {
				var n int
				var errno string
				if _, err := fmt.Sscanf(res.Stdout.Text, "forked %d then %s", &n, &errno); err != nil || n >= procs || errno != "EAGAIN" {
					t.Errorf("stdout %q: want fewer than %d forks, then EAGAIN", res.Stdout.Text, procs)
				}
			}},
		{"Memory", WithMemoryLimit(memory), attack(t, "memory_hog.py", "32", strconv.Itoa(4*memory>>20)), time.Minute,
			func(t *testing.T, res *codeexec.Result) {
				if res.OutOfMemory { // the run's own cgroup bounds it
					if want := fmt.Sprintf("out of memory: the run used its %d MiB", memory>>20); res.ExitCode != 128+int(syscall.SIGKILL) || res.Note != want {
						t.Errorf("exit %d, note %q: want 137, %q", res.ExitCode, res.Note, want)
					}
					return
				}
				// No cgroup here: each process's address space is bounded.
				var n int
				if _, err := fmt.Sscanf(res.Stdout.Text, "MemoryError after %d MiB", &n); err != nil || n >= memory>>20 {
					t.Errorf("stdout %q, stderr %q: want a MemoryError before %d MiB, or out of memory", res.Stdout.Text, res.Stderr.Text, memory>>20)
				}
			}},
		{"CPU", WithCPULimit(time.Second), attack(t, "cpu_burn.py"), 15 * time.Second,
			func(t *testing.T, res *codeexec.Result) {
				if res.TimedOut || (res.ExitCode != 128+int(syscall.SIGXCPU) && res.ExitCode != 128+int(syscall.SIGKILL)) {
					t.Errorf("exit %d, timed out %v after %v: want killed by SIGXCPU/SIGKILL before the timeout", res.ExitCode, res.TimedOut, res.Duration)
				}
			}},
		{"FileSize", WithFileSizeLimit(fileSize), attack(t, "file_size.py", strconv.Itoa(8*fileSize>>20)), time.Minute,
			func(t *testing.T, res *codeexec.Result) {
				if want := fmt.Sprintf("wrote %d bytes then EFBIG\n", fileSize); res.Stdout.Text != want {
					t.Errorf("stdout %q, stderr %q, want %q", res.Stdout.Text, res.Stderr.Text, want)
				}
				if len(res.Files) != 1 || len(res.Files[0].Data) != fileSize {
					t.Errorf("files %v: want big.bin of %d bytes", codeexectest.Paths(res.Files), fileSize)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := hosttest.NewMarker(t)
			tt.req.Limits.Timeout = tt.timeout
			tt.req.Env = map[string]string{hosttest.MarkerVar: marker}
			res, _ := hosttest.RunBounded(t, New(tt.opt), tt.req, 0, marker)
			tt.check(t, res)
			if pids := hosttest.Survivors(marker); len(pids) > 0 {
				t.Errorf("processes of the run survived it: %v", hosttest.Describe(pids))
			}
		})
	}
}

func TestSandboxProcessEscape(t *testing.T) {
	requireSandbox(t)
	tests := []struct {
		name     string
		exec     codeexec.Executor
		mode     string
		timeout  time.Duration
		timedOut bool
	}{
		{"ScriptExits", New(), "exit", time.Minute, false},
		{"Timeout", New(), "hang", time.Second, true},
	}
	t.Run("Control", func(t *testing.T) {
		// The script run as a plain process: its escapee survives, and
		// the test sees it.
		marker := hosttest.NewMarker(t)
		t.Cleanup(func() { hosttest.KillMarked(marker) })
		cmd := exec.Command("bash", filepath.Join("testdata", "setsid_escape.sh"), "exit")
		cmd.Env = append(os.Environ(), hosttest.MarkerVar+"="+marker)
		out, err := os.Create(filepath.Join(t.TempDir(), "out")) // the escapee keeps it open
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd.Stdout = out
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		if len(hosttest.Survivors(marker)) == 0 {
			t.Error("control: the escapee did not survive a plain run; the test cannot see escapees")
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := hosttest.NewMarker(t)
			req := attack(t, "setsid_escape.sh", tt.mode)
			req.Limits.Timeout = tt.timeout
			req.Env = map[string]string{hosttest.MarkerVar: marker}
			res, elapsed := hosttest.RunBounded(t, tt.exec, req, 0, marker)
			if res.TimedOut != tt.timedOut || res.Stdout.Text != "started\n" {
				t.Errorf("timed out %v, stdout %q (stderr %q), want %v, started", res.TimedOut, res.Stdout.Text, res.Stderr.Text, tt.timedOut)
			}
			if elapsed > tt.timeout+hosttest.Grace {
				t.Errorf("took %v", elapsed)
			}
			if pids := hosttest.Survivors(marker); len(pids) > 0 {
				t.Errorf("processes of the run survived it: %v", hosttest.Describe(pids))
			}
		})
	}
}

func TestSandboxOutputFiles(t *testing.T) {
	requireSandbox(t)
	secret := readableSecret(t)
	res := codeexectest.MustRun(t, New(), attack(t, "output_attack.py", secret, "/etc/passwd"))
	var links map[string]string
	decode(t, res, &links)
	for target, outcome := range links {
		if !strings.HasPrefix(outcome, "denied") {
			t.Errorf("hard link to %s: %q, want denied", target, outcome)
		}
	}
	if got := codeexectest.Paths(res.Files); !slices.Equal(got, []string{"real.txt"}) {
		t.Errorf("files %v, want [real.txt]", got)
	}
	omitted := map[string]string{}
	for _, o := range res.Omitted {
		omitted[o.Path] = o.Reason
	}
	for _, p := range []string{"root", "symlink-0", "symlink-1"} {
		if !strings.Contains(omitted[p], "symbolic link") {
			t.Errorf("omitted[%q] = %q, want a symbolic link left out", p, omitted[p])
		}
	}
}

func TestSandboxInterpreters(t *testing.T) {
	requireSandbox(t)
	env := host.BuildEnv(host.Dirs{}, os.Getenv("PATH"), (&host.Config{}).EnvLayers()...)
	python, err := host.ResolveInterpreter([]string{"python3"}, env, "/")
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	pyenvInHome := inDir(python[0], home)
	src := "import os, sys\nprint(sys.executable)\nprint(os.path.isdir(sys.prefix + '/lib'))\n"
	tests := []struct {
		name string
		req  *codeexec.Request
		want string
	}{
		// The interpreter runs at the path it has on the host, with its
		// installation visible (pyenv's lives in the agent's home).
		{"Python", codeexectest.Script("scripts/a.py", src), python[0] + "\nTrue\n"},
		// multiprocessing needs a writable /dev/shm.
		{"PythonMultiprocessing", codeexectest.Script("scripts/mp.py", "import multiprocessing as mp\nif __name__ == '__main__':\n    with mp.Pool(2) as p:\n        print(p.map(abs, [-1, -2]))\n"), "[1, 2]\n"},
		// A bash script that calls python3 gets the executor's python3.
		{"PythonFromBash", codeexectest.Script("scripts/a.sh", "python3 -c 'import sys; print(sys.executable)'"), python[0] + "\n"},
		// An interpreter staged with the skill runs from the workspace.
		{"StagedInterpreter", &codeexec.Request{
			Files: []codeexec.File{
				{Path: "bin/run", Data: []byte("#!/bin/sh\necho staged \"$@\"\n"), Mode: 0o755},
				{Path: "scripts/x.txt", Data: []byte("")},
			},
			Script:      "scripts/x.txt",
			Interpreter: &codeexec.Interpreter{Language: "staged", Command: []string{"bin/run"}},
		}, "staged scripts/x.txt\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := codeexectest.MustRun(t, New(), tt.req)
			if res.ExitCode != 0 || res.Stdout.Text != tt.want {
				t.Errorf("exit %d, stdout %q, stderr %q; want %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text, tt.want)
			}
		})
	}
	if pyenvInHome {
		t.Logf("python3 is %s, inside the agent's home %s: only its installation is shown", python[0], home)
	}
}

func TestSandboxInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  Option
	}{
		{"NegativeTmpSize", WithTmpSize(-1)},
		{"RelativeReadOnlyPath", WithReadOnlyPaths("relative")},
		{"RootWritableOnlyPath", WithReadOnlyPaths("/")},
		{"RootUser", WithUser(0, 0)},
		{"EmptyBwrapPath", WithBwrapPath("")},
		{"SharedOption", WithWaitDelay(-time.Second)},
		{"EgressEntry", WithEgress("api.example.com")},
		{"EgressWildcardSuffix", WithEgress("*.com:443")},
		{"EgressWithNetwork", func(s *Executor) { WithEgress("api.example.com:443")(s); WithNetwork(true)(s) }},
		{"NetworkWithEgress", func(s *Executor) { WithNetwork(true)(s); WithEgress()(s) }},
		{"ReadOnlyPathOverHook", func(s *Executor) { WithEgress()(s); WithReadOnlyPaths("/run")(s) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.opt)
			_, err := s.Execute(context.Background(), codeexectest.Script("scripts/a.sh", "echo hi"))
			if !errors.Is(err, codeexec.ErrInvalidConfig) || !errors.Is(s.Err(), codeexec.ErrInvalidConfig) || !errors.Is(s.Probe(context.Background()), codeexec.ErrInvalidConfig) {
				t.Errorf("Execute: %v; Err: %v; Probe: %v; want ErrInvalidConfig from each", err, s.Err(), s.Probe(context.Background()))
			}
		})
	}
	t.Run("ReadOnlyPathHoldingWorkspaces", func(t *testing.T) {
		requireSandbox(t)
		dir := t.TempDir()
		_, err := New(WithWorkspaceDir(dir), WithReadOnlyPaths(dir)).Execute(context.Background(), codeexectest.Script("scripts/a.sh", "echo hi"))
		if !errors.Is(err, codeexec.ErrInvalidConfig) {
			t.Errorf("err = %v, want ErrInvalidConfig", err)
		}
	})
}

// fakeBwrap writes an executable stand-in for bubblewrap, in a directory
// every user can reach (the privileged path runs it again as the sandbox
// user).
func fakeBwrap(t *testing.T, body string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "adkskills-fake-bwrap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "bwrap")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSandboxFailsClosed(t *testing.T) {
	const version = `[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }` + "\n"
	tests := []struct {
		name  string
		bwrap string
		want  []string // in the error message
	}{
		{"BwrapMissing", filepath.Join(t.TempDir(), "no-such-bwrap"),
			[]string{"not found", "install bubblewrap", "apt-get install bubblewrap"}},
		{"TooOld", fakeBwrap(t, `echo "bubblewrap 0.6.1"`),
			[]string{"0.6.1", "too old", "0.8.0"}},
		// bubblewrap's own message when user namespaces are off.
		{"UserNamespacesDisabled", fakeBwrap(t, version+`echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1`),
			[]string{"could not start a sandbox", "No permissions to creating new namespace", "user namespaces", "user.max_user_namespaces"}},
		// A wrapper that runs the command without isolating it, and
		// without its prlimit: outside a user namespace, --nproc would
		// count every process of the agent's uid on the host, those of
		// the tests running beside this one (and their prepared
		// sandboxes) too, and the trial could not fork.
		{"DoesNotIsolate", fakeBwrap(t, version+`while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done; shift
case "$1" in */prlimit) while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done; shift;; esac
exec "$@"`),
			[]string{"did not isolate", "file system is not private"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(WithBwrapPath(tt.bwrap))
			err := s.Probe(context.Background())
			if !errors.Is(err, codeexec.ErrSandboxUnavailable) {
				t.Fatalf("Probe = %v, want ErrSandboxUnavailable", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Probe error %q does not say %q", err, w)
				}
			}
			// Execute fails the same way and never runs the script.
			proof := filepath.Join(t.TempDir(), "ran")
			res, err := s.Execute(context.Background(), codeexectest.Script("scripts/a.sh", "touch "+proof))
			if !errors.Is(err, codeexec.ErrSandboxUnavailable) || res != nil {
				t.Errorf("Execute = %v, %v; want nil, ErrSandboxUnavailable", res, err)
			}
			if _, err := os.Stat(proof); err == nil {
				t.Error("the script ran without the sandbox")
			}
		})
	}
}

// TestSandboxArgs pins the shape of the command line: the guards each
// attack test depends on are present.
func TestSandboxArgs(t *testing.T) {
	h := &sandboxHost{bwrap: "/usr/bin/bwrap", setpriv: "/usr/bin/setpriv", prlimit: "/usr/bin/prlimit",
		sys:       layout{dirs: []string{"/usr", "/etc"}, links: [][2]string{{"usr/bin", "/bin"}}},
		procMasks: []string{"/proc/keys", "/proc/key-users"}}
	binds := []bind{{src: "/data/py", dst: "/root/.pyenv/versions/3.11.7"}, {src: "/tmp/venv", dst: "/tmp/venv"}}
	argv := []string{"/root/.pyenv/versions/3.11.7/bin/python3", "scripts/a.py"}
	env := []string{"HOME=/workspace/.home", "LD_PRELOAD=/x.so", "PATH=/usr/bin"}
	perRun := runUser{uid: 59123, gid: 59123, insideUID: insideID, insideGID: insideID}
	const innerCommon = `--cap-drop ALL --die-with-parent --dev-bind / / ` +
		`--clearenv --setenv HOME /workspace/.home --setenv LD_PRELOAD /x.so --setenv PATH /usr/bin ` +
		`--json-status-fd 3 --seccomp 4 --chdir /workspace/skill$`
	tests := []struct {
		name         string
		root         bool
		user         runUser
		opts         []Option
		outer, inner string // regular expressions over the space-joined options
		rest         string
	}{
		{"RootDropsToTheRunsUID", true, perRun, nil,
			`^--unshare-pid --unshare-ipc --unshare-uts --hostname sandbox --unshare-cgroup-try --die-with-parent --new-session --info-fd 5 --unshare-net ` +
				`--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID --cap-add CAP_SETPCAP ` +
				`--ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin ` +
				`--proc /proc --ro-bind /dev/null /proc/keys --ro-bind /dev/null /proc/key-users --dev /dev --perms 0555 --tmpfs /dev/pts --bind /ws/.tmp /dev/shm --bind /ws/.tmp /tmp ` +
				`--perms 0755 --dir /root --perms 0755 --dir /root/.pyenv --perms 0755 --dir /root/.pyenv/versions --ro-bind /data/py /root/.pyenv/versions/3.11.7 --ro-bind /tmp/venv /tmp/venv ` +
				`--bind /ws /workspace --remount-ro / --remount-ro /dev --remount-ro /dev/pts$`,
			`^--unshare-user --disable-userns --uid 65534 --gid 65534 --unshare-net ` + innerCommon,
			`^-- /usr/bin/setpriv --reuid 59123 --regid 59123 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs ` +
				`-- /usr/bin/bwrap --args 7 ` +
				`-- /usr/bin/prlimit --core=0 --as=2147483648 --nproc=256 --fsize=134217728 --cpu=120 ` +
				`-- /root/.pyenv/versions/3.11.7/bin/python3 scripts/a.py$`},
		{"Unprivileged", false, runUser{}, nil,
			`^--unshare-user --cap-drop ALL --unshare-pid .* --info-fd 5 --unshare-net --ro-bind /usr /usr .* --remount-ro /dev/pts$`,
			`^--unshare-user --disable-userns --unshare-net ` + innerCommon,
			`^-- /usr/bin/bwrap --args 7 -- /usr/bin/prlimit .* -- /root/.pyenv/versions/3.11.7/bin/python3 scripts/a.py$`},
		{"TmpBeforeBindsUnderIt", true, perRun, nil, `--dev /dev .*--bind /ws/.tmp /tmp .*--ro-bind /tmp/venv /tmp/venv .*--bind /ws /workspace`, ``, ``},
		{"TmpfsBeforeBindsUnderIt", true, perRun, []Option{WithTmpSize(1 << 20)}, `--dev /dev .*--tmpfs /dev/shm .*--tmpfs /tmp .*--ro-bind /tmp/venv /tmp/venv .*--bind /ws /workspace`, ``, ``},
		{"NetworkOn", false, runUser{}, []Option{WithNetwork(true)}, ``, `^--unshare-user --disable-userns --cap-drop ALL `, ``},
		{"Egress", true, perRun, []Option{WithEgress("api.example.com:443")},
			` --unshare-net .*--bind /ws /workspace --perms 0755 --dir /run --perms 0755 --dir /run/adkskills --ro-bind-fd 9 /run/adkskills/egress-hook --remount-ro / `,
			`^--unshare-user --disable-userns --uid 65534 --gid 65534 --unshare-net ` + innerCommon,
			` --cpu=120 -- /run/adkskills/egress-hook -adkskills-egress-hook 8 3128 -- /root/.pyenv/versions/3.11.7/bin/python3 scripts/a.py$`},
		{"Limits", true, runUser{uid: 1000, gid: 1001, insideUID: 1000, insideGID: 1001},
			[]Option{WithMemoryLimit(-1), WithProcessLimit(7), WithFileSizeLimit(-1), WithCPULimit(1500 * time.Millisecond), WithTmpSize(1 << 20)},
			`--size 1048576 --tmpfs /dev/shm --perms 1777 --size 1048576 --tmpfs /tmp `, `^--unshare-user --disable-userns --uid 1000 --gid 1001 `,
			`--reuid 1000 --regid 1001 .* -- /usr/bin/prlimit --core=0 --nproc=7 --cpu=2 -- `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.root = tt.root
			a := New(tt.opts...).bwrapArgs(h, tt.user, "/ws", codeexec.DefaultSkillName, binds, env, argv, true, false)
			for _, c := range []struct {
				part string
				got  []string
				want string
			}{{"outer", a.outer, tt.outer}, {"inner", a.inner, tt.inner}, {"rest", a.rest, tt.rest}} {
				got := strings.Join(c.got, " ")
				if !regexp.MustCompile(c.want).MatchString(got) {
					t.Errorf("%s options\n%s\ndo not match\n%s", c.part, got, c.want)
				}
				if tt.name == "NetworkOn" && strings.Contains(got, "--unshare-net") {
					t.Errorf("WithNetwork(true): %s", got)
				}
				if c.part != "inner" && strings.Contains(got, "LD_PRELOAD") {
					t.Errorf("the environment reaches the %s bubblewrap: %s", c.part, got)
				}
			}
		})
	}
}

// TestSandboxSetupFails: when bubblewrap fails to set up a run's sandbox
// after a successful probe, Execute returns ErrSandboxUnavailable with
// bubblewrap's complaint, not a Result with exit code 1; a script that
// fails with the same words on stderr still gets its Result.
func TestSandboxSetupFails(t *testing.T) {
	requireSandbox(t)
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	const complaint = "bwrap: Can't find source path /nonexistent-adkskills-source"
	// Runs of a Sandbox probed with the real bubblewrap go through a
	// wrapper that makes the outer bubblewrap's setup fail.
	broken := fakeBwrap(t, `exec `+real+` --ro-bind /nonexistent-adkskills-source /nonexistent-adkskills-dest "$@"`+"\n")
	tests := []struct {
		name    string
		bwrap   string // "": the real one
		src     string
		wantErr bool
	}{
		{"SetupFails", broken, "touch ran", true},
		{"ScriptFailsAlike", "", "echo \"" + complaint + ": No such file or directory\" >&2; exit 1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			if err := s.Probe(context.Background()); err != nil {
				t.Fatal(err)
			}
			if tt.bwrap != "" {
				h := *s.state.host
				h.bwrap = tt.bwrap
				s.state.host = &h
			}
			res, err := s.Execute(context.Background(), codeexectest.Script("scripts/a.sh", tt.src))
			switch {
			case tt.wantErr && (!errors.Is(err, codeexec.ErrSandboxUnavailable) || !strings.Contains(err.Error(), complaint)):
				t.Errorf("Execute = %+v, %v; want ErrSandboxUnavailable saying %q", res, err, complaint)
			case !tt.wantErr && (err != nil || res.ExitCode != 1 || !strings.HasPrefix(res.Stderr.Text, complaint)):
				t.Errorf("Execute = %+v, %v; want the script's exit 1 and stderr", res, err)
			}
		})
	}
}

// TestSandboxDescribe: Describe names the bubblewrap a probe found and how
// runs are bounded here.
func TestSandboxDescribe(t *testing.T) {
	s := New()
	if got := s.Describe(); !strings.HasPrefix(got, "not probed yet; memory and processes: ") {
		t.Errorf("before a probe: %q", got)
	}
	requireSandbox(t)
	if err := s.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.Describe(); !strings.HasPrefix(got, "bubblewrap ") || !strings.Contains(got, "; memory and processes: ") {
		t.Errorf("after a probe: %q", got)
	}
}
