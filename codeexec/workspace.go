package codeexec

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
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
	root  string   // the private directory (0700), removed after the run
	lock  *os.File // root/lock, locked while the run lives (see sweep)
	dir   string   // root/w: everything the child may see and own
	name  string   // the skill folder's name
	skill string   // root/w/<name>: the staged skill folder; the child's cwd
	home  string   // root/w/.home: the child's HOME
	tmp   string   // root/w/.tmp: the child's TMPDIR
	// shared are the staged files (paths relative to skill) that are hard
	// links into a snapshot of the cache: not the run's to change.
	shared map[string]bool
	// onRemove run once the workspace is removed (a run's uid lease).
	onRemove []func()
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
// folder is called name, after removing, the first time a parent is used
// in this process, what dead agents left there (see sweep).
func newWorkspace(parent, name string) (*workspace, error) {
	sweepOnce(parent)
	root, err := os.MkdirTemp(parent, workspacePrefix)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
	}
	lock, err := lockWorkspace(root)
	if err != nil {
		removeTree(root)
		return nil, fmt.Errorf("%w: %w", ErrWorkspace, err)
	}
	dir := filepath.Join(root, "w")
	ws := &workspace{root: root, lock: lock, dir: dir, name: name}
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

// remove deletes the workspace and then gives up its lock.
func (ws *workspace) remove() {
	removeTree(ws.root)
	for _, f := range ws.onRemove {
		f()
	}
	if ws.lock != nil {
		_ = ws.lock.Close()
	}
}

// Files in a workspace's root, beside w.
const (
	lockFileName  = "lock"  // locked by the agent while the run lives
	groupFileName = "group" // the process group of a Local run, once started
)

// staleAge is how old a workspace without a lock file must be before a
// sweep takes it for a dead agent's (younger ones may be being created).
const staleAge = time.Minute

// swept records the workspace directories this process has swept.
var swept sync.Map

// sweepOnce sweeps parent the first time this process uses it.
func sweepOnce(parent string) {
	if _, done := swept.LoadOrStore(filepath.Clean(parent), true); !done {
		sweep(parent)
	}
}

// sweep removes from parent the workspaces that dead agents left: every
// adkskills-run-* directory of this user whose lock nobody holds (an agent
// holds the lock of each of its runs until the run is over, and the kernel
// drops it when the agent dies, however it dies). Before removing one, it
// kills what is left of its run: a Local script's background children,
// which outlive an agent killed by SIGKILL (the script itself dies with
// the agent). Nothing here is reported: a workspace that cannot be swept is
// tried again by the next process.
func sweep(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), workspacePrefix) {
			continue
		}
		root := filepath.Join(parent, e.Name())
		if !ownDir(root) {
			continue
		}
		if !deadWorkspace(root) {
			continue
		}
		killLeftovers(root)
		removeTree(root)
	}
}

// deadWorkspace reports whether the agent that made root is gone: its lock
// can be taken (and is, until root is removed), or it has none and is
// older than staleAge.
func deadWorkspace(root string) bool {
	f, err := os.OpenFile(filepath.Join(root, lockFileName), os.O_RDONLY|noFollow, 0)
	if err != nil {
		fi, err := os.Lstat(root)
		return err == nil && time.Since(fi.ModTime()) > staleAge
	}
	defer f.Close()
	return tryLock(f)
}

// recordGroup writes the process group of the run's script into the
// workspace's root, for a sweep after the agent's death.
func (ws *workspace) recordGroup(pgid int) {
	_ = os.WriteFile(filepath.Join(ws.root, groupFileName), []byte(strconv.Itoa(pgid)), 0o600)
}
