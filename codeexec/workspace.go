package codeexec

import (
	"fmt"
	"os"
	"path/filepath"
)

// workspacePrefix starts the name of every run's workspace directory.
const workspacePrefix = "adkskills-run-"

// workspace is one run's private directory tree on the host:
//
//	root                made 0700 by os.MkdirTemp under the executor's
//	                    workspace directory; the agent's, never shown to
//	                    the child
//	root/w              dir: the child's part (a Sandbox hands it to the
//	                    sandbox user and binds it at /workspace)
//	root/w/<skill name> the staged skill folder; the child's cwd
//	root/w/.home        the child's HOME
//	root/w/.tmp         the child's TMPDIR
//
// The two levels keep a run private whatever the child does to its part:
// a script that makes dir or skill 0777 still does not let another host
// user in, because they cannot enter root. HOME and TMPDIR start with "."
// so that no skill name (which never does) can collide with them.
type workspace struct {
	root  string // the private directory (0700), removed after the run
	dir   string // root/w: everything the child may see and own
	name  string // the skill folder's name
	skill string // root/w/<name>: the staged skill folder; the child's cwd
	home  string // root/w/.home: the child's HOME
	tmp   string // root/w/.tmp: the child's TMPDIR
}

// Names of the child's HOME and TMPDIR inside workspace.dir.
const (
	homeDirName = ".home"
	tmpDirName  = ".tmp"
)

// dirs are the paths the child sees for the skill root, HOME and TMPDIR.
type dirs struct {
	skill, home, tmp string
}

// under returns the child's directories when it sees workspace.dir at base.
func (ws *workspace) under(base string) dirs {
	return dirs{
		skill: filepath.Join(base, ws.name),
		home:  filepath.Join(base, homeDirName),
		tmp:   filepath.Join(base, tmpDirName),
	}
}

// newWorkspace creates a fresh private workspace under parent whose skill
// folder is called name.
func newWorkspace(parent, name string) (*workspace, error) {
	root, err := os.MkdirTemp(parent, workspacePrefix)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
	}
	dir := filepath.Join(root, "w")
	ws := &workspace{root: root, dir: dir, name: name}
	d := ws.under(dir)
	ws.skill, ws.home, ws.tmp = d.skill, d.home, d.tmp
	for _, p := range []string{ws.dir, ws.skill, ws.home, ws.tmp} {
		if err := os.Mkdir(p, 0o700); err != nil {
			ws.remove()
			return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
		}
	}
	return ws, nil
}

// remove deletes the workspace, making directories the script left
// unwritable writable again when a first attempt fails.
func (ws *workspace) remove() {
	if os.RemoveAll(ws.root) == nil {
		return
	}
	_ = filepath.WalkDir(ws.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(ws.root)
}
