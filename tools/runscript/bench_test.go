package runscript_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
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
	exec := local.New()
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

// Sizes of BenchmarkInputFiles: as many input files as a run takes by
// default, 1 MiB each.
const (
	benchInputs     = codeexec.DefaultMaxOutputFiles
	benchInputBytes = 1 << 20
)

// BenchmarkInputFiles stages benchInputs files of benchInputBytes from
// ADK's in-memory artifact service through run_skill_script (input_files
// "in/**": list, match, load, stage, run a script that counts them, find
// them unchanged), beside the same call without inputs.
//
//	go test -run '^$' -bench InputFiles -benchmem -benchtime 20x ./tools/runscript/
func BenchmarkInputFiles(b *testing.B) {
	dir := b.TempDir()
	for p, content := range map[string]string{
		"bench/SKILL.md":         "---\nname: bench\ndescription: Bench.\n---\n",
		"bench/scripts/count.sh": "ls in 2>/dev/null | wc -l\n",
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(dir)), Executor: local.New()})
	if err != nil {
		b.Fatal(err)
	}
	svc := artifact.InMemoryService()
	s := adktest.NewSession(b, svc)
	data := make([]byte, benchInputBytes)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for i := range benchInputs {
		_, err := svc.Save(context.Background(), &artifact.SaveRequest{AppName: adktest.App, UserID: adktest.User, SessionID: s.ID(),
			FileName: runscript.ArtifactName(fmt.Sprintf("in/f%03d.bin", i)), Part: &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: "application/octet-stream"}}})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		inputs []any
		want   string
	}{
		{"none", nil, "0\n"},
		{"100x1MiB", []any{"in/**"}, fmt.Sprintf("%d\n", benchInputs)},
	} {
		b.Run(c.name, func(b *testing.B) {
			args := map[string]any{"skill_name": "bench", "script_path": "scripts/count.sh", "input_files": c.inputs}
			for range b.N {
				resp, err := tl.(runner).Run(s.ToolContext("bench", nil), args)
				if err != nil || resp["status"] != "success" || resp["stdout"] != c.want || len(resp["output_files"].([]map[string]any)) != 0 {
					b.Fatalf("%v %v", err, resp)
				}
			}
			if len(c.inputs) > 0 {
				b.SetBytes(benchInputs * benchInputBytes)
			}
		})
	}
}
