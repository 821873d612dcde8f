package host

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Run cgroups. Where the host lets the agent make cgroups, every run gets
// one of its own with a memory and a process bound: the memory bound counts
// everything the kernel charges the run (its processes' memory and the
// tmpfs, memfd and page-cache pages they touch), and the kernel's OOM
// killer enforces it inside the run, so the agent and the other runs go on.
// Two layouts are used, whichever the host allows:
//   - cgroup v1: memory and pids hierarchies in which the agent may make
//     children of its own cgroup: a run is a child of it in both;
//   - cgroup v2: the agent in a leaf cgroup whose parent delegates the
//     memory and pids controllers (systemd's Delegate= with
//     DelegateSubgroup=, a container runtime's): a run is a sibling of it.
//
// A run cgroup is named runCgroupPrefix, the agent's PID and a random part;
// one whose agent is dead is swept (its processes killed, the cgroup
// removed) the first time another agent of the host uses cgroups.

// runCgroupPrefix starts the name of every run cgroup.
const runCgroupPrefix = "adkskills-run-"

// ownRunCgroupPrefix starts the name of every run cgroup of this process.
var ownRunCgroupPrefix = runCgroupPrefix + strconv.Itoa(os.Getpid()) + "-"

// cgroupHost is where run cgroups are made: a directory in the memory and
// one in the pids hierarchy (the same one under v2).
type cgroupHost struct {
	v2        bool
	mem, pids string
}

// hostCgroups returns this process's cgroup host, found (and swept) once:
// nil and the reason where runs get no cgroup.
var hostCgroups = sync.OnceValues(func() (*cgroupHost, error) {
	h, err := findCgroups()
	if err != nil {
		return nil, err
	}
	h.sweep()
	return h, nil
})

// RunCgroups lists the run cgroups this process has now (their
// directories), for tests that check none is left behind.
func RunCgroups() []string {
	h, err := hostCgroups()
	if err != nil {
		return nil
	}
	var names []string
	for _, dir := range h.parents() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ownRunCgroupPrefix) {
				names = append(names, filepath.Join(dir, e.Name()))
			}
		}
	}
	return names
}

// parents are the directories run cgroups are made in: the memory one and,
// under v1, the pids one (under v2 they are the same).
func (h *cgroupHost) parents() []string {
	if h.v2 {
		return []string{h.mem}
	}
	return []string{h.mem, h.pids}
}

// CgroupReport says how this host bounds a run's memory and processes: the
// run cgroups' layout, or why there are none.
func CgroupReport() string {
	h, err := hostCgroups()
	switch {
	case err != nil:
		return "no run cgroup (" + err.Error() + ")"
	case h.v2:
		return "a cgroup v2 per run, beside the agent's in " + h.mem
	}
	return "a cgroup v1 per run, below the agent's in " + h.mem + " and " + h.pids
}

// findCgroups finds where this process may make run cgroups, and makes and
// removes one to be sure.
func findCgroups() (*cgroupHost, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	paths := parseProcCgroup(own)
	mem, pids, unified := cgroupMount(mounts, "memory"), cgroupMount(mounts, "pids"), cgroupMount(mounts, "")
	var h *cgroupHost
	switch {
	case mem != "" && pids != "" && paths["memory"] != "" && paths["pids"] != "":
		h = &cgroupHost{mem: filepath.Join(mem, paths["memory"]), pids: filepath.Join(pids, paths["pids"])}
	case unified != "" && paths[""] != "" && paths[""] != "/":
		parent := filepath.Dir(filepath.Join(unified, paths[""]))
		ctrl, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		if !hasWords(string(ctrl), "memory", "pids") {
			return nil, fmt.Errorf("cgroup v2: %s does not delegate the memory and pids controllers", parent)
		}
		h = &cgroupHost{v2: true, mem: parent, pids: parent}
	default:
		return nil, errors.New("no cgroup hierarchy with the memory and pids controllers")
	}
	g, err := h.create(1<<30, 1)
	if err != nil {
		return nil, fmt.Errorf("cannot make a cgroup in %s: %w", h.mem, err)
	}
	g.remove()
	return h, nil
}

// parseProcCgroup maps each controller named in /proc/self/cgroup to the
// process's cgroup in its hierarchy ("" for the v2 hierarchy).
func parseProcCgroup(b []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// cgroupMount returns from /proc/self/mountinfo where the v1 hierarchy with
// controller is mounted (the v2 hierarchy when controller is ""), or "". A
// mount of a subtree (a container's view of its own cgroup) is not used.
func cgroupMount(mountinfo []byte, controller string) string {
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || f[3] != "/" {
			continue
		}
		switch {
		case controller == "" && g[0] == "cgroup2":
			return f[4]
		case controller != "" && g[0] == "cgroup" && hasWords(strings.ReplaceAll(g[2], ",", " "), controller):
			return f[4]
		}
	}
	return ""
}

// hasWords reports whether the space-separated list s has every word.
func hasWords(s string, words ...string) bool {
	have := strings.Fields(s)
	for _, w := range words {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// runCgroup is one run's cgroup: its directory in the memory hierarchy,
// then in the pids one (one directory under v2).
type runCgroup struct {
	v2       bool
	dirs     []string
	memBytes int64
}

// create makes a run cgroup bounded to memBytes of memory (swap included
// where the kernel counts it) and procs processes; zero means no bound.
func (h *cgroupHost) create(memBytes int64, procs int) (*runCgroup, error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := ownRunCgroupPrefix + hex.EncodeToString(b)
	g := &runCgroup{v2: h.v2, memBytes: memBytes}
	for _, p := range h.parents() {
		g.dirs = append(g.dirs, filepath.Join(p, name))
	}
	for _, d := range g.dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			g.remove()
			return nil, err
		}
	}
	mem, pids := g.dirs[0], g.dirs[len(g.dirs)-1]
	var err error
	switch {
	case h.v2 && memBytes > 0:
		err = errors.Join(writeCgroup(mem, "memory.max", memBytes), writeCgroup(mem, "memory.swap.max", 0))
	case memBytes > 0:
		err = writeCgroup(mem, "memory.limit_in_bytes", memBytes)
		// Swap counts too where the kernel accounts it (the file exists).
		if _, serr := os.Stat(filepath.Join(mem, "memory.memsw.limit_in_bytes")); serr == nil && err == nil {
			err = writeCgroup(mem, "memory.memsw.limit_in_bytes", memBytes)
		}
	}
	if err == nil && procs > 0 {
		err = writeCgroup(pids, "pids.max", int64(procs))
	}
	if err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// writeCgroup writes the number v to dir's control file name.
func writeCgroup(dir, name string, v int64) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(strconv.FormatInt(v, 10)), 0)
}

// join moves the process pid into g (its children follow).
func (g *runCgroup) join(pid int) error {
	for _, d := range g.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return err
		}
	}
	return nil
}

// oomKilled reports whether the kernel killed a process of g for memory.
func (g *runCgroup) oomKilled() bool {
	name := "memory.oom_control"
	if g.v2 {
		name = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(g.dirs[0], name))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "oom_kill "); ok {
			v, _ := strconv.Atoi(strings.TrimSpace(n))
			return v > 0
		}
	}
	return false
}

// kill kills every process of g until none is left or bound passes.
func (g *runCgroup) kill(bound time.Duration) {
	killUntilGone(bound, func() bool {
		pids := g.pids()
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return len(pids) > 0
	})
}

// pids lists g's processes. Under v1 its memory directory lists them all:
// a process joins it first (see join), and a child joins the cgroups of
// its parent.
func (g *runCgroup) pids() []int {
	var out []int
	b, _ := os.ReadFile(filepath.Join(g.dirs[0], "cgroup.procs"))
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// remove kills what is left of g and removes its directories.
func (g *runCgroup) remove() {
	g.kill(GroupGoneBound)
	for _, d := range g.dirs {
		for i := 0; i < 100; i++ {
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) || !errors.Is(err, syscall.EBUSY) {
				break
			}
			time.Sleep(time.Millisecond) // the last processes are still exiting
		}
	}
}

// sweep removes the run cgroups of agents that are dead.
func (h *cgroupHost) sweep() {
	for _, parent := range h.parents() {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			rest, ok := strings.CutPrefix(e.Name(), runCgroupPrefix)
			if !ok || !e.IsDir() {
				continue
			}
			pidText, _, _ := strings.Cut(rest, "-")
			if pid, err := strconv.Atoi(pidText); err == nil && pid != os.Getpid() && !processAlive(pid) {
				g := &runCgroup{v2: h.v2, dirs: []string{filepath.Join(parent, e.Name())}}
				g.remove()
			}
		}
	}
}
