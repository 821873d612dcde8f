package runinline_test

import (
	"context"
	"fmt"
	"log"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
	"google.golang.org/adk/agent"
)

// Inline scripts without any skill folder: every call waits for a human's
// approval through ADK's tool confirmation before it runs.
func ExampleNew() {
	inline, err := runinline.New(runscript.Config{Executor: sandbox.New()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(inline.Name())
	// Output: run_skill_inline_script
}

// A Runner runs the inline tool's calls for a host that asks for approval
// its own way (the MCP server elicits it): prepare, check, ask, run.
func ExampleNewRunner() {
	r, err := runinline.NewRunner(runscript.Config{Executor: local.New()})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	call, resp := r.Prepare(map[string]any{"language": "python", "script": "print(6*7)"})
	if resp == nil {
		resp = r.Check(ctx, host{}, call)
	}
	if resp != nil {
		log.Fatal(resp.Error)
	}
	// Show call.Prompt() to a human; once approved (for call.Digest()):
	resp = r.Run(ctx, host{}, call)
	fmt.Print(resp.Status, " ", resp.Stdout)
	// Output: success 42
}

// host is a Session without an artifact store, whose turns never end.
type host struct{}

func (host) ArtifactStore() agent.Artifacts { return nil }
func (host) ScriptMissed() int              { return 1 }
