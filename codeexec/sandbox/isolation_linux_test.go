//go:build linux

package sandbox

// Isolation between a run and the host or other runs: the host's network
// state, kernel memory through tmpfs inodes, the pseudo-terminals. Like
// every TestSandbox*, they run as the root agent and, through
// TestSandboxUnprivilegedAgent, as an unprivileged one. The attack scripts
// are POSIX shell, so that they run wherever the sandbox does.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// hostNetnsScript prints, for every process of the run's PID namespace, the
// network state /proc/PID/net shows: the interfaces, the TCP sockets and the
// Unix sockets. The helpers (the namespace's init, PID 1, and the inner
// bubblewrap, PID 2) live in the host's network namespace; only the script
// has a private one.
const hostNetnsScript = `for p in /proc/[0-9]*; do
    for f in dev tcp unix; do
        if [ -r "$p/net/$f" ]; then
            echo "== $p/net/$f"
            cat "$p/net/$f" 2>/dev/null
        fi
    done
done
`

// TestSandboxHostNetns: "no network: only a private loopback,
// so the host's 127.0.0.1 and abstract sockets are out of reach" (README);
// "nothing else of the host" (Sandbox).
//
// Broken under both agents: the script's network namespace is private, but
// the outer bubblewrap creates none (the network is unshared only by the
// inner one), so the PID namespace's init (PID 1) and the inner bubblewrap
// (PID 2) stay in the host's network namespace, and /proc/PID/net needs no
// ptrace access: /proc/1/net and /proc/2/net show the host's interfaces
// and their traffic counters (eth0 here), its routes and addresses
// (net/route, net/fib_trie), every TCP and UDP socket of the host with both
// ends and the owner's uid (the agent's connection to its model API, the
// other services on 127.0.0.1 and their ports), and every Unix socket with
// its path or abstract name. The test listens on 127.0.0.1 and on an
// abstract socket as the agent and finds both in the script's output.
// Unsharing the network in the outer bubblewrap too (or a /proc whose PID 1
// and 2 the script cannot see) would hide it.
func TestSandboxHostNetns(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.1: %v", err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	abstract := "adkskills-coldattack2-" + hosttest.RandHex(6)
	ul, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Skipf("cannot listen on an abstract Unix socket: %v", err)
	}
	defer ul.Close()

	res := codeexectest.MustRun(t, New(), codeexectest.Script("scripts/netns.sh", hostNetnsScript))
	out := res.Stdout.Text
	if res.ExitCode != 0 {
		t.Fatalf("the script failed: exit %d, stderr %q", res.ExitCode, res.Stderr.Text)
	}
	var ifaces []string
	section := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "== "); ok {
			section = s
			continue
		}
		if strings.HasSuffix(section, "/net/dev") {
			if name, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.Contains(name, "|") && name != "lo" {
				ifaces = append(ifaces, section+": "+name)
			}
		}
	}
	if len(ifaces) > 0 {
		t.Errorf("the script sees the host's network interfaces: %v", ifaces)
	}
	// net/tcp: "sl local_address ...", the local address as hex IP:PORT,
	// state 0A = LISTEN.
	listen := fmt.Sprintf("0100007F:%04X 00000000:0000 0A", port)
	if strings.Contains(out, listen) {
		t.Errorf("the script sees the agent's listener on 127.0.0.1:%d in the host's socket table", port)
	}
	if strings.Contains(out, "@"+abstract) {
		t.Errorf("the script sees the agent's abstract Unix socket @%s", abstract)
	}
}

// heldRun is a sandboxed run whose script has said, by creating "started"
// in its skill root, that it is holding what it took, and waits there for
// "release".
type heldRun struct {
	skill string // the skill root, on the host
	done  chan heldOutcome
}

type heldOutcome struct {
	res *codeexec.Result
	err error
}

// startHeld runs req in a Sandbox on a workspace directory of its own and
// returns once its script has started holding, within within.
func startHeld(t *testing.T, req *codeexec.Request, within time.Duration) *heldRun {
	t.Helper()
	dir := t.TempDir()
	h := &heldRun{done: make(chan heldOutcome, 1)}
	go func() {
		res, err := New(WithWorkspaceDir(dir)).Execute(context.Background(), req)
		h.done <- heldOutcome{res, err}
	}()
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, host.WorkspacePrefix+"*", "w", codeexec.DefaultSkillName, "started")); len(m) > 0 {
			h.skill = filepath.Dir(m[0])
			return h
		}
		select {
		case o := <-h.done:
			t.Fatalf("the run ended before its script held anything: %v, %+v", o.err, o.res)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script did not start holding within %v", within)
		}
	}
}

// release lets the script end and returns the run's result.
func (h *heldRun) release(t *testing.T) *codeexec.Result {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.skill, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := <-h.done
	if o.err != nil {
		t.Fatalf("Execute: %v", o.err)
	}
	return o.res
}

// tmpScript prints, for /tmp, /dev/shm and the workspace's temporary
// folder, its device and inode and its file system's type.
const tmpScript = `stat -c '%d %i' /tmp /dev/shm /workspace/.tmp
stat -f -c %T /tmp /dev/shm
`

// TestSandboxTmpfsInodes: a run's /tmp and /dev/shm were tmpfs
// mounts of WithTmpSize bytes each ("64 MiB each"), but a tmpfs' size
// bounds only its data pages: the number of files was bounded by tmpfs'
// default nr_inodes (half the host's RAM in pages: 3 million here, for each
// of the two), and every empty file pins an inode and a dentry in kernel
// memory that no rlimit counts and nothing reclaims while the mount lives
// (bubblewrap cannot pass nr_inodes). A script that touched a million empty
// files (15 s) pinned about 1.3 GB of unreclaimable slab while df said 0
// bytes used (100,000 in each mount: 162 MiB); two runs could take this
// 23 GB host to the OOM killer. By default both are now the workspace's
// temporary folder, whose files live on the workspace directory's file
// system like every other file of the run; WithTmpSize asks for the tmpfs
// mounts, trade-off documented.
func TestSandboxTmpfsInodes(t *testing.T) {
	requireSandbox(t)
	for _, tt := range []struct {
		name  string
		opts  []Option
		tmpfs bool
	}{
		{"Default", nil, false},
		{"WithTmpSize", []Option{WithTmpSize(1 << 20)}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := codeexectest.MustRun(t, New(tt.opts...), codeexectest.Script("scripts/tmp.sh", tmpScript))
			lines := strings.Split(strings.TrimSpace(res.Stdout.Text), "\n")
			if res.ExitCode != 0 || len(lines) != 5 {
				t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
			}
			tmp, shm, own := lines[0], lines[1], lines[2]
			if got := tmp == own && shm == own; got == tt.tmpfs {
				t.Errorf("/tmp is %s, /dev/shm %s, the workspace's temporary folder %s: want them the same folder %v", tmp, shm, own, !tt.tmpfs)
			}
			// (By default they are on whatever the workspace is on: a
			// tmpfs, where the OS temporary directory is one.)
			if tt.tmpfs && (lines[3] != "tmpfs" || lines[4] != "tmpfs") {
				t.Errorf("/tmp and /dev/shm are on %s and %s, want tmpfs", lines[3], lines[4])
			}
		})
	}
}

// ptyHogScript opens pseudo-terminals until the kernel refuses one, tells
// the test how many it holds, and keeps them until released.
const ptyHogScript = `import os, time
fds = []
err = None
try:
    while len(fds) < 100000:
        fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
except OSError as e:
    err = e
print("holding", len(fds), err, flush=True)
open("/workspace/skill/started", "w").close()
for _ in range(600):
    if os.path.exists("/workspace/skill/release"):
        break
    time.sleep(0.1)
`

// ptyScript opens one pseudo-terminal, as a script driving an interactive
// tool (pty.spawn, expect, codeexectest.Script(1)) does.
const ptyScript = `import os
try:
    m, s = os.openpty()
    print("ok")
except OSError as e:
    print("openpty:", e)
`

// TestSandboxPtyExhaustion: runs are isolated from each other
// ("no other run ... shares it"; "one run's fork storm does not starve
// another": a run's resources are its own).
//
// Each run got a devpts instance of its own (bubblewrap's --dev), but every
// instance but the host's draws on one kernel-wide pool, kernel.pty.max
// (4096) minus kernel.pty.reserve (1024), and bubblewrap sets no max= on
// it: a script that opened /dev/ptmx 3,072 times (in under a second) took
// the whole pool, and while it lived every other run's openpty failed with
// ENOSPC, as did every container on the host. A run now has no
// pseudo-terminals at all: the hog gets none, and another run's openpty
// answers the same with the hog alive as without it.
func TestSandboxPtyExhaustion(t *testing.T) {
	requireSandbox(t)
	alone := codeexectest.MustRun(t, New(), codeexectest.Script("scripts/pty.py", ptyScript))
	if !strings.Contains(alone.Stdout.Text, "No such file or directory") {
		t.Errorf("a run can open a pseudo-terminal: %q, stderr %q", alone.Stdout.Text, alone.Stderr.Text)
	}
	hog := codeexectest.Script("scripts/pty_hog.py", ptyHogScript)
	hog.Limits.Timeout = 2 * time.Minute
	h := startHeld(t, hog, hosttest.HardDeadline)
	other := codeexectest.MustRun(t, New(), codeexectest.Script("scripts/pty.py", ptyScript))
	held := h.release(t)
	if !strings.HasPrefix(held.Stdout.Text, "holding 0 ") {
		t.Errorf("a run holds pseudo-terminals: %q", held.Stdout.Text)
	}
	if other.Stdout.Text != alone.Stdout.Text {
		t.Errorf("another run's openpty answers %q while one run holds what it could get (%s), %q alone",
			other.Stdout.Text, strings.TrimSpace(held.Stdout.Text), alone.Stdout.Text)
	}
}
