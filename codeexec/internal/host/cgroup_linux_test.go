package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

func TestParseCgroups(t *testing.T) {
	const procCgroup = "12:pids:/user.slice/a\n4:memory:/process_api/x\n3:cpu,cpuacct:/\n0::/user.slice/agent\n"
	got := parseProcCgroup([]byte(procCgroup))
	for ctrl, want := range map[string]string{"pids": "/user.slice/a", "memory": "/process_api/x", "cpu": "/", "cpuacct": "/", "": "/user.slice/agent"} {
		if got[ctrl] != want {
			t.Errorf("controller %q: %q, want %q", ctrl, got[ctrl], want)
		}
	}
	const mountinfo = "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n" +
		"31 25 0:27 / /sys/fs/cgroup/pids rw,relatime shared:10 - cgroup cgroup rw,pids\n" +
		"32 25 0:28 /sub /mnt/view rw - cgroup cgroup rw,memory\n" +
		"33 25 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n" +
		"34 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
	for ctrl, want := range map[string]string{"memory": "/sys/fs/cgroup/memory", "pids": "/sys/fs/cgroup/pids", "": "/sys/fs/cgroup/unified", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct", "blkio": ""} {
		if got := cgroupMount([]byte(mountinfo), ctrl); got != want {
			t.Errorf("mount of %q: %q, want %q", ctrl, got, want)
		}
	}
}

// TestRunCgroupLifecycle: a run cgroup has its bounds, holds what joins it,
// reports no OOM kill of a run that stayed within them, and leaves nothing
// behind; one whose agent is dead is swept.
func TestRunCgroupLifecycle(t *testing.T) {
	h, err := hostCgroups()
	if err != nil {
		t.Skipf("runs get no cgroup here: %v", err)
	}
	g, err := h.create(64<<20, 7)
	if err != nil {
		t.Fatal(err)
	}
	limits := map[string]string{filepath.Join(g.dirs[len(g.dirs)-1], "pids.max"): "7"}
	if h.v2 {
		limits[filepath.Join(g.dirs[0], "memory.max")] = strconv.Itoa(64 << 20)
	} else {
		limits[filepath.Join(g.dirs[0], "memory.limit_in_bytes")] = strconv.Itoa(64 << 20)
	}
	for p, want := range limits {
		if b, err := os.ReadFile(p); err != nil || string(b[:len(b)-1]) != want {
			t.Errorf("%s = %q, %v; want %s", p, b, err, want)
		}
	}
	if g.oomKilled() {
		t.Error("a fresh cgroup reports an OOM kill")
	}
	g.remove()
	for _, d := range g.dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", d, err)
		}
	}

	// A dead agent's run cgroup: a name with a PID no process has.
	dead := filepath.Join(h.mem, runCgroupPrefix+"999999999-0")
	if err := os.Mkdir(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	h.sweep()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead agent's run cgroup was not swept: %v", err)
		_ = os.Remove(dead)
	}
}

// BenchmarkRunCgroup is what a run's own cgroup costs a call: made with its
// bounds and removed.
func BenchmarkRunCgroup(b *testing.B) {
	h, err := hostCgroups()
	if err != nil {
		b.Skipf("runs get no cgroup here: %v", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		g, err := h.create(1<<30, 256)
		if err != nil {
			b.Fatal(err)
		}
		g.remove()
	}
}

// boundedFake is fakeLauncher with the run cgroup of a Bounder.
type boundedFake struct{ fakeLauncher }

func (boundedFake) Bounds() (int64, int) { return 256 << 20, 64 }

// TestRunCgroupRemoved: a run's cgroup, made while the run is staged, is
// removed with the run's workspace, after Execute returns and before the
// executor's removals are waited for, whether the run ran or failed
// before its child started.
func TestRunCgroupRemoved(t *testing.T) {
	if _, err := hostCgroups(); err != nil {
		t.Skipf("runs get no cgroup here: %v", err)
	}
	tests := []struct {
		name string
		l    fakeLauncher
	}{
		{"Ran", fakeLauncher{}},
		{"PrepareFails", fakeLauncher{prepareErr: errors.New("chown: denied")}},
		{"CommandFails", fakeLauncher{commandErr: errors.New("no bwrap")}},
		{"CommandWithoutContext", fakeLauncher{noContext: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Config{workspaceDir: t.TempDir()}
			_, _ = Execute(context.Background(), cfg, boundedFake{tt.l}, codeexectest.Script("scripts/a.sh", "echo hi"))
			cfg.WaitRemovals()
			if left := RunCgroups(); len(left) != 0 {
				t.Errorf("run cgroups left: %v", left)
			}
		})
	}
}

// TestBoundedRunInCgroup: a run of a launcher that bounds runs is in a
// run cgroup of its own while it runs, which RunCgroups lists, and which
// is gone once the executor's removals are done.
func TestBoundedRunInCgroup(t *testing.T) {
	if _, err := hostCgroups(); err != nil {
		t.Skipf("runs get no cgroup here: %v", err)
	}
	cfg := &Config{workspaceDir: t.TempDir()}
	// The script waits for the test to have looked at RunCgroups.
	done := filepath.Join(t.TempDir(), "looked")
	req := codeexectest.Script("scripts/a.sh", `cat /proc/self/cgroup; while [ ! -e "$DONE" ]; do sleep 0.01; done`)
	req.Env = map[string]string{"DONE": done}
	type outcome struct {
		res *codeexec.Result
		err error
	}
	ran := make(chan outcome, 1)
	go func() {
		res, err := Execute(context.Background(), cfg, boundedFake{}, req)
		ran <- outcome{res, err}
	}()
	var listed []string
	for deadline := time.Now().Add(GroupGoneBound); len(listed) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		listed = RunCgroups()
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := <-ran
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("%v %+v", o.err, o.res)
	}
	var name string
	for _, line := range strings.Split(o.res.Stdout.Text, "\n") {
		if _, p, ok := strings.Cut(line, ":memory:"); ok {
			name = filepath.Base(p)
		}
	}
	if !strings.HasPrefix(name, ownRunCgroupPrefix) {
		t.Fatalf("the run's memory cgroup is %q, want a run cgroup of this process's:\n%s", name, o.res.Stdout.Text)
	}
	if !slices.ContainsFunc(listed, func(dir string) bool { return filepath.Base(dir) == name }) {
		t.Errorf("while the run ran, RunCgroups listed %v, not its cgroup %s", listed, name)
	}
	cfg.WaitRemovals()
	if left := RunCgroups(); len(left) != 0 {
		t.Errorf("run cgroups left: %v", left)
	}
}

// TestRunCgroupKill: kill leaves no process in the cgroup, and returns as
// soon as there is none, well before its bound.
func TestRunCgroupKill(t *testing.T) {
	h, err := hostCgroups()
	if err != nil {
		t.Skipf("runs get no cgroup here: %v", err)
	}
	g, err := h.create(64<<20, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer g.remove()
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & sleep 60 & exec sleep 60")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	started, err := startBounded(context.Background(), cmd, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = started.Wait() }()
	for deadline := time.Now().Add(GroupGoneBound); len(g.pids()) < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // the shell starts its two children
	}
	const bound = 4 * time.Second
	start := time.Now()
	g.kill(bound)
	if left := g.pids(); len(left) != 0 {
		t.Errorf("processes left in the cgroup after kill: %v", left)
	}
	if d := time.Since(start); d >= bound/2 {
		t.Errorf("kill took %v of its %v bound with nothing left", d, bound)
	}
}
