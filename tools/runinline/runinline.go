// Package runinline provides run_skill_inline_script, the tool that runs code
// the model wrote (python, bash, node, or any language of the interpreter
// table), optionally inside a skill's staged folder, after a human approves
// it through ADK's tool confirmation.
//
// The tool lives in package runscript beside run_skill_script, with which
// it shares its configuration and its response; this package keeps the
// name most agents know it by.
package runinline

import (
	"google.golang.org/adk/tool"

	"github.com/adkskills/adkskills/tools/runscript"
)

// Name is the tool's name as the model sees it.
const Name = runscript.InlineName

// InlineDir is the folder, under the skill root, where the inline script is
// staged.
const InlineDir = runscript.InlineDir

// New returns the run_skill_inline_script tool: runscript.NewInline.
// cfg.Source may be nil; then skill_name is refused.
func New(cfg runscript.Config) (tool.Tool, error) {
	return runscript.NewInline(cfg)
}
