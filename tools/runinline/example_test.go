package runinline_test

import (
	"fmt"
	"log"

	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
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
