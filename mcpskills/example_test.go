package mcpskills_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/mcpskills"
	"github.com/adkskills/adkskills/skilltoolset"
)

// A server of a skills folder, in this process, and a client of it: on
// stdio, the same server runs with s.Run(ctx, &mcp.StdioTransport{}); on
// HTTP, it is served by s.HTTPHandler.
func ExampleNew() {
	ctx := context.Background()
	s, err := mcpskills.New(skilltoolset.NewFSSource(os.DirFS("../testdata/skills")), local.New(), artifact.InMemoryService())
	if err != nil {
		log.Fatal(err)
	}
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, serverEnd, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcpskills.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_skill_script",
		Arguments: map[string]any{"skill_name": "report-writer", "script_path": "scripts/report.py", "args": []string{"Ada"}}})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Content[1:] {
		link := c.(*mcp.ResourceLink)
		fmt.Println(link.Name, link.URI)
	}
	// Output:
	// badge.png artifact:///badge.png/1
	// dist/data/summary.json artifact:///dist%E2%88%95data%E2%88%95summary.json/1
	// report.md artifact:///report.md/1
}

// Another server's skills, read through the Skills extension and checked
// against their digests, as a skill.Source: give it to skilltoolset.New and
// an ADK agent runs those skills' scripts in its own executor.
func ExampleNewSource() {
	ctx := context.Background()
	remote, err := mcpskills.New(skilltoolset.NewFSSource(os.DirFS("../testdata/skills")), nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	if _, err := remote.MCP().Connect(ctx, serverEnd, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcpskills.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	src, err := mcpskills.NewSource(cs)
	if err != nil {
		log.Fatal(err)
	}
	files, err := src.ListResources(ctx, "report-writer", "scripts")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(files)
	if _, err := skilltoolset.New(ctx, src, skilltoolset.WithCodeExecutor(sandbox.New())); err != nil {
		log.Fatal(err)
	}
	// Output: [scripts/fmt_helpers.py scripts/report.py]
}

// A client that declares the Skills extension and can send its methods.
func ExampleNewClient() {
	c := mcpskills.NewClient(&mcp.Implementation{Name: "my-client"}, &mcp.ClientOptions{})
	fmt.Printf("%T\n", c)
	// Output: *mcp.Client
}
