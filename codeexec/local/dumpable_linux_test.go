package local

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// The agent TestAgentEnvironmentHidden starts as an unprivileged user.
const (
	dumpChildEnv = "ADKSKILLS_DUMP_CHILD" // "default" or "dumpable"
	dumpSecret   = "ADKSKILLS_AGENT_SECRET"
	secretValue  = "sk-test-0123456789"
	// nobody is the unprivileged user the agent runs as.
	nobody = 65534
)

// readAgentEnv prints whether it could read its parent's (the agent's)
// environment and whether the secret was in it.
const readAgentEnv = `import os
try:
    env = open("/proc/%d/environ" % os.getppid(), "rb").read()
    print("read", b"` + secretValue + `" in env)
except OSError as e:
    print("refused", e.errno)
`

// TestAgentEnvironmentHidden: a Local script runs as the agent's own user,
// so it could read the agent's environment (its API keys) through /proc;
// a non-root agent makes itself undumpable at its first run, and the
// script cannot. WithDumpableAgent(true) is the control: the secret is
// readable there.
func TestAgentEnvironmentHidden(t *testing.T) {
	if os.Getenv(dumpChildEnv) != "" {
		t.Skip("the agent's side: TestAgentEnvironmentChild")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to start the agent as an unprivileged user")
	}
	dir, err := os.MkdirTemp("", "adkskills-dump-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "local.test")
	in, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(out, in)
		err = errors.Join(err, out.Close())
	}
	in.Close()
	if err != nil {
		t.Fatal(err)
	}
	for mode, want := range map[string]string{"default": "refused 13", "dumpable": "read True"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(bin, "-test.run=^TestAgentEnvironmentChild$", "-test.v")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "HOME=" + tmp, dumpChildEnv + "=" + mode, dumpSecret + "=" + secretValue}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
			b, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(b), "SCRIPT: "+want+"\n") {
				t.Errorf("agent %s: %v; want the script to print %q:\n%s", mode, err, want, b)
			}
		})
	}
}

// TestAgentEnvironmentChild is the unprivileged agent: it runs
// readAgentEnv with Local and prints what the script printed.
func TestAgentEnvironmentChild(t *testing.T) {
	mode := os.Getenv(dumpChildEnv)
	if mode == "" {
		t.Skip("runs only as the child of TestAgentEnvironmentHidden")
	}
	res := codeexectest.MustRun(t, New(WithDumpableAgent(mode == "dumpable")), codeexectest.Script("scripts/read.py", readAgentEnv))
	t.Logf("stderr: %s", res.Stderr.Text)
	os.Stdout.WriteString("SCRIPT: " + res.Stdout.Text)
}
