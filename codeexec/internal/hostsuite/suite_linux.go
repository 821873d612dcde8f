// Package hostsuite is the suite every host executor (codeexec/local,
// codeexec/sandbox) passes beyond codeexectest: what only the host sees and
// what the shared options change.
package hostsuite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// Options are the shared options the suite sets; zero fields are unset.
type Options struct {
	Env          map[string]string
	PassEnv      []string
	WaitDelay    time.Duration
	WorkspaceDir string
	MemoryLimit  int64
	// DependencyStore and NoInstall set WithDependencyStore and
	// WithDependencies(false).
	DependencyStore string
	NoInstall       bool
}

// NewExecutor builds the executor under test with the shared options.
type NewExecutor func(Options) codeexec.Executor

// RunSuite runs the tests every host executor passes beyond codeexectest:
// what only the host sees (the run's processes in /proc, its workspace)
// and what the shared options change.
func RunSuite(t *testing.T, newExec NewExecutor) {
	t.Run("OperatorEnvironment", func(t *testing.T) { testOperatorEnvironment(t, newExec) })
	t.Run("PassEnv", func(t *testing.T) { testPassEnv(t, newExec) })
	t.Run("ProcessTree", func(t *testing.T) { testProcessTree(t, newExec) })
	t.Run("WaitDelay", func(t *testing.T) { testWaitDelay(t, newExec) })
	t.Run("WorkspaceRemoved", func(t *testing.T) { testWorkspaceRemoved(t, newExec) })
	t.Run("ReplacedRoot", func(t *testing.T) { testReplacedRoot(t, newExec) })
	t.Run("MemoryBound", func(t *testing.T) { testMemoryBound(t, newExec) })
	t.Run("OOMScore", func(t *testing.T) { testOOMScore(t, newExec) })
	t.Run("Dependencies", func(t *testing.T) { testDependencies(t, newExec) })
	t.Run("ShippedFiles", func(t *testing.T) { testShippedFiles(t, newExec) })
}

func testOperatorEnvironment(t *testing.T, newExec NewExecutor) {
	src := `import os, json
print(json.dumps({k: os.environ.get(k) for k in ("EXTRA", "OPERATOR", "LANG")}))
`
	req := codeexectest.Script("scripts/env.py", src)
	req.Env = map[string]string{"EXTRA": "from request", "LANG": "en_US.UTF-8"}
	res := codeexectest.MustRun(t, newExec(Options{Env: map[string]string{"EXTRA": "from operator", "OPERATOR": "yes", "LANG": "C"}}), req)
	var got map[string]string
	if err := json.Unmarshal([]byte(res.Stdout.Text), &got); err != nil {
		t.Fatalf("stdout %q, stderr %q: %v", res.Stdout.Text, res.Stderr.Text, err)
	}
	want := map[string]string{"EXTRA": "from request", "OPERATOR": "yes", "LANG": "en_US.UTF-8"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("environment %v, want %v: WithEnv above the allowlist, the request above WithEnv", got, want)
	}
}

func testPassEnv(t *testing.T, newExec NewExecutor) {
	t.Setenv("GOOGLE_API_KEY", "AIza-test-secret-must-not-leak")
	t.Setenv("ADKSKILLS_PASSED", "passed")
	src := `import os
print(os.environ.get("GOOGLE_API_KEY", "absent"), os.environ.get("ADKSKILLS_PASSED", "absent"))
`
	res := codeexectest.MustRun(t, newExec(Options{PassEnv: []string{"ADKSKILLS_PASSED"}}), codeexectest.Script("scripts/pass.py", src))
	if want := "absent passed\n"; res.Stdout.Text != want {
		t.Errorf("stdout %q (stderr %q), want %q", res.Stdout.Text, res.Stderr.Text, want)
	}
}

// treeCase is a run whose process tree must be gone when Execute returns.
type treeCase struct {
	name     string
	src      string        // bash
	timeout  time.Duration // the request's
	cancelAt time.Duration // cancel the context after this; 0: never
	within   time.Duration // Execute must return within this
	timedOut bool
	exitCode int
}

func testProcessTree(t *testing.T, newExec NewExecutor) {
	const limit = time.Second
	killed := 128 + int(syscall.SIGKILL)
	sleep := fmt.Sprintf("sleep %d", hosttest.SleepSeconds)
	tests := []treeCase{
		// The script exits at once; its background child holds stdout.
		{name: "BackgroundChild", src: sleep + " &\necho started", timeout: time.Minute, within: hosttest.Grace},
		// Same, with the child's output sent elsewhere: nothing holds the
		// call, the child must still die with the run.
		{name: "DetachedChild", src: "nohup " + sleep + " >/dev/null 2>&1 &\necho started", timeout: time.Minute, within: hosttest.Grace},
		{name: "InfiniteLoop", src: "while :; do :; done", timeout: limit, within: limit + hosttest.Grace, timedOut: true, exitCode: killed},
		{name: "TrapsSIGTERM", src: "trap 'echo ignored' TERM\n" + sleep + " &\nwhile :; do sleep 0.1; done", timeout: limit, within: limit + hosttest.Grace, timedOut: true, exitCode: killed},
		{name: "Python", src: "python3 -c 'import subprocess, time; subprocess.Popen([\"sleep\", \"" + strconv.Itoa(hosttest.SleepSeconds) + "\"]); time.sleep(" + strconv.Itoa(hosttest.SleepSeconds) + ")'", timeout: limit, within: limit + hosttest.Grace, timedOut: true, exitCode: killed},
		// Cancelled well after a loaded machine has started the script
		// (a sandbox's chain can take most of a second under load).
		{name: "ContextCancelled", src: sleep + " &\nwait", timeout: time.Minute, cancelAt: 3 * limit, within: 3*limit + hosttest.Grace, timedOut: true, exitCode: killed},
	}
	// A WaitDelay longer than every bound: only the group kill can end
	// these runs in time.
	e := newExec(Options{WaitDelay: hosttest.HardDeadline / 2})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := hosttest.NewMarker(t)
			req := codeexectest.Script("scripts/tree.sh", tt.src)
			req.Limits.Timeout = tt.timeout
			req.Env = map[string]string{hosttest.MarkerVar: marker}
			res, elapsed := hosttest.RunBounded(t, e, req, tt.cancelAt, marker)
			if elapsed > tt.within {
				t.Errorf("Execute took %v, want within %v", elapsed, tt.within)
			}
			if res.TimedOut != tt.timedOut || res.ExitCode != tt.exitCode {
				t.Errorf("timed out %v exit %d, want %v %d (stderr %q)", res.TimedOut, res.ExitCode, tt.timedOut, tt.exitCode, res.Stderr.Text)
			}
			if pids := hosttest.Survivors(marker); len(pids) > 0 {
				t.Errorf("processes of the run survived it: %v", hosttest.Describe(pids))
			}
		})
	}
}

// testWaitDelay: a process that leaves the process group (setsid) escapes
// the group kill of a host executor; WaitDelay still stops it from holding
// the call open through the stdout it inherited. A background child that
// stayed in the group dies with the run.
func testWaitDelay(t *testing.T, newExec NewExecutor) {
	const delay = 300 * time.Millisecond
	marker := hosttest.NewMarker(t)
	req := codeexectest.Script("scripts/escape.sh", fmt.Sprintf("sleep %d &\n", hosttest.SleepSeconds)+hosttest.EscapeeScript)
	req.Env = map[string]string{hosttest.MarkerVar: marker}
	res, elapsed := hosttest.RunBounded(t, newExec(Options{WaitDelay: delay}), req, 0, marker)
	if elapsed > delay+hosttest.Grace {
		t.Errorf("Execute took %v, want within WaitDelay %v + %v", elapsed, delay, hosttest.Grace)
	}
	if res.ExitCode != 0 || res.Stdout.Text != "started\n" {
		t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	var inGroup []int
	for deadline := time.Now().Add(hosttest.Grace); ; time.Sleep(20 * time.Millisecond) {
		inGroup = slices.DeleteFunc(hosttest.MarkedProcesses(marker), sessionLeader)
		if len(inGroup) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(inGroup) > 0 {
		t.Errorf("processes that stayed in the run's group survived it: %v", hosttest.Describe(inGroup))
	}
}

// sessionLeader reports whether pid leads its own session (it called
// setsid), reading /proc/pid/stat.
func sessionLeader(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(stat, ')')
	if err != nil || i < 0 {
		return false
	}
	// After the command: state, ppid, pgrp, session.
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 3 && f[3] == strconv.Itoa(pid)
}

func testWorkspaceRemoved(t *testing.T, newExec NewExecutor) {
	const limit = 500 * time.Millisecond
	tests := []struct {
		name     string
		req      *codeexec.Request
		cancelAt time.Duration
		wantErr  error
	}{
		{name: "Success", req: codeexectest.Script("scripts/a.sh", "echo ok > out.txt")},
		{name: "Failure", req: codeexectest.Script("scripts/a.sh", "echo bad >&2; exit 1")},
		{name: "Timeout", req: &codeexec.Request{Skill: codeexectest.Skill(map[string]string{"scripts/a.sh": "sleep 60"}), Script: "scripts/a.sh", Limits: codeexec.Limits{Timeout: limit}}},
		{name: "Cancel", req: codeexectest.Script("scripts/a.sh", "sleep 60"), cancelAt: limit},
		{name: "ReadOnlyDirLeftBehind", req: codeexectest.Script("scripts/a.sh", "mkdir -p ro/sub && echo x > ro/sub/f && chmod 0 ro/sub ro")},
		// Passes validation, fails while staging: a name longer than NAME_MAX.
		{name: "StagingError", req: &codeexec.Request{Skill: codeexectest.Skill(map[string]string{"scripts/a.sh": "", "data/" + strings.Repeat("n", 300): ""}), Script: "scripts/a.sh"}, wantErr: codeexec.ErrWorkspace},
		{name: "StartError", req: &codeexec.Request{Skill: codeexectest.Skill(map[string]string{"scripts/a.sh": ""}), Script: "scripts/a.sh",
			Interpreter: &codeexec.Interpreter{Language: "x", Command: []string{"/nonexistent/interpreter"}}}, wantErr: codeexec.ErrStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			e := newExec(Options{WorkspaceDir: dir})
			ctx := context.Background()
			if p, ok := e.(interface{ Probe(context.Context) error }); ok {
				// Check the machine before the clock starts: the
				// cancellation is meant to hit the script, not the probe.
				if err := p.Probe(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if tt.cancelAt > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(tt.cancelAt, cancel)
				defer cancel()
			}
			_, err := e.Execute(ctx, tt.req)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if left := host.Leftovers(dir); len(left) != 0 {
				t.Errorf("workspace dir not empty after the run: %v", left)
			}
		})
	}
}

// testReplacedRoot: a script that swaps its working directory for a link or
// another folder gets nothing collected from either, and no extra file is
// reported deleted; the one omission says what happened without a host
// path.
func testReplacedRoot(t *testing.T, newExec NewExecutor) {
	e := newExec(Options{})
	secret := readableFile(t)
	tests := []struct{ name, src string }{
		{"LinkToHostFile", "cd ..; mv \"$OLDPWD\" moved; ln -s " + filepath.Dir(secret) + " \"$OLDPWD\"; echo done"},
		{"LinkToProcSelf", "cd ..; mv \"$OLDPWD\" moved; ln -s /proc/self \"$OLDPWD\""},
		{"OtherFolder", "cd ..; mv \"$OLDPWD\" moved; mkdir \"$OLDPWD\"; echo planted > \"$OLDPWD\"/planted.txt; echo out > moved/out.txt"},
		{"Removed", "cd ..; rm -rf \"$OLDPWD\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := codeexectest.Script("scripts/swap.sh", tt.src)
			req.Files = []codeexec.File{{Path: "in/input.txt", Data: []byte("an input")}}
			res := codeexectest.MustRun(t, e, req)
			if len(res.Deleted) != 0 {
				t.Errorf("deleted %q from a replaced skill root", res.Deleted)
			}
			if len(res.Files) != 0 {
				t.Errorf("files %v collected from a replaced skill root (stderr %q)", codeexectest.Paths(res.Files), res.Stderr.Text)
			}
			if len(res.Omitted) != 1 || res.Omitted[0].Path != "." || res.Omitted[0].Reason != host.ReasonReplaced {
				t.Errorf("omitted %+v, want the one entry %q", res.Omitted, host.ReasonReplaced)
			}
			for _, o := range res.Omitted {
				if strings.Contains(o.Reason, os.TempDir()) {
					t.Errorf("omitted reason %q names a host path", o.Reason)
				}
			}
		})
	}
}

// readableFile is a file of the test process outside any workspace, which a
// leaky collection would return.
func readableFile(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "agent-secret.txt")
	if err := os.WriteFile(p, []byte("the agent's secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
