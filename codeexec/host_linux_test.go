package codeexec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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
)

// This file is what every host executor (Local, Sandbox) must do beyond
// the black-box suite in codeexectest: what only the host can see (the
// run's processes in /proc, its workspace directory) and what the shared
// options change (WithEnv, WithPassEnv, WithWaitDelay, WithWorkspaceDir).
// Local and Sandbox run it with runHostSuite.

// newExecutorFunc builds the executor under test with the shared options.
type newExecutorFunc func(opts ...Option) Executor

// markerVar is the environment variable that tags every process of a test
// run, so the test can find survivors in /proc.
const markerVar = "ADKSKILLS_TEST_RUN"

// grace is how long past its limit a killed run may take to return on a
// contended machine (a loaded CI runner starting six sandboxes at once takes
// seconds). A broken kill makes the run last sleepSeconds, or until a test
// gives up at hardDeadline: both far past it.
const (
	grace        = 10 * time.Second
	sleepSeconds = 300
	hardDeadline = 30 * time.Second // a test gives up on a run after this
)

// runHostSuite runs the host executor tests against newExec.
func runHostSuite(t *testing.T, newExec newExecutorFunc) {
	t.Run("OperatorEnvironment", func(t *testing.T) { testOperatorEnvironment(t, newExec) })
	t.Run("PassEnv", func(t *testing.T) { testPassEnv(t, newExec) })
	t.Run("ProcessTree", func(t *testing.T) { testProcessTree(t, newExec) })
	t.Run("WaitDelay", func(t *testing.T) { testWaitDelay(t, newExec) })
	t.Run("WorkspaceRemoved", func(t *testing.T) { testWorkspaceRemoved(t, newExec) })
	t.Run("ReplacedRoot", func(t *testing.T) { testReplacedRoot(t, newExec) })
}

func testOperatorEnvironment(t *testing.T, newExec newExecutorFunc) {
	src := `import os, json
print(json.dumps({k: os.environ.get(k) for k in ("EXTRA", "OPERATOR", "LANG")}))
`
	req := script("scripts/env.py", src)
	req.Env = map[string]string{"EXTRA": "from request", "LANG": "en_US.UTF-8"}
	res := mustRun(t, newExec(WithEnv(map[string]string{"EXTRA": "from operator", "OPERATOR": "yes", "LANG": "C"})), req)
	var got map[string]string
	if err := json.Unmarshal([]byte(res.Stdout.Text), &got); err != nil {
		t.Fatalf("stdout %q, stderr %q: %v", res.Stdout.Text, res.Stderr.Text, err)
	}
	want := map[string]string{"EXTRA": "from request", "OPERATOR": "yes", "LANG": "en_US.UTF-8"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("environment %v, want %v: WithEnv above the allowlist, the request above WithEnv", got, want)
	}
}

func testPassEnv(t *testing.T, newExec newExecutorFunc) {
	t.Setenv("GOOGLE_API_KEY", "AIza-test-secret-must-not-leak")
	t.Setenv("ADKSKILLS_PASSED", "passed")
	src := `import os
print(os.environ.get("GOOGLE_API_KEY", "absent"), os.environ.get("ADKSKILLS_PASSED", "absent"))
`
	res := mustRun(t, newExec(WithPassEnv("ADKSKILLS_PASSED")), script("scripts/pass.py", src))
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

func testProcessTree(t *testing.T, newExec newExecutorFunc) {
	const limit = time.Second
	killed := 128 + int(syscall.SIGKILL)
	sleep := fmt.Sprintf("sleep %d", sleepSeconds)
	tests := []treeCase{
		// The script exits at once; its background child holds stdout.
		{name: "BackgroundChild", src: sleep + " &\necho started", timeout: time.Minute, within: grace},
		// Same, with the child's output sent elsewhere: nothing holds the
		// call, the child must still die with the run.
		{name: "DetachedChild", src: "nohup " + sleep + " >/dev/null 2>&1 &\necho started", timeout: time.Minute, within: grace},
		{name: "InfiniteLoop", src: "while :; do :; done", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "TrapsSIGTERM", src: "trap 'echo ignored' TERM\n" + sleep + " &\nwhile :; do sleep 0.1; done", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "Python", src: "python3 -c 'import subprocess, time; subprocess.Popen([\"sleep\", \"" + strconv.Itoa(sleepSeconds) + "\"]); time.sleep(" + strconv.Itoa(sleepSeconds) + ")'", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "ContextCancelled", src: sleep + " &\nwait", timeout: time.Minute, cancelAt: limit / 2, within: limit/2 + grace, timedOut: true, exitCode: killed},
	}
	// A WaitDelay longer than every bound: only the group kill can end
	// these runs in time.
	e := newExec(WithWaitDelay(hardDeadline / 2))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := newMarker(t)
			req := script("scripts/tree.sh", tt.src)
			req.Limits.Timeout = tt.timeout
			req.Env = map[string]string{markerVar: marker}
			res, elapsed := runBounded(t, e, req, tt.cancelAt, marker)
			if elapsed > tt.within {
				t.Errorf("Execute took %v, want within %v", elapsed, tt.within)
			}
			if res.TimedOut != tt.timedOut || res.ExitCode != tt.exitCode {
				t.Errorf("timed out %v exit %d, want %v %d (stderr %q)", res.TimedOut, res.ExitCode, tt.timedOut, tt.exitCode, res.Stderr.Text)
			}
			if pids := survivors(marker); len(pids) > 0 {
				t.Errorf("processes of the run survived it: %v", describe(pids))
			}
		})
	}
}

// escapeeScript starts a process that leaves the process group (setsid)
// keeping the script's stdout, and waits until it has left before exiting.
var escapeeScript = fmt.Sprintf(`setsid sleep %d &
pid=$!
until [ "$(cut -d' ' -f6 /proc/$pid/stat)" = "$pid" ]; do sleep 0.01; done
echo started
`, sleepSeconds)

// testWaitDelay: a process that leaves the process group (setsid) escapes
// the group kill of a host executor; WaitDelay still stops it from holding
// the call open through the stdout it inherited. A background child that
// stayed in the group dies with the run.
func testWaitDelay(t *testing.T, newExec newExecutorFunc) {
	const delay = 300 * time.Millisecond
	marker := newMarker(t)
	req := script("scripts/escape.sh", fmt.Sprintf("sleep %d &\n", sleepSeconds)+escapeeScript)
	req.Env = map[string]string{markerVar: marker}
	res, elapsed := runBounded(t, newExec(WithWaitDelay(delay)), req, 0, marker)
	if elapsed > delay+grace {
		t.Errorf("Execute took %v, want within WaitDelay %v + %v", elapsed, delay, grace)
	}
	if res.ExitCode != 0 || res.Stdout.Text != "started\n" {
		t.Errorf("exit %d stdout %q stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	}
	var inGroup []int
	for deadline := time.Now().Add(grace); ; time.Sleep(20 * time.Millisecond) {
		inGroup = slices.DeleteFunc(markedProcesses(marker), sessionLeader)
		if len(inGroup) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(inGroup) > 0 {
		t.Errorf("processes that stayed in the run's group survived it: %v", describe(inGroup))
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

func testWorkspaceRemoved(t *testing.T, newExec newExecutorFunc) {
	const limit = 500 * time.Millisecond
	tests := []struct {
		name     string
		req      *Request
		cancelAt time.Duration
		wantErr  error
	}{
		{name: "Success", req: script("scripts/a.sh", "echo ok > out.txt")},
		{name: "Failure", req: script("scripts/a.sh", "echo bad >&2; exit 1")},
		{name: "Timeout", req: &Request{Skill: skillOf(map[string]string{"scripts/a.sh": "sleep 60"}), Script: "scripts/a.sh", Limits: Limits{Timeout: limit}}},
		{name: "Cancel", req: script("scripts/a.sh", "sleep 60"), cancelAt: limit},
		{name: "ReadOnlyDirLeftBehind", req: script("scripts/a.sh", "mkdir -p ro/sub && echo x > ro/sub/f && chmod 0 ro/sub ro")},
		// Passes validation, fails while staging: a name longer than NAME_MAX.
		{name: "StagingError", req: &Request{Skill: skillOf(map[string]string{"scripts/a.sh": "", "data/" + strings.Repeat("n", 300): ""}), Script: "scripts/a.sh"}, wantErr: ErrWorkspace},
		{name: "StartError", req: &Request{Skill: skillOf(map[string]string{"scripts/a.sh": ""}), Script: "scripts/a.sh",
			Interpreter: &Interpreter{Language: "x", Command: []string{"/nonexistent/interpreter"}}}, wantErr: ErrStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			e := newExec(WithWorkspaceDir(dir))
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
			if left := leftovers(dir); len(left) != 0 {
				t.Errorf("workspace dir not empty after the run: %v", left)
			}
		})
	}
}

// testReplacedRoot: a script that swaps its working directory for a link or
// another folder gets nothing collected from either; the one omission says
// what happened without a host path.
func testReplacedRoot(t *testing.T, newExec newExecutorFunc) {
	e := newExec()
	secret := readableFile(t)
	tests := []struct{ name, src string }{
		{"LinkToHostFile", "cd ..; mv \"$OLDPWD\" moved; ln -s " + filepath.Dir(secret) + " \"$OLDPWD\"; echo done"},
		{"LinkToProcSelf", "cd ..; mv \"$OLDPWD\" moved; ln -s /proc/self \"$OLDPWD\""},
		{"OtherFolder", "cd ..; mv \"$OLDPWD\" moved; mkdir \"$OLDPWD\"; echo planted > \"$OLDPWD\"/planted.txt; echo out > moved/out.txt"},
		{"Removed", "cd ..; rm -rf \"$OLDPWD\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, e, script("scripts/swap.sh", tt.src))
			if len(res.Files) != 0 {
				t.Errorf("files %v collected from a replaced skill root (stderr %q)", paths(res.Files), res.Stderr.Text)
			}
			if len(res.Omitted) != 1 || res.Omitted[0].Path != "." || res.Omitted[0].Reason != reasonReplaced {
				t.Errorf("omitted %+v, want the one entry %q", res.Omitted, reasonReplaced)
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

// runBounded runs req, cancelling its context after cancelAt when non-zero,
// and gives up after hardDeadline (killing the run's processes) so a broken
// kill fails the test instead of hanging it.
func runBounded(t *testing.T, e Executor, req *Request, cancelAt time.Duration, marker string) (*Result, time.Duration) {
	t.Helper()
	t.Cleanup(func() { killMarked(marker) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cancelAt > 0 {
		time.AfterFunc(cancelAt, cancel)
	}
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := e.Execute(ctx, req)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("Execute: %v", o.err)
		}
		return o.res, time.Since(start)
	case <-time.After(hardDeadline):
		killMarked(marker)
		t.Fatalf("Execute still running after %v", hardDeadline)
		return nil, 0
	}
}

// newMarker returns a value for markerVar unique to this test run.
func newMarker(t *testing.T) string {
	return strings.ReplaceAll(t.Name(), "/", ".") + "-" + randHex(8)
}

// survivors returns the live (non-zombie) processes whose environment
// carries markerVar=marker, waiting briefly for SIGKILLed ones to finish
// exiting.
func survivors(marker string) []int {
	var pids []int
	for deadline := time.Now().Add(grace); ; time.Sleep(20 * time.Millisecond) {
		pids = markedProcesses(marker)
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
	}
}

// markedProcesses scans /proc for live processes tagged with marker.
func markedProcesses(marker string) []int {
	needle := []byte(markerVar + "=" + marker + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue // exited, waiting to be reaped
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(environ, needle) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killMarked SIGKILLs every process tagged with marker (test cleanup only).
func killMarked(marker string) {
	for _, pid := range markedProcesses(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// describe names pids with their command lines.
func describe(pids []int) []string {
	var out []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func TestLocalHost(t *testing.T) {
	runHostSuite(t, newLocal)
}

// TestLocalSetsidEscapee pins the documented limit of Local: a process that
// calls setsid leaves the process group and survives the run; the call
// still returns after WaitDelay.
func TestLocalSetsidEscapee(t *testing.T) {
	const delay = 300 * time.Millisecond
	marker := newMarker(t)
	req := script("scripts/escape.sh", escapeeScript)
	req.Env = map[string]string{markerVar: marker}
	_, elapsed := runBounded(t, NewLocal(WithWaitDelay(delay)), req, 0, marker)
	if elapsed < delay {
		t.Errorf("Execute took %v, less than WaitDelay %v: did the escapee hold stdout?", elapsed, delay)
	}
	if len(markedProcesses(marker)) == 0 {
		t.Errorf("the setsid escapee did not survive: update Local's documentation")
	}
}

// newLocal adapts NewLocal to the conformance suite.
func newLocal(opts ...Option) Executor {
	lo := make([]LocalOption, len(opts))
	for i, o := range opts {
		lo[i] = o
	}
	return NewLocal(lo...)
}
