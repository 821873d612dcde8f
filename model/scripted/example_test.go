package scripted_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
)

// turn runs one turn of an agent with the skills of ../../testdata/skills
// and model m through ADK's runner, and prints what each event holds.
func turn(m model.LLM, message string) {
	ctx := context.Background()
	skills, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS("../../testdata/skills")),
		skilltoolset.WithCodeExecutor(local.New()))
	if err != nil {
		log.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "helper", Model: m, Toolsets: []tool.Toolset{skills}})
	if err != nil {
		log.Fatal(err)
	}
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: "docs", Agent: a, SessionService: sessions, ArtifactService: artifact.InMemoryService()})
	if err != nil {
		log.Fatal(err)
	}
	s, err := sessions.Create(ctx, &session.CreateRequest{AppName: "docs", UserID: "ada"})
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range r.Run(ctx, "ada", s.Session.ID(), genai.NewContentFromText(message, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			log.Fatal(err)
		}
		for _, p := range ev.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				fmt.Println("call:", p.FunctionCall.Name, p.FunctionCall.Args["skill_name"], p.FunctionCall.Args["script_path"])
			case p.FunctionResponse != nil:
				fmt.Println("response:", p.FunctionResponse.Response["status"], p.FunctionResponse.Response["stdout"])
			default:
				fmt.Println("text:", p.Text)
			}
		}
	}
}

// A scripted model stands in for Gemini in a test: it calls
// run_skill_script once, then ends its turn, through ADK's real runner.
func ExampleNew() {
	m := scripted.New("test-model",
		scripted.Call("run_skill_script", map[string]any{"skill_name": "report-writer", "script_path": "scripts/report.py", "args": []any{"Ada"}}),
		scripted.Say("Your report is ready."),
	)
	turn(m, "Write a report about Ada.")
	fmt.Println("model calls:", len(m.Requests()))
	// Output:
	// call: run_skill_script report-writer scripts/report.py
	// response: success report for Ada: report.md, dist/data/summary.json, badge.png
	//
	// text: Your report is ready.
	// model calls: 2
}

// The demo model needs no key: the user's message is the call, and it sums
// up the response.
func ExampleNewDemo() {
	turn(scripted.NewDemo(), "run report-writer scripts/report.py Ada")
	// Output:
	// call: run_skill_script report-writer scripts/report.py
	// response: success report for Ada: report.md, dist/data/summary.json, badge.png
	//
	// text: `scripts/report.py` of `report-writer` ran: success, exit code 0. Saved as artifacts: `badge.png` (version 1), `dist∕data∕summary.json` (version 1), `report.md` (version 1).
	//
	// stdout:
	// ```
	// report for Ada: report.md, dist/data/summary.json, badge.png
	// ```
}

// ParseMessage is the demo's reading of a message.
func ExampleParseMessage() {
	fc, err := scripted.ParseMessage("run report-writer scripts/report.py 'Ada Lovelace' --style plain")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fc.Name, fc.Args["skill_name"], fc.Args["script_path"], fc.Args["args"])
	fc, err = scripted.ParseMessage("run-inline python\n```\nprint('hi')\n```")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %s %q\n", fc.Name, fc.Args["language"], fc.Args["script"])
	// Output:
	// run_skill_script report-writer scripts/report.py [Ada Lovelace --style plain]
	// run_skill_inline_script python "print('hi')\n"
}
