package sandbox

import (
	"context"
	"io/fs"
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

// otherUID is a host user that is neither the agent nor the sandbox user.
const otherUID = 1234

// sharedWorkspaceScript opens its workspace to everyone, says so in a file
// named "ready", and waits (at most a minute) for the host to create "go".
const sharedWorkspaceScript = `chmod 0777 /workspace /workspace/skill
stat -c %a /workspace /workspace/skill
touch ready
i=0
until [ -e go ] || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done
`

// injectScript, run as otherUID with directories as arguments, tries to
// create injected.txt in each and prints those where it succeeded.
const injectScript = `for d; do (echo injected > "$d/injected.txt") 2>/dev/null && echo "$d"; done; exit 0`

// findFile returns the path of a regular file named name somewhere under
// dir (the workspaces of running runs, say), or "".
func findFile(dir, name string) string {
	found := ""
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == name && d.Type().IsRegular() {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// TestSandboxWorkspaceNotShared: whatever mode a sandboxed script gives its
// workspace, another host user cannot reach into it while the script runs,
// so nothing it plants comes back as an output file.
func TestSandboxWorkspaceNotShared(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another host user needs root")
	}
	requireSandbox(t)
	// A workspace directory every user can enter: only the workspace
	// itself may keep other users out.
	dir, err := os.MkdirTemp("", "adkskills-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	type outcome struct {
		res *codeexec.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		req := codeexectest.Script("scripts/share.sh", sharedWorkspaceScript)
		req.Limits.Timeout = hosttest.HardDeadline
		res, err := New(WithWorkspaceDir(dir)).Execute(context.Background(), req)
		done <- outcome{res, err}
	}()

	// Wait for the script to have opened its workspace.
	var skill string
	for deadline := time.Now().Add(hosttest.HardDeadline); skill == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the script never became ready")
		}
		if p := findFile(dir, "ready"); p != "" {
			skill = filepath.Dir(p)
		}
	}
	// Every directory of the run, as seen by root.
	var targets []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			targets = append(targets, p)
		}
		return nil
	})
	attacker := exec.Command("/bin/sh", append([]string{"-c", injectScript, "sh"}, targets...)...)
	attacker.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	out, err := attacker.CombinedOutput()
	if err != nil {
		t.Fatalf("the attacker as uid %d: %v: %s", otherUID, err, out)
	}
	if len(out) > 0 {
		t.Errorf("uid %d created files in the running workspace:\n%s", otherUID, out)
	}
	if err := os.WriteFile(filepath.Join(skill, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	// The premise: the script did open its workspace.
	if o.res.ExitCode != 0 || o.res.Stdout.Text != "777\n777\n" {
		t.Fatalf("exit %d stdout %q stderr %q; want the workspace opened (777 777)", o.res.ExitCode, o.res.Stdout.Text, o.res.Stderr.Text)
	}
	for _, f := range o.res.Files {
		if strings.HasSuffix(f.Path, "injected.txt") {
			t.Errorf("output file %s (%q) was planted by uid %d", f.Path, f.Data, otherUID)
		}
	}
	t.Logf("uid %d tried %d directories of the run: %s", otherUID, len(targets), strconv.Quote(strings.Join(targets, " ")))
}
