package runscript

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/internal/valid"
	"github.com/adkskills/adkskills/tools/internal/scriptrun"
)

// interpreter picks the interpreter of a skill's script: by its extension,
// else by the program its #! line names (codeexec.Interpreters.ForFile). The
// response is UNSUPPORTED_SCRIPT_TYPE when the table runs neither.
func interpreter(ctx context.Context, src skill.Source, table codeexec.Interpreters, skillName, script, raw string) (*codeexec.Interpreter, *Response) {
	if in, err := table.ForFile(script, nil); err == nil {
		return &in, nil // by its extension: the file need not be opened
	}
	head, _ := skillfs.Head(ctx, src, skillName, script) // unreadable: no #! line
	in, err := table.ForFile(script, head)
	if err != nil {
		why := "it has no #! line naming one"
		if prog, ok := valid.Shebang(head); ok {
			why = fmt.Sprintf("its #! line names %s", prog)
		}
		return nil, scriptrun.ErrorResponse(CodeUnsupportedScriptType, fmt.Sprintf(
			"%q cannot be run: no interpreter runs its extension, and %s (%s)", raw, why, table.Supported()))
	}
	return &in, nil
}

// miss answers a script_path that names no file of the skill sk: a folder
// says so, and the answer names the runnable files, entry points first
// (skillfs.ListScripts).
func (r runner) miss(ctx context.Context, s Session, sk *scriptrun.Skill, script, raw string) *Response {
	reason := fmt.Sprintf("script %q not found in skill %q", raw, sk.Name)
	for _, p := range sk.Paths {
		if strings.HasPrefix(p, script+"/") {
			reason = fmt.Sprintf("%q is a directory of skill %q, not a script", raw, sk.Name)
			break
		}
	}
	scripts, err := skillfs.Scripts(ctx, r.Source, sk.Name, r.Table())
	if err != nil {
		scripts = nil // the miss stands without the list
	}
	return r.ScriptMiss(s, sk.Name, raw, reason, skillfs.ListScripts(scripts))
}
