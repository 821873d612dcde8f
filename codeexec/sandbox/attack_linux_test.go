package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
	"github.com/adkskills/adkskills/codeexec/local"
)

// The attacks of this file run as the root agent and, through
// TestSandboxUnprivilegedAgent (which reruns every TestSandbox*), as an
// unprivileged one.

// TestSandboxSeccomp: every call the filter denies answers ENOSYS inside
// the sandbox, and answers something else (the kernel's own answer) in the
// same sandbox without the filter: each is a test the filter alone passes.
// Calls this kernel does not have at all answer ENOSYS either way and are
// only logged.
func TestSandboxSeccomp(t *testing.T) {
	requireSandbox(t)
	info, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	nrs := map[string]int{"clone": info.SyscallNames["clone"]}
	for _, n := range deniedSyscalls {
		if nr, ok := info.SyscallNames[n]; ok {
			nrs[n] = nr
		}
	}
	arg, _ := json.Marshal(nrs)
	run := func(s *Executor) map[string]int {
		res := codeexectest.MustRun(t, s, attack(t, "seccomp_attack.py", string(arg)))
		var got map[string]int
		decode(t, res, &got)
		return got
	}
	filtered := run(New())
	open := New()
	open.noFilter = true
	unfiltered := run(open)
	var absent []string
	for name := range nrs {
		if unfiltered[name] == int(unix.ENOSYS) {
			absent = append(absent, name)
			continue
		}
		if filtered[name] != int(deniedErrno) {
			t.Errorf("%s: %v inside the sandbox, want %v from the filter (without it: %v)",
				name, syscall.Errno(filtered[name]), deniedErrno, syscall.Errno(unfiltered[name]))
		}
	}
	slices.Sort(absent)
	t.Logf("not in this kernel (ENOSYS with and without the filter): %v", absent)
	if len(absent) > len(nrs)/3 {
		t.Errorf("%d of %d calls answer ENOSYS without the filter too: the control run is not the kernel's", len(absent), len(nrs))
	}
}

// TestSandboxSeccompSparesOrdinaryCalls: what scripts do every day still
// works under the filter: threads (clone3 falls back to clone), processes,
// subprocess pipes.
func TestSandboxSeccompSparesOrdinaryCalls(t *testing.T) {
	requireSandbox(t)
	src := `import subprocess, threading, os
t = threading.Thread(target=lambda: None); t.start(); t.join()
print(subprocess.run(["sh", "-c", "echo child"], capture_output=True, text=True).stdout.strip())
pid = os.fork()
if pid == 0:
    os._exit(7)
print(os.waitpid(pid, 0)[1] >> 8)
`
	res := codeexectest.MustRun(t, New(), codeexectest.Script("scripts/ok.py", src))
	if res.ExitCode != 0 || res.Stdout.Text != "child\n7\n" {
		t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
}

// TestSandboxDescriptors: a descriptor the agent inherited without
// close-on-exec (a shell's `exec 7</secret`) reaches no script, under the
// sandbox or Local, and stays open in the agent. The control shows the
// descriptor does reach a plain child.
func TestSandboxDescriptors(t *testing.T) {
	requireSandbox(t)
	secret := filepath.Join(t.TempDir(), "agent-secret")
	if err := os.WriteFile(secret, []byte("the agent's secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(secret, syscall.O_RDONLY, 0) // no O_CLOEXEC: inherited
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	src, err := os.ReadFile(filepath.Join("testdata", "fd_attack.py"))
	if err != nil {
		t.Fatal(err)
	}

	control := exec.Command("python3", "-c", string(src))
	out, err := control.Output()
	if err != nil || !strings.Contains(string(out), "the agent's secret") {
		t.Fatalf("control: a plain child did not see the inherited descriptor %d: %s %v", fd, out, err)
	}
	// With an allowlist, the hook's descriptors (the handoff socket, the
	// agent's executable) reach no script either.
	for name, e := range map[string]codeexec.Executor{"Sandbox": New(), "SandboxEgress": New(WithEgress("127.0.0.1:1")), "Local": local.New()} {
		t.Run(name, func(t *testing.T) {
			res := codeexectest.MustRun(t, e, attack(t, "fd_attack.py"))
			var got map[string]any
			decode(t, res, &got)
			if len(got) != 0 {
				t.Errorf("the script holds descriptors beyond stdio: %v", got)
			}
		})
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		t.Errorf("the agent's descriptor %d was closed: %v", fd, err)
	}
}

// TestSandboxKillParent: a script that kills the helpers above it gets a
// normal result (its exit status, its output, its files), not "the sandbox
// is not available". It can kill the inner bubblewrap (its parent, which
// runs as the run's uid), and the run ends with it.
func TestSandboxKillParent(t *testing.T) {
	requireSandbox(t)
	res, err := New().Execute(context.Background(), attack(t, "kill_parent.sh"))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if !strings.HasPrefix(res.Stdout.Text, "before the kill\n") || len(res.Files) != 1 || res.Files[0].Path != "kept.txt" {
		t.Errorf("exit %d stdout %q files %v: want the output and the file written before the kill", res.ExitCode, res.Stdout.Text, codeexectest.Paths(res.Files))
	}
	if res.ExitCode < 128 {
		t.Errorf("exit %d, stdout %q: the run should end with the helpers the script killed", res.ExitCode, res.Stdout.Text)
	}
}

// TestSandboxNothingAliveAtCollection: when Execute returns, no process of
// the run is alive, not even busy background processes with stdio on
// /dev/null, and the file they wrote is the one collected.
func TestSandboxNothingAliveAtCollection(t *testing.T) {
	requireSandbox(t)
	const runs = 10
	e := New()
	for i := range runs {
		marker := hosttest.NewMarker(t)
		req := attack(t, "busy_leftovers.sh")
		req.Env = map[string]string{hosttest.MarkerVar: marker}
		res, _ := hosttest.RunBounded(t, e, req, 0, marker)
		if alive := hosttest.MarkedProcesses(marker); len(alive) > 0 {
			t.Fatalf("run %d: processes of the run alive after Execute returned: %v", i, hosttest.Describe(alive))
		}
		if res.Stdout.Text != "started\n" || len(res.Files) != 1 || res.Files[0].Path != "busy.txt" {
			t.Fatalf("run %d: stdout %q files %v", i, res.Stdout.Text, codeexectest.Paths(res.Files))
		}
	}
}

// TestSandboxHidesHostPaths: nothing a script can read in /proc (command
// lines, environments) names the host path of its workspace.
func TestSandboxHidesHostPaths(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	res := codeexectest.MustRun(t, New(WithWorkspaceDir(dir)), attack(t, "proc_view.py"))
	var seen map[string]string
	decode(t, res, &seen)
	if len(seen) == 0 {
		t.Fatal("the script saw no process at all")
	}
	for k, v := range seen {
		if strings.Contains(v, dir) || strings.Contains(v, host.WorkspacePrefix) {
			t.Errorf("%s names a host path: %q", k, v)
		}
	}
}

// TestSandboxReadOnlyPaths: paths are resolved when the sandbox is built,
// and what they resolve to decides; a path under /tmp is shown above the
// private /tmp.
func TestSandboxReadOnlyPaths(t *testing.T) {
	base, err := os.MkdirTemp("", "adkskills-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "table.csv"), []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workspaces := filepath.Join(base, "ws")
	if err := os.Mkdir(workspaces, 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"root": "/", "workspaces": workspaces, "base": base, "data": data}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, "link-"+name)); err != nil {
			t.Fatal(err)
		}
	}
	bad := map[string]string{
		"LinkToRoot":          filepath.Join(base, "link-root"),
		"LinkToWorkspaces":    filepath.Join(base, "link-workspaces"),
		"LinkAboveWorkspaces": filepath.Join(base, "link-base"),
		"Missing":             filepath.Join(base, "missing"),
		"Relative":            "data",
	}
	for name, p := range bad {
		t.Run(name, func(t *testing.T) {
			if err := New(WithWorkspaceDir(workspaces), WithReadOnlyPaths(p)).Err(); !errors.Is(err, codeexec.ErrInvalidConfig) {
				t.Errorf("WithReadOnlyPaths(%q): Err() = %v, want ErrInvalidConfig", p, err)
			}
		})
	}
	t.Run("UnderTmp", func(t *testing.T) {
		requireSandbox(t)
		if !strings.HasPrefix(data, "/tmp/") {
			t.Skipf("the temporary directory %s is not under /tmp", data)
		}
		s := New(WithWorkspaceDir(workspaces), WithReadOnlyPaths(filepath.Join(base, "link-data")))
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		src := fmt.Sprintf("cat %s/table.csv; touch %s/x 2>/dev/null && echo writable", filepath.Join(base, "link-data"), data)
		res := codeexectest.MustRun(t, s, codeexectest.Script("scripts/ro.sh", src))
		if res.Stdout.Text != "a,b\n" {
			t.Errorf("stdout %q stderr %q: want the file, read-only, at the path given and at its target", res.Stdout.Text, res.Stderr.Text)
		}
	})
}

// TestSandboxInterpreterUnderTmp: a virtual environment's interpreter
// under /tmp runs (its prefix is bound above the private /tmp).
func TestSandboxInterpreterUnderTmp(t *testing.T) {
	requireSandbox(t)
	dir, err := os.MkdirTemp("/tmp", "adkskills-venv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("python3 -m venv: %v: %s", err, out)
	}
	table := codeexec.Interpreters{{Language: "python", Extensions: []string{".py"}, Command: []string{filepath.Join(venv, "bin", "python")}}}
	res := codeexectest.MustRun(t, New(WithInterpreters(table)), codeexectest.Script("scripts/v.py", "import sys; print(sys.prefix)"))
	if res.ExitCode != 0 || strings.TrimSpace(res.Stdout.Text) != venv {
		t.Errorf("exit %d stdout %q stderr %q: want the venv's prefix %s", res.ExitCode, res.Stdout.Text, res.Stderr.Text, venv)
	}
}

// subreaperEnv marks the copy of the test binary TestNoZombiesWhenPID1
// runs as a child subreaper.
const subreaperEnv = "ADKSKILLS_SUBREAPER_CHILD"

// TestNoZombiesWhenPID1: an agent that is PID 1 of its container (here: a
// child subreaper, to which orphans go the same way) is left no zombie by
// the probe, sandboxed runs (ordinary, with leftovers, timed out) and Local
// runs whose background children are killed with the group.
func TestNoZombiesWhenPID1(t *testing.T) {
	if os.Getenv(subreaperEnv) == "" {
		if os.Getenv(sandboxChildEnv) != "" {
			t.Skip("covered by the root agent's run")
		}
		requireSandbox(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestNoZombiesWhenPID1$", "-test.v")
		cmd.Env = append(os.Environ(), subreaperEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestNoZombiesWhenPID1") {
			t.Fatalf("as a child subreaper: %v\n%s", err, out)
		}
		return
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	s := New()
	if err := s.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	timeout := attack(t, "busy_leftovers.sh")
	timeout.Skill = codeexectest.Skill(map[string]string{"scripts/t.sh": "sleep 300 & sleep 300"})
	timeout.Script = "scripts/t.sh"
	timeout.Limits.Timeout = 500 * time.Millisecond
	runs := []struct {
		e   codeexec.Executor
		req *codeexec.Request
	}{
		{s, codeexectest.Script("scripts/a.sh", "echo hi")},
		{s, attack(t, "busy_leftovers.sh")},
		{s, timeout},
		{local.New(), codeexectest.Script("scripts/bg.sh", "sleep 300 & (sleep 300 &) ; echo started")},
		{local.New(), codeexectest.Script("scripts/busy.sh", "nohup sh -c 'while :; do :; done' >/dev/null 2>&1 & exit 0")},
	}
	for _, r := range runs {
		codeexectest.MustRun(t, r.e, r.req)
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombies left to the agent: %v", hosttest.Describe(z))
	}
}

// zombieChildren lists this process's children that exited and were not
// reaped.
func zombieChildren() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(stat), ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[0] == "Z" && f[1] == fmt.Sprint(os.Getpid()) {
			var pid int
			fmt.Sscan(e.Name(), &pid)
			out = append(out, pid)
		}
	}
	return out
}

// agentChildEnv makes the test binary the agent TestAgentKilled kills:
// "local" or "sandbox"; agentDirEnv is its workspace directory.
const (
	agentChildEnv = "ADKSKILLS_AGENT_CHILD"
	agentDirEnv   = "ADKSKILLS_AGENT_DIR"
)

// agentScript marks its start and waits, with a background child in its
// process group.
const agentScript = "sleep 300 &\ntouch started\nsleep 300\n"

// TestAgentChild is the agent TestAgentKilled starts and kills.
func TestAgentChild(t *testing.T) {
	kind := os.Getenv(agentChildEnv)
	if kind == "" {
		t.Skip("runs only as the child of TestAgentKilled")
	}
	var e codeexec.Executor = local.New(local.WithWorkspaceDir(os.Getenv(agentDirEnv)))
	if kind == "sandbox" {
		e = New(WithWorkspaceDir(os.Getenv(agentDirEnv)))
	}
	req := codeexectest.Script("scripts/agent.sh", agentScript)
	req.Env = map[string]string{hosttest.MarkerVar: os.Getenv(hosttest.MarkerVar)}
	_, _ = e.Execute(context.Background(), req)
	t.Error("the run ended before the agent was killed")
}

// TestAgentKilled: when the agent dies by SIGKILL mid-run, its script dies
// with it, and the next start removes the dead run's workspace and kills
// what is left of its process group.
func TestAgentKilled(t *testing.T) {
	if os.Getenv(agentChildEnv) != "" {
		t.Skip("already the child")
	}
	kinds := []string{"local"}
	if New().Probe(context.Background()) == nil {
		kinds = append(kinds, "sandbox")
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			marker := hosttest.NewMarker(t)
			t.Cleanup(func() { hosttest.KillMarked(marker) })
			agent := exec.Command(os.Args[0], "-test.run=^TestAgentChild$")
			agent.Env = append(os.Environ(), agentChildEnv+"="+kind, agentDirEnv+"="+dir, hosttest.MarkerVar+"="+marker)
			if err := agent.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(hosttest.HardDeadline)
			for {
				if m, _ := filepath.Glob(filepath.Join(dir, host.WorkspacePrefix+"*", "w", codeexec.DefaultSkillName, "started")); len(m) > 0 {
					break
				}
				if time.Now().After(deadline) {
					agent.Process.Kill()
					t.Fatal("the agent's script never started")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := agent.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = agent.Wait()

			// The script itself dies with the agent; under the sandbox, so
			// does every process of the run.
			var left []int
			for deadline := time.Now().Add(hosttest.Grace); ; time.Sleep(20 * time.Millisecond) {
				left = hosttest.MarkedProcesses(marker)
				if scriptAlive := slices.ContainsFunc(left, isScriptLeader); !scriptAlive && (kind == "local" || len(left) == 0) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the agent's death: %v", hosttest.Describe(left))
				}
			}
			// The next start sweeps the directory.
			var next codeexec.Executor = local.New(local.WithWorkspaceDir(dir))
			if kind == "sandbox" {
				next = New(WithWorkspaceDir(dir))
			}
			codeexectest.MustRun(t, next, codeexectest.Script("scripts/a.sh", "echo next"))
			if alive := hosttest.Survivors(marker); len(alive) > 0 {
				t.Errorf("the dead run's processes survived the next start: %v", hosttest.Describe(alive))
			}
			if left := host.Leftovers(dir); len(left) > 0 {
				t.Errorf("the dead run's workspace is still there: %v", left)
			}
		})
	}
}

// isScriptLeader reports whether pid runs agentScript's own shell (not one
// of its sleeps).
func isScriptLeader(pid int) bool {
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.Contains(string(cmdline), "scripts/agent.sh")
}
