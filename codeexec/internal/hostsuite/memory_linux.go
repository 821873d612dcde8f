package hostsuite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// The memory test's sizes: an agent under agentLimit runs a script that
// holds hogBytes in a memfd (pages no process maps, so no RSS and no
// RLIMIT_AS counts them) with a run bound of runLimit.
const (
	agentLimit = 384 << 20
	runLimit   = 128 << 20
	// agentBallast is what the agent itself holds, as a real one does (its
	// model client, its sessions): more than the script's RSS.
	agentBallast = 96 << 20
	hogBytes     = 2 * agentLimit
	// memoryAgentEnv makes the test binary the agent of testMemoryBound.
	memoryAgentEnv = "ADKSKILLS_MEMORY_AGENT"
	// agentResultPrefix starts the line the agent prints its result on.
	agentResultPrefix = "memory-agent-result: "
)

// memfdHog fills a memfd with argv[1] bytes, a MiB at a time.
const memfdHog = `import os, sys
fd = os.memfd_create("hog")
chunk = b"x" * (1 << 20)
for _ in range(int(sys.argv[1]) >> 20):
    os.write(fd, chunk)
print("the hog survived")
`

// testMemoryBound: an agent running under a memory limit (a container's, a
// systemd unit's) survives a script that holds more than that limit in a
// memfd: the run's own cgroup bounds it, the kernel kills the script, and
// the run answers out of memory. Without a run cgroup the OOM killer picks
// the agent, the biggest process that maps its memory.
func testMemoryBound(t *testing.T, newExec NewExecutor) {
	if os.Getenv(memoryAgentEnv) != "" {
		memoryAgent(t, newExec)
		return
	}
	parent, err := ownMemoryCgroup()
	if err != nil {
		t.Skipf("no memory cgroup the test can make children in: %v", err)
	}
	agentCg := filepath.Join(parent, "adkskills-test-agent-"+hosttest.RandHex(6))
	if err := os.Mkdir(agentCg, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup here: %v", err)
	}
	t.Cleanup(func() { removeCgroup(t, agentCg) })
	if err := os.WriteFile(filepath.Join(agentCg, "memory.limit_in_bytes"), []byte(strconv.Itoa(agentLimit)), 0); err != nil {
		t.Fatal(err)
	}
	names := strings.Split(t.Name(), "/")
	for i, n := range names {
		names[i] = "^" + n + "$"
	}
	agent := exec.Command(os.Args[0], "-test.run="+strings.Join(names, "/"), "-test.v")
	agent.Env = append(os.Environ(), memoryAgentEnv+"=1")
	var out bytes.Buffer
	agent.Stdout, agent.Stderr = &out, &out
	// The agent joins its cgroup before it runs the script: it waits on
	// stdin until then.
	stdin, err := agent.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agentCg, "cgroup.procs"), []byte(strconv.Itoa(agent.Process.Pid)), 0); err != nil {
		_ = agent.Process.Kill()
		t.Fatal(err)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- agent.Wait() }()
	select {
	case err = <-done:
	case <-time.After(4 * hosttest.HardDeadline):
		_ = agent.Process.Kill()
		t.Fatalf("the agent did not finish:\n%s", out.String())
	}
	if ws, ok := agent.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the agent died by %v: the script's memory was charged to it\n%s", ws.Signal(), out.String())
	}
	if err != nil {
		t.Fatalf("agent: %v\n%s", err, out.String())
	}
	var res codeexec.Result
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, agentResultPrefix); ok {
			if err := json.Unmarshal([]byte(v), &res); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := fmt.Sprintf("out of memory: the run used its %d MiB", runLimit>>20)
	if !res.OutOfMemory || res.ExitCode != 128+int(syscall.SIGKILL) || res.Note != want || strings.Contains(res.Stdout.Text, "survived") {
		t.Errorf("result: out of memory %v, exit %d, note %q, stdout %q; want true, 137, %q\n%s", res.OutOfMemory, res.ExitCode, res.Note, res.Stdout.Text, want, out.String())
	}
}

// memoryAgent is the agent's side: it waits until it is in its cgroup, runs
// the hog with the run bound, and prints the result.
func memoryAgent(t *testing.T, newExec NewExecutor) {
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // EOF once the parent moved it
	ballast := make([]byte, agentBallast)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	defer func() { _ = ballast[len(ballast)-1] }()
	req := codeexectest.Script("scripts/hog.py", memfdHog)
	req.Args = []string{strconv.Itoa(hogBytes)}
	res := codeexectest.MustRun(t, newExec(Options{MemoryLimit: runLimit}), req)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(agentResultPrefix + string(b))
}

// ownMemoryCgroup is the directory of this process's cgroup in a cgroup v1
// memory hierarchy mounted at /sys/fs/cgroup/memory.
func ownMemoryCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.Contains(","+parts[1]+",", ",memory,") {
			dir := filepath.Join("/sys/fs/cgroup/memory", parts[2])
			if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err != nil {
				return "", err
			}
			return dir, nil
		}
	}
	return "", fmt.Errorf("no cgroup v1 memory controller")
}

// removeCgroup kills what is left in the cgroup dir and below and removes
// them.
func removeCgroup(t *testing.T, dir string) {
	subs, _ := filepath.Glob(filepath.Join(dir, "*", "cgroup.procs"))
	for _, s := range subs {
		removeCgroup(t, filepath.Dir(s))
	}
	for deadline := time.Now().Add(hosttest.Grace); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		err := syscall.Rmdir(dir)
		if err == nil || os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("cgroup %s not removed: %v", dir, err)
			return
		}
	}
}
