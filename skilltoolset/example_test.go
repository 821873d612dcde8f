package skilltoolset_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/skilltoolset"
)

// An agent whose skills can run their scripts. Output files become session
// artifacts because the runner has an artifact service. Swap in a real model
// (gemini.NewModel) where this leaves Model nil.
func Example() {
	ctx := context.Background()
	exe := sandbox.New() // local.New() for code you trust
	if err := exe.Probe(ctx); err != nil {
		log.Fatal(err) // no bubblewrap, or no user namespaces: the sandbox cannot isolate here
	}
	skills, err := skilltoolset.New(ctx,
		skilltoolset.NewFSSource(os.DirFS("../testdata/skills")), // a missing folder fails here
		skilltoolset.WithCodeExecutor(exe),
		skilltoolset.WithMaxOutputChars(20_000),
		skilltoolset.WithScriptTimeout(time.Minute),
	)
	if err != nil {
		log.Fatal(err)
	}
	helper, err := llmagent.New(llmagent.Config{
		Name:        "helper",
		Model:       nil, // your model.LLM, e.g. gemini.NewModel(ctx, "gemini-2.5-flash", cfg)
		Instruction: "Help the user with their documents.",
		Toolsets:    []tool.Toolset{skills},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = runner.New(runner.Config{
		AppName:         "docs",
		Agent:           helper,
		SessionService:  session.InMemoryService(),
		ArtifactService: artifact.InMemoryService(), // or fileartifact.New(dir): where script outputs go
	})
	if err != nil {
		log.Fatal(err)
	}
	tools, _ := skills.Tools(nil)
	for _, t := range tools {
		fmt.Println(t.Name())
	}
	// Output:
	// list_skills
	// load_skill
	// load_skill_resource
	// run_skill_script
}

// Inline scripts are off by default; enabling them declares
// run_skill_inline_script, which always asks a human first.
func ExampleWithInlineScripts() {
	ts, err := skilltoolset.New(context.Background(),
		skilltoolset.NewFSSource(os.DirFS("../testdata/skills")),
		skilltoolset.WithCodeExecutor(local.New()),
		skilltoolset.WithInlineScripts(true),
	)
	if err != nil {
		log.Fatal(err)
	}
	tools, _ := ts.Tools(nil)
	fmt.Println(tools[len(tools)-1].Name())
	// Output: run_skill_inline_script
}

// NewFSSource reads skills leniently from any fs.FS; (*os.Root).FS() keeps
// every read inside the folder.
func ExampleNewFSSource() {
	root, err := os.OpenRoot("../testdata/skills")
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()
	src := skilltoolset.NewFSSource(root.FS())
	files, err := src.ListResources(context.Background(), "report-writer", "")
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		fmt.Println(f)
	}
	// Output:
	// SKILL.md
	// cards/greeting.txt
	// scripts/fmt_helpers.py
	// scripts/report.py
	// templates/report.md.tmpl
}
