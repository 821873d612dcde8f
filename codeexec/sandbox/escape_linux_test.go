package sandbox

// Attacks on the Sandbox found by a cold review (an outsider with the
// README and the source). Each test FAILS on the code it was written
// against and passes once the hole is closed; the attack scripts are in
// testdata. Like every TestSandbox*, they run as the root agent and,
// through TestSandboxUnprivilegedAgent, as an unprivileged one.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// coldAgentEnv makes the test binary an agent that runs one attack script
// in a Sandbox and waits to be killed (see TestSandboxEscapeAgent);
// coldAgentDirEnv is its workspace directory.
const (
	coldAgentEnv    = "ADKSKILLS_COLD_AGENT"
	coldAgentDirEnv = "ADKSKILLS_COLD_AGENT_DIR"
)

// TestSandboxEscapeAgent is the agent the tests below start and kill:
// it runs testdata/$ADKSKILLS_COLD_AGENT under a Sandbox.
func TestSandboxEscapeAgent(t *testing.T) {
	name := os.Getenv(coldAgentEnv)
	if name == "" {
		t.Skip("runs only as the child of a cold attack")
	}
	e := New(WithWorkspaceDir(os.Getenv(coldAgentDirEnv)))
	req := attack(t, name)
	req.Limits.Timeout = 5 * time.Minute
	req.Env = map[string]string{hosttest.MarkerVar: os.Getenv(hosttest.MarkerVar)}
	_, _ = e.Execute(context.Background(), req)
	t.Error("the run ended before the agent was killed")
}

// startColdAgent starts an agent running the attack script name and waits
// until the script has touched "started" in its skill root. It returns the
// agent's command, its workspace directory, and the marker every process of
// the run carries.
func startColdAgent(t *testing.T, name string) (agent *exec.Cmd, dir, marker string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	marker = hosttest.NewMarker(t)
	t.Cleanup(func() { hosttest.KillMarked(marker) })
	agent = exec.Command(os.Args[0], "-test.run=^TestSandboxEscapeAgent$")
	agent.Env = append(os.Environ(), coldAgentEnv+"="+name, coldAgentDirEnv+"="+dir, hosttest.MarkerVar+"="+marker)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	for deadline := time.Now().Add(hosttest.HardDeadline); ; time.Sleep(10 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, host.WorkspacePrefix+"*", "w", codeexec.DefaultSkillName, "started")); len(m) > 0 {
			return agent, dir, marker
		}
		if time.Now().After(deadline) {
			t.Fatal("the attack script never started")
		}
	}
}

// TestSandboxInitHijack: a script must not outlive an agent
// killed by SIGKILL (README: everything a script started dies "when the
// agent dies (even by SIGKILL)"), nor the next start's sweep.
//
// Broken under an unprivileged agent: the script runs as the same uid, in
// the same user namespace and without capabilities, as bubblewrap's init
// (PID 1 of the run, dumpable), and no Yama policy is in the way, so it can
// write /proc/1/mem. init_hijack.py injects prctl(PR_SET_PDEATHSIG, 0) into
// the init; the agent's death then kills the outer bubblewrap but no longer
// the init, and the whole namespace (here a `sleep 300`) lives on as the
// agent's uid, which the next start's sweep does not find either (the
// hosttest.Survivors are in no process group it recorded and their cwd is not a
// host path under the workspace). Under a root agent the init is root's
// and the script's user namespace is a child of the init's: the attack
// fails with EACCES.
func TestSandboxInitHijack(t *testing.T) {
	requireSandbox(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the injected code is x86_64")
	}
	agent, dir, marker := startColdAgent(t, "init_hijack.py")
	if err := agent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	if left := hosttest.Survivors(marker); len(left) > 0 {
		t.Errorf("processes of the run outlived the agent's SIGKILL: %v", hosttest.Describe(left))
	}
	codeexectest.MustRun(t, New(WithWorkspaceDir(dir)), codeexectest.Script("scripts/a.sh", "echo next"))
	if left := hosttest.Survivors(marker); len(left) > 0 {
		t.Errorf("processes of the dead run survived the next start: %v", hosttest.Describe(left))
	}
}

// TestSandboxKeyring: nothing of the agent's keyring reaches a
// script (README: "nothing of the agent's: ... not its keyring").
//
// Broken under an unprivileged agent: the filter denies keyctl, add_key and
// request_key, but /proc/keys is a plain file. The script runs as the
// agent's uid, so every key of that uid with the default user-view
// permission is listed there with its description and payload size (here
// "adkskills-coldattack-api-key-<random>: 21"). Under a root agent the key
// is root's, whose uid has no mapping in the script's user namespace, and
// the kernel leaves it out.
func TestSandboxKeyring(t *testing.T) {
	requireSandbox(t)
	runtime.LockOSThread() // the session keyring is the calling thread's
	defer runtime.UnlockOSThread()
	desc := "adkskills-coldattack-api-key-" + hosttest.RandHex(4)
	id, err := unix.AddKey("user", desc, []byte("sk-live-the-agents-key"), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Skipf("cannot add a key to the session keyring: %v", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
	if b, _ := os.ReadFile("/proc/keys"); !strings.Contains(string(b), desc) {
		t.Fatalf("control: the agent itself does not see its key in /proc/keys:\n%s", b)
	}
	res := codeexectest.MustRun(t, New(), attack(t, "keyring_view.py"))
	var got map[string]string
	decode(t, res, &got)
	if strings.Contains(got["/proc/keys"], desc) {
		t.Errorf("the script sees the agent's key in /proc/keys:\n%s", got["/proc/keys"])
	}
}

// TestSandboxSeccompGaps: "every mount call ... and the rest of
// Docker's denylist answer ENOSYS" (README).
//
// Broken: the denylist leaves out calls Docker's default profile denies:
// personality with other personas than Docker's few (ADDR_NO_RANDOMIZE
// turns ASLR off for what the script runs next, an exploit's first step),
// and the NUMA memory-policy calls (get_mempolicy, set_mempolicy, mbind,
// move_pages, migrate_pages, set_mempolicy_home_node: CAP_SYS_NICE only in
// Docker). And open_tree_attr (Linux 6.15: open_tree plus mount_setattr) is
// a mount call that is not denied: on this 6.18 kernel it opens a tree
// (O_PATH), where open_tree answers ENOSYS. A denylist misses every call
// newer than it; an allowlist, or a default of ENOSYS above the highest
// number the filter knows, would not.
func TestSandboxSeccompGaps(t *testing.T) {
	requireSandbox(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the call numbers are x86_64's")
	}
	res := codeexectest.MustRun(t, New(), attack(t, "seccomp_gaps.py"))
	var got map[string]any
	decode(t, res, &got)
	names := slices.Sorted(maps.Keys(got))
	for _, name := range names {
		if name == "personality_after" {
			continue
		}
		if errno, _ := got[name].(float64); unix.Errno(errno) != deniedErrno {
			t.Errorf("%s: %v (0 = done), want %v from the filter", name, unix.Errno(errno), deniedErrno)
		}
	}
	if p := got["personality_after"]; p != "00000000" {
		t.Errorf("the script changed its personality to %v (0x0040000: ASLR off)", p)
	}
}

// TestSandboxHugeFolder: "however many entries and however deep
// a script nests its folders, the walk, the Result and the model's
// response stay bounded" (collect.go), output files are read "within
// count, size and depth limits" (README).
//
// Broken: the walk counts entries (MaxCollectedEntries) only after
// dirHandle.names has read the whole folder (Readdirnames(-1)) and sorted
// it. One folder of 300,000 hard links with 250-byte names (about 80 MB on
// disk, made in seconds) takes the agent's heap to well over 100 MiB, and it
// grows linearly: a minute of a script is a GiB of the agent's memory, per
// concurrent run. Reading names in batches and stopping at the entry limit
// (or at a per-folder cap) bounds it.
func TestSandboxHugeFolder(t *testing.T) {
	requireSandbox(t)
	if testing.Short() {
		t.Skip("writes a folder of 300,000 entries")
	}
	const entries = 300_000
	req := attack(t, "huge_folder.py", strconv.Itoa(entries))
	req.Limits.Timeout = 3 * time.Minute
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	res := codeexectest.MustRun(t, New(), req)
	close(stop)
	if res.Stdout.Text != fmt.Sprintf("made %d\n", entries) {
		t.Fatalf("the script did not make its folder: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	const bound = 100 << 20
	if grew := int64(peak.Load()) - int64(before.HeapInuse); grew > bound {
		t.Errorf("collecting one folder of %d entries took the agent's heap up by %d MiB (bound %d MiB): the walk's limits do not bound its memory",
			entries, grew>>20, bound>>20)
	}
}

// sharedUIDSnoop is what another host process of the sandbox user runs: it
// finds the run by its marker, then reads its environment and its output
// file and rewrites the file, through /proc/PID/root and /proc/PID/environ.
const sharedUIDSnoop = `for p in /proc/[0-9]*; do
    (tr '\0' '\n' < $p/environ) 2>/dev/null | grep -qx "$MARK" || continue
    tr '\0' '\n' < $p/environ | grep ADKSKILLS_COLDATTACK_SECRET
    cat $p/root/workspace/skill/result.txt &&
        echo "rewritten by another process of the sandbox user" > $p/root/workspace/skill/result.txt
    exit 0
done
echo "no process of the run found"
`

// TestSandboxSharedUID: "the part of each run's workspace the
// sandbox sees ... lies in a directory of the agent's, 0700 and never shown
// to the sandbox, so whatever modes a script gives its files, other host
// users cannot reach them" (Sandbox), and the operator's WithEnv values go
// to the script only.
//
// Broken under a root agent: every run's processes run as the host uid
// DefaultSandboxUID, nobody, which the host shares with whatever else runs
// as nobody (daemons, NFS-squashed access, other sandboxes, another
// deployment's unprivileged agent). Such a process may read /proc/PID of
// the run's helper bubblewrap (same uid, same user namespace) and, as the
// owner of the script's user namespace, of the script itself: it reads the
// run's environment (here an API key passed with WithEnv), and reaches the
// workspace through /proc/PID/root past the 0700 directory, where it reads
// the run's files and rewrites its output before the agent collects it. A
// uid of the run's own (a range reserved for the sandbox, one per run) would
// shut it out.
func TestSandboxSharedUID(t *testing.T) {
	requireSandbox(t)
	if !isRoot() {
		t.Skip("an unprivileged agent's scripts run as the agent's own uid")
	}
	const secret = "sk-coldattack-operator-key"
	dir := t.TempDir()
	marker := hosttest.NewMarker(t)
	req := attack(t, "shared_uid.sh")
	req.Env = map[string]string{hosttest.MarkerVar: marker}
	type outcome struct {
		res *codeexec.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		e := New(WithWorkspaceDir(dir), WithEnv(map[string]string{"ADKSKILLS_COLDATTACK_SECRET": secret}))
		res, err := e.Execute(context.Background(), req)
		done <- outcome{res, err}
	}()
	var skill string
	for deadline := time.Now().Add(hosttest.HardDeadline); skill == ""; time.Sleep(10 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, host.WorkspacePrefix+"*", "w", codeexec.DefaultSkillName, "started")); len(m) > 0 {
			skill = filepath.Dir(m[0])
		} else if time.Now().After(deadline) {
			t.Fatal("the script never started")
		}
	}
	uid, gid := testNobody, testNobody
	snoop := exec.Command("/bin/sh", "-c", sharedUIDSnoop)
	snoop.Dir = "/"
	snoop.Env = []string{"PATH=/usr/bin:/bin", "MARK=" + hosttest.MarkerVar + "=" + marker}
	snoop.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, _ := snoop.CombinedOutput()
	if err := os.WriteFile(filepath.Join(skill, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil {
		t.Fatalf("Execute: %v", o.err)
	}
	if strings.Contains(string(out), secret) {
		t.Errorf("another process of uid %d read the run's WithEnv secret:\n%s", uid, out)
	}
	if strings.Contains(string(out), "what the script wrote") {
		t.Errorf("another process of uid %d read the run's files through /proc/PID/root:\n%s", uid, out)
	}
	for _, f := range o.res.Files {
		if f.Path == "result.txt" && string(f.Data) != "what the script wrote\n" {
			t.Errorf("the agent collected a result.txt another process of uid %d rewrote: %q", uid, f.Data)
		}
	}
}

// TestSandboxVsock: "no network: only a private loopback"
// (README).
//
// Broken on every machine with a vsock transport (any VM with virtio-vsock:
// this Firecracker VM, cloud VMs, Kata): socket(AF_VSOCK) is allowed, and
// vsock ignores network namespaces, so --unshare-net does not isolate it;
// a script can reach the hypervisor's services (CID 2) and any vsock
// listener the host routes to. Docker's default profile refuses AF_VSOCK
// sockets for that reason; the filter could refuse socket(2) and
// socketpair(2) with argument 0 == AF_VSOCK (40). The test only creates the
// socket and connects nowhere.
func TestSandboxVsock(t *testing.T) {
	requireSandbox(t)
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Skipf("no vsock on this machine (%v): nothing to reach", err)
	}
	unix.Close(fd)
	res := codeexectest.MustRun(t, New(), attack(t, "vsock_attack.py"))
	var got map[string]any
	decode(t, res, &got)
	if got["socket"] == "created" {
		t.Errorf("the script opened an AF_VSOCK socket, which the network namespace does not isolate")
	}
}

// TestSandboxDeepTree: a run's workspace is "removed afterwards
// whatever happened" (README), and the next start removes what a dead
// agent left.
//
// Broken: the workspace is removed with os.RemoveAll, which recurses with
// an open descriptor per level. A script that nests more folders than the
// agent has descriptors left (5,000 here, under a soft limit of 4,096; a
// common hard limit is 20,000 to 1M, and Go raises the soft limit to it)
// makes the removal fail with EMFILE: the workspace stays on disk after
// Execute returns, the next start's sweep fails on it the same way, and
// while each removal runs, every open of every goroutine of the agent
// (other runs' pipes and files, its network) fails. Removing the tree
// without a descriptor per level (closing parents and reopening them by
// "..", or bounded-depth fts as rm -rf does) closes it.
func TestSandboxDeepTree(t *testing.T) {
	requireSandbox(t)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = min(lim.Cur, 4096)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	depth := int(low.Cur) + 1000
	dir := t.TempDir()
	t.Cleanup(func() { _ = exec.Command("rm", "-rf", dir).Run() }) // t.TempDir's own removal fails the same way
	res := codeexectest.MustRun(t, New(WithWorkspaceDir(dir)), attack(t, "deep_tree.py", strconv.Itoa(depth)))
	if res.Stdout.Text != fmt.Sprintf("depth %d\n", depth) {
		t.Fatalf("the script did not nest its folders: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, host.WorkspacePrefix+"*")); len(left) > 0 {
		t.Errorf("the run's workspace is still on disk after Execute returned: %v", left)
	}
}

// TestSandboxHostEnv: a request's Env "is added to the
// allowlisted environment" of the script; nothing of a request runs
// outside the sandbox.
//
// Broken: the run's whole environment, Env included, is the environment of
// the outer bubblewrap, which the agent starts on the host (as root under a
// root agent), and of setpriv and prlimit. Nothing filters the loader's
// variables, so Env {"LD_PRELOAD": lib} runs lib's constructor in that
// bubblewrap, on the host, before any namespace exists (and as root). The
// library needs a host path the agent can read: the snapshot cache's files
// have predictable paths (adkskills-cache-0-ro/<content key>/tree/...) that
// a skill's author can compute, so a skill that ships a library and a
// caller that lets Env through (an app exposing "environment variables" to
// its model) make host root. Starting bubblewrap with a fixed environment
// and giving the script its own (bwrap --setenv/--unsetenv, or env -i
// inside) closes it; the shipped tools set no Env.
func TestSandboxHostEnv(t *testing.T) {
	requireSandbox(t)
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed: cannot build the library")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "preload.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, filepath.Join("testdata", "preload.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	mark := filepath.Join(dir, "mark")
	req := codeexectest.Script("scripts/hi.sh", "echo hi")
	req.Env = map[string]string{"LD_PRELOAD": lib, "COLDATTACK_MARK": mark}
	res := codeexectest.MustRun(t, New(), req)
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("a library named by the request's Env ran outside the sandbox (agent uid %d):\n%s(script: exit %d, stdout %q)",
			os.Geteuid(), b, res.ExitCode, res.Stdout.Text)
	}
}

// TestSandboxUevents: "no network: only a private loopback"
// (README); nothing of the host's reaches a script.
//
// Broken under a root agent: the run's network namespace is created by the
// privileged outer bubblewrap, so it belongs to the initial user namespace,
// and the kernel broadcasts its uevents to it. An unprivileged
// NETLINK_KOBJECT_UEVENT socket in the sandbox receives the host's device
// events (here a synthetic "change" of /dev/null the test triggers; on a
// real host disks, USB devices, modules, network interfaces): a channel from
// the host into every run. Under an unprivileged agent the namespace
// belongs to the run's user namespace and gets none. Unsharing the network
// in the inner, unprivileged bubblewrap would do the same for root.
func TestSandboxUevents(t *testing.T) {
	requireSandbox(t)
	const trigger = "/sys/class/mem/null/uevent"
	if err := os.WriteFile(trigger, []byte("change"), 0); err != nil {
		t.Skipf("cannot trigger a uevent here: %v", err)
	}
	dir := t.TempDir()
	type outcome struct {
		res *codeexec.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := New(WithWorkspaceDir(dir)).Execute(context.Background(), attack(t, "uevent_listen.py"))
		done <- outcome{res, err}
	}()
	for deadline := time.Now().Add(hosttest.HardDeadline); ; time.Sleep(10 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, host.WorkspacePrefix+"*", "w", codeexec.DefaultSkillName, "started")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the script never started")
		}
	}
	for range 10 {
		_ = os.WriteFile(trigger, []byte("change"), 0)
		time.Sleep(100 * time.Millisecond)
	}
	o := <-done
	if o.err != nil {
		t.Fatalf("Execute: %v", o.err)
	}
	var got []string
	decode(t, o.res, &got)
	if len(got) > 0 {
		t.Errorf("the script received the host's uevents: %q", got)
	}
}
