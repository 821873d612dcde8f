package runscript_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/tool"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// The tool on its own, for an agent that composes its tools itself
// (skilltoolset.New adds ADK's skill tools and the instruction as well).
func ExampleNew() {
	run, err := runscript.New(runscript.Config{
		Source:   skilltoolset.NewFSSource(os.DirFS("../../testdata/skills")),
		Executor: sandbox.New(),
		Limits:   codeexec.Limits{MaxOutputChars: 10_000, Timeout: time.Minute},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = llmagent.New(llmagent.Config{Name: "runner", Tools: []tool.Tool{run}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Name())
	// Output: run_skill_script
}

// A function response read back into the typed Response, as a test or a
// callback would.
func ExampleParseResponse() {
	res, err := runscript.ParseResponse(map[string]any{
		"status": "error", "exit_code": float64(3), "timed_out": false, "stdout": "", "stderr": "bad input\n",
		"output_files": []any{map[string]any{"name": "dist/report.md", "artifact": "dist%2Freport.md", "version": float64(2), "mime_type": "text/markdown", "size_bytes": float64(12)}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.ExitCode, res.OutputFiles[0].Name, res.OutputFiles[0].Version)
	// Output: error 3 dist/report.md 2
}

// A Runner runs run_skill_script's calls for a host of its own: here, one
// session of an artifact store.
func ExampleNewRunner() {
	r, err := runscript.NewRunner(runscript.Config{
		Source:   skilltoolset.NewFSSource(os.DirFS("../../testdata/skills")),
		Executor: local.New(),
	})
	if err != nil {
		log.Fatal(err)
	}
	resp := r.RunScript(context.Background(), host{}, map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py", "stdin": "hi"})
	fmt.Print(resp.Status, " ", resp.Stdout)
	// Output: success HIargs:
}

// host is a Session without an artifact store, whose turns never end.
type host struct{}

func (host) ArtifactStore() agent.Artifacts { return nil }
func (host) ScriptMissed() int              { return 1 }
