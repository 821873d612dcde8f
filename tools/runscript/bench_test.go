package runscript_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adktest"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// BenchmarkToolCallOverhead is the cost run_skill_script adds over a bare
// executor run of the same script: argument checks, staging the skill from
// its source, and saving one output file as an artifact. Bare and tool runs
// alternate so load on the machine hits both alike; it reports both medians
// and the difference.
//
//	go test -run '^$' -bench ToolCallOverhead -benchtime 40x -count 3 ./tools/runscript/
func BenchmarkToolCallOverhead(b *testing.B) {
	dir := b.TempDir()
	skill := filepath.Join(dir, "bench")
	for p, content := range map[string]string{
		"SKILL.md":         "---\nname: bench\ndescription: Bench.\n---\n",
		"scripts/touch.py": "open('out.txt', 'w').write('x')\n",
		"data/table.csv":   "a,b\n1,2\n",
	} {
		full := filepath.Join(skill, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	exec := codeexec.NewLocal()
	src := skilltoolset.NewFSSource(os.DirFS(dir))
	tl, err := runscript.New(runscript.Config{Source: src, Executor: exec})
	if err != nil {
		b.Fatal(err)
	}
	run := tl.(runner)
	svc := artifact.InMemoryService()
	tc, _ := adktest.ToolContext(b, svc, "bench")
	args := map[string]any{"skill_name": "bench", "script_path": "scripts/touch.py"}
	skillFS := os.DirFS(skill)
	var bare, tool []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := exec.Execute(context.Background(), &codeexec.Request{Skill: skillFS, SkillName: "bench", Script: "scripts/touch.py"})
		if err != nil || res.ExitCode != 0 || len(res.Files) != 1 {
			b.Fatalf("bare run: %v %+v", err, res)
		}
		bare = append(bare, time.Since(start))
		start = time.Now()
		resp, err := run.Run(tc, args)
		if err != nil || resp["status"] != "success" {
			b.Fatalf("tool run: %v %v", err, resp)
		}
		tool = append(tool, time.Since(start))
	}
	b.StopTimer()
	mb, mt := median(bare), median(tool)
	b.ReportMetric(float64(mb.Microseconds())/1000, "bare-ms")
	b.ReportMetric(float64(mt.Microseconds())/1000, "tool-ms")
	b.ReportMetric(float64((mt-mb).Microseconds())/1000, "added-ms")
	b.ReportMetric(float64(mt)/float64(mb), "ratio")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
