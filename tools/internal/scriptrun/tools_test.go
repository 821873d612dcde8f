package scriptrun_test

import (
	"google.golang.org/adk/model"

	"github.com/adkskills/adkskills/internal/adkglue"
)

// runner is a script tool as these tests call it: the kit reached through
// run_skill_script and run_skill_inline_script.
type runner interface {
	Run(adkglue.ToolContext, any) (map[string]any, error)
	ProcessRequest(adkglue.ToolContext, *model.LLMRequest) error
}
