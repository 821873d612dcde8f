package runscript_test

import (
	"fmt"
	"log"
	"os"

	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/tool"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// The tool on its own, for an agent that composes its tools itself
// (skilltoolset.New adds ADK's skill tools and the instruction as well).
func ExampleNew() {
	run, err := runscript.New(runscript.Config{
		Source:         skilltoolset.NewFSSource(os.DirFS("../../testdata/skills")),
		Executor:       codeexec.NewSandbox(),
		MaxOutputChars: 10_000,
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
