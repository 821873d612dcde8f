package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// The staging-at-scale benchmarks: a skill of bigFiles files of bigFileBytes
// (100 MB of assets) against a tiny one, through the toolset and ADK's
// runner, with the system's python3 (as the figures in issue 10 were
// measured).
//
//	go test -run '^$' -bench 'SkillSize|BigSkillConcurrent|SandboxAddedLatency|ToolCallVsBare|Concurrent16' -benchtime 20x ./integration/
const (
	bigFiles     = 20
	bigFileBytes = 5_000_000
	helloScript  = "print('hi')\n"
)

// systemPython is the system's python3 (not a version manager's shim), or
// "python3" from PATH.
func systemPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// scaleSkills writes the skills "tiny" (one script) and "big" (the same
// script beside bigFiles assets) under a fresh folder.
func scaleSkills(b *testing.B) string {
	dir := b.TempDir()
	write := func(p string, data []byte) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range []string{"tiny", "big"} {
		write(name+"/SKILL.md", []byte("---\nname: "+name+"\ndescription: A "+name+" skill.\n---\n"))
		write(name+"/scripts/hello.py", []byte(helloScript))
	}
	blob := make([]byte, bigFileBytes)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	for i := range bigFiles {
		write(fmt.Sprintf("big/assets/blob%02d.bin", i), blob)
	}
	for _, p := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(p, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// scaleExecutor is the executor kind with the system's python3 and its
// workspaces (and snapshot cache) in a directory of its own.
func scaleExecutor(b *testing.B, kind string) codeexec.Executor {
	ws := b.TempDir()
	if err := os.Chmod(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	table := codeexec.Interpreters{{Language: "python", Extensions: []string{".py"}, Command: []string{systemPython()}}}
	if kind == "Sandbox" {
		s := sandbox.New(sandbox.WithInterpreters(table), sandbox.WithWorkspaceDir(ws))
		if err := s.Probe(context.Background()); err != nil {
			b.Skipf("no sandbox here: %v", err)
		}
		return s
	}
	return local.New(local.WithInterpreters(table), local.WithWorkspaceDir(ws))
}

// caller makes run_skill_script calls through one toolset, agent and ADK
// runner, each in a session of its own.
type caller struct {
	h *harness
}

func newCaller(b *testing.B, skills string, e codeexec.Executor) *caller {
	h := newHarness(b, harnessConfig{skills: skills, opts: []skilltoolset.Option{skilltoolset.WithCodeExecutor(e)}})
	return &caller{h: h}
}

// call runs scripts/hello.py of skill once and returns how long the turn
// took.
func (c *caller) call(b testing.TB, skill string) time.Duration {
	ctx := context.Background()
	created, err := c.h.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID})
	if err != nil {
		b.Fatal(err)
	}
	c.h.model.Append(scripted.Call(runscript.Name, map[string]any{"skill_name": skill, "script_path": "scripts/hello.py"}), scripted.Say("done"))
	start := time.Now()
	var resp map[string]any
	for ev, err := range c.h.runner.Run(ctx, userID, created.Session.ID(), genai.NewContentFromText("run it", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			b.Fatal(err)
		}
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionResponse != nil && p.FunctionResponse.Name == runscript.Name {
				resp = p.FunctionResponse.Response
			}
		}
	}
	d := time.Since(start)
	if resp["status"] != runscript.StatusSuccess || resp["stdout"] != "hi\n" {
		b.Fatalf("call of %s: %v", skill, resp)
	}
	return d
}

// medianMs is the median of ds in milliseconds.
func medianMs(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// BenchmarkSkillSize alternates calls of the tiny and the 100 MB skill and
// reports both medians and their ratio (the target: at most 1.5).
func BenchmarkSkillSize(b *testing.B) {
	skills := scaleSkills(b)
	for _, kind := range []string{"Local", "Sandbox"} {
		b.Run(kind, func(b *testing.B) {
			c := newCaller(b, skills, scaleExecutor(b, kind))
			c.call(b, "big") // the first run builds the snapshot
			var tiny, big []time.Duration
			b.ResetTimer()
			for range b.N {
				tiny = append(tiny, c.call(b, "tiny"))
				big = append(big, c.call(b, "big"))
			}
			b.ReportMetric(medianMs(tiny), "tiny-ms")
			b.ReportMetric(medianMs(big), "big-ms")
			b.ReportMetric(medianMs(big)/medianMs(tiny), "ratio")
		})
	}
}

// rssKiB reads a field of /proc/self/status (VmRSS, VmHWM) in KiB.
func rssKiB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// resetPeakRSS resets VmHWM to the current RSS (Linux: clear_refs 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// callers makes n callers of one executor: each has its own runner and
// scripted model (which answers calls in the order they come, so two
// turns cannot share one), and all share e, its cache and its workspaces.
func callers(b *testing.B, skills string, e codeexec.Executor, n int) []*caller {
	cs := make([]*caller, n)
	for i := range cs {
		cs[i] = newCaller(b, skills, e)
	}
	return cs
}

// concurrently makes a call of skill through each of cs at once, each times,
// and returns the growth of the process's peak RSS over its RSS before, in
// MiB, and how long they took.
func concurrently(b *testing.B, cs []*caller, skill string, each int) (float64, time.Duration) {
	before := rssKiB("VmRSS")
	resetPeakRSS()
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() {
			for range each {
				c.call(b, skill)
			}
		})
	}
	wg.Wait()
	return float64(rssKiB("VmHWM")-before) / 1024, time.Since(start)
}

// BenchmarkBigSkillConcurrent makes 8 sandboxed calls of the 100 MB skill
// at once and reports the growth of the process's peak RSS (the target: at
// most 64 MiB).
func BenchmarkBigSkillConcurrent(b *testing.B) {
	skills := scaleSkills(b)
	cs := callers(b, skills, scaleExecutor(b, "Sandbox"), 8)
	cs[0].call(b, "big")
	var growth []float64
	b.ResetTimer()
	for range b.N {
		g, _ := concurrently(b, cs, "big", 1)
		growth = append(growth, g)
	}
	slices.Sort(growth)
	b.ReportMetric(growth[len(growth)-1], "peak-rss-growth-MiB")
}

// BenchmarkSandboxAddedLatency alternates Local and Sandbox calls of the
// tiny skill and reports what the sandbox adds (the target: under 10 ms).
func BenchmarkSandboxAddedLatency(b *testing.B) {
	skills := scaleSkills(b)
	local := newCaller(b, skills, scaleExecutor(b, "Local"))
	sandboxed := newCaller(b, skills, scaleExecutor(b, "Sandbox"))
	local.call(b, "tiny")
	sandboxed.call(b, "tiny")
	var l, s []time.Duration
	b.ResetTimer()
	for range b.N {
		l = append(l, local.call(b, "tiny"))
		s = append(s, sandboxed.call(b, "tiny"))
	}
	b.ReportMetric(medianMs(l), "local-ms")
	b.ReportMetric(medianMs(s), "sandbox-ms")
	b.ReportMetric(medianMs(s)-medianMs(l), "added-ms")
}

// BenchmarkToolCallVsBare alternates a full tool call through ADK's runner
// (Local, the tiny skill) and a bare start of the same script by the same
// interpreter, and reports their ratio (the target: at most 1.10).
func BenchmarkToolCallVsBare(b *testing.B) {
	skills := scaleSkills(b)
	c := newCaller(b, skills, scaleExecutor(b, "Local"))
	c.call(b, "tiny")
	script := filepath.Join(skills, "tiny", "scripts", "hello.py")
	py := systemPython()
	var bare, tool []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		out, err := exec.Command(py, script).Output()
		if err != nil || string(out) != "hi\n" {
			b.Fatalf("bare: %q %v", out, err)
		}
		bare = append(bare, time.Since(start))
		tool = append(tool, c.call(b, "tiny"))
	}
	b.ReportMetric(medianMs(bare), "bare-ms")
	b.ReportMetric(medianMs(tool), "tool-ms")
	b.ReportMetric(medianMs(tool)-medianMs(bare), "added-ms")
	b.ReportMetric(medianMs(tool)/medianMs(bare), "ratio")
}

// BenchmarkConcurrent16 makes 16 calls at once, several times each, and
// reports the throughput and the growth of the peak RSS.
func BenchmarkConcurrent16(b *testing.B) {
	const goroutines, each = 16, 4
	skills := scaleSkills(b)
	for _, kind := range []string{"Local", "Sandbox"} {
		for _, skill := range []string{"tiny", "big"} {
			b.Run(kind+"/"+skill, func(b *testing.B) {
				cs := callers(b, skills, scaleExecutor(b, kind), goroutines)
				cs[0].call(b, skill)
				var peak float64
				var took time.Duration
				b.ResetTimer()
				for range b.N {
					g, d := concurrently(b, cs, skill, each)
					peak, took = max(peak, g), took+d
				}
				b.ReportMetric(float64(goroutines*each*b.N)/took.Seconds(), "calls/s")
				b.ReportMetric(peak, "peak-rss-growth-MiB")
			})
		}
	}
}
