//go:build !depsunit

package deps

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
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec/internal/deps/depstest"
)

// TestEvictionSparesHeldEnvironments: over the byte bound, the least
// recently used environment goes first (a use counts, not only the
// build), but never one a run holds, nor the one just built.
func TestEvictionSparesHeldEnvironments(t *testing.T) {
	sets := []string{"a", "b", "c", "d"}
	files := map[string]string{}
	var wheels []depstest.Wheel
	for _, n := range sets {
		wheels = append(wheels, depstest.PackageWheel("pkg-"+n, "1.0"))
		files[n+".py"] = pep723(`"pkg-`+n+`"`, "")
	}
	f := newFixture(t, wheels, files)
	// Measure one environment, then bound the store to two and a half.
	probe := f.store(t, Config{})
	e, err := f.resolve(t, probe, "a.py")
	if err != nil {
		t.Fatal(err)
	}
	one := envBytes(t, probe, e.Key)
	e.Close()
	s := f.store(t, Config{MaxBytes: 2*one + one/2})
	resolve := func(script string) *Env {
		t.Helper()
		e, err := f.resolve(t, s, script)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	has := func(want ...*Env) {
		t.Helper()
		var keys []string
		for _, e := range want {
			keys = append(keys, e.Key)
		}
		slices.Sort(keys)
		if envs, _ := envDirs(t, f.storeDir); !slices.Equal(envs, keys) {
			t.Fatalf("store holds %q, want %q", envs, keys)
		}
	}
	a := resolve("a.py") // the oldest, held by a run
	b := resolve("b.py")
	b.Close()
	c := resolve("c.py") // three over the bound: b goes, not the held a
	has(a, c)
	a.Close()
	c.Close()
	time.Sleep(10 * time.Millisecond)
	a = resolve("a.py") // used again: c is now the least recent
	a.Close()
	d := resolve("d.py")
	defer d.Close()
	has(a, d)
	if _, err := runPython(t, f.py, f.skill, "d.py", d); err != nil {
		t.Error(err)
	}
}

// envBytes is an environment's recorded size (what eviction counts).
func envBytes(t *testing.T, s *Store, key string) int64 {
	t.Helper()
	var m envMeta
	b, err := os.ReadFile(filepath.Join(s.Dir(), key, metaFile))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil || m.Bytes == 0 || m.Key != key {
		t.Fatalf("environment %s: %+v, %v", key, m, err)
	}
	return m.Bytes
}

// TestAcrossProcesses: processes started at once build one environment
// between them, and a later process finds it.
func TestAcrossProcesses(t *testing.T) {
	const procs = 3
	f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0")}, map[string]string{"run.py": pep723(`"tinydep"`, "")})
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(slices.Clone(f.env), "DEPS_HELPER=1", "DEPS_STORE="+f.storeDir, "DEPS_SKILL="+f.skill, "DEPS_PYTHON="+f.py)
		return cmd
	}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for range procs {
		cmd := start()
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	built := 0
	keys := map[string]bool{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v: %s", i, err, outs[i])
		}
		res := helperResult(t, outs[i].String())
		if res[0] == "built" {
			built++
		}
		keys[res[1]] = true
	}
	if built != 1 || len(keys) != 1 {
		t.Fatalf("%d of %d processes built, %d keys; want one build and one key", built, procs, len(keys))
	}
	later, err := start().CombinedOutput()
	if res := helperResult(t, string(later)); err != nil || res[0] != "found" || !keys[res[1]] {
		t.Fatalf("a later process: %q (%v), want it to find the environment", later, err)
	}
}

// helperResult reads the helper's "RESULT built|found KEY" line.
func helperResult(t *testing.T, out string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if r, ok := strings.CutPrefix(l, "RESULT "); ok {
			if f := strings.Fields(r); len(f) == 2 {
				return f
			}
		}
	}
	t.Fatalf("no result in helper output %q", out)
	return nil
}

// TestHelperProcess resolves run.py in another process for
// TestAcrossProcesses.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("DEPS_HELPER") != "1" {
		t.Skip("a helper of TestAcrossProcesses")
	}
	s, err := New(Config{Dir: os.Getenv("DEPS_STORE")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := s.Resolve(ctx, os.DirFS(os.Getenv("DEPS_SKILL")), "run.py", Interpreter{Language: Python, Path: os.Getenv("DEPS_PYTHON")})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	how := "found"
	if env.Built {
		how = "built"
	}
	fmt.Printf("RESULT %s %s\n", how, env.Key)
}

// TestLockFollowsReplacedFile: a lock file removed and made again while a
// holder waited is opened again, so two holders never hold different
// files of one name.
func TestLockFollowsReplacedFile(t *testing.T) {
	s, err := New(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := s.lock(ctx, "k.use", true, false)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *lockFile)
	go func() {
		l, _ := s.lock(ctx, "k.use", true, true) // waits on the first file
		got <- l
	}()
	time.Sleep(5 * lockPoll)
	if err := os.Remove(filepath.Join(s.Dir(), locksDir, "k.use")); err != nil {
		t.Fatal(err)
	}
	third, err := s.lock(ctx, "k.use", true, false) // the new file
	if err != nil {
		t.Fatal(err)
	}
	first.unlock()
	select {
	case l := <-got:
		l.unlock()
		t.Fatal("a waiter took the lock of a removed file while another held the file at its path")
	case <-time.After(10 * lockPoll):
	}
	third.unlock()
	(<-got).unlock()
	if _, err := s.lock(ctx, "k.use", true, false); err != nil {
		t.Errorf("lock after all released: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	held, _ := s.lock(ctx, "k2.use", false, false)
	cancel()
	if _, err := s.lock(cctx, "k2.use", true, true); !errors.Is(err, context.Canceled) {
		t.Errorf("waiting with a cancelled context: %v, want context.Canceled", err)
	}
	held.unlock()
}
