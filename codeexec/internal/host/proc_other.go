//go:build !unix

package host

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/adkskills/adkskills/codeexec"
)

// procGroup is a started child. Off unix there is no process group to
// kill: Local refuses to run (see Supported).
type procGroup struct {
	cmd *exec.Cmd
}

func newProcGroup(cmd *exec.Cmd) *procGroup { return &procGroup{cmd: cmd} }
func (g *procGroup) abort()                 {}
func (g *procGroup) started(int)            {}
func (g *procGroup) finish()                {}

// killTree kills cmd's process (there is no tree to reach here).
func killTree(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// exitCode is st's exit status.
func exitCode(st *os.ProcessState) int { return st.ExitCode() }

// Supported reports that Local does not run scripts here: without a
// process tree it can kill (a Job Object on Windows), a timeout would leave
// a script's children running.
func Supported() error {
	return fmt.Errorf("%w: Local does not run scripts on %s: it cannot kill a script's process tree there; use a remote executor such as codeexec/agentsandbox", codeexec.ErrStart, runtime.GOOS)
}
