package host

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adkskills/adkskills/codeexec"
)

// WorkspacePrefix starts the name of every run's workspace directory.
const WorkspacePrefix = "adkskills-run-"

// Workspace is one run's private directory tree on the host:
//
//	root                made 0700 by os.MkdirTemp under the executor's
//	                    Workspace directory; the agent's, never shown to
//	                    the child
//	root/w              dir: the child's part (a Sandbox hands it to the
//	                    sandbox user and binds it at /Workspace)
//	root/w/<skill name> the staged skill folder; the child's cwd
//	root/w/.home        the child's HOME
//	root/w/.tmp         the child's TMPDIR
//
// The two levels keep a run private whatever the child does to its part:
// a script that makes dir or skill 0777 still does not let another host
// user in, because they cannot enter root. HOME and TMPDIR start with "."
// so that no skill name (which never does) can collide with them.
type Workspace struct {
	Root  string   // the private directory (0700), removed after the run
	lock  *os.File // root/lock, locked while the run lives (see sweep)
	Dir   string   // root/w: everything the child may see and own
	Name  string   // the skill folder's name
	Skill string   // root/w/<name>: the staged skill folder; the child's cwd
	Home  string   // root/w/.home: the child's HOME
	Tmp   string   // root/w/.tmp: the child's TMPDIR
	// Shared are the staged files (paths relative to skill) that are hard
	// links into a snapshot of the cache: not the run's to change.
	Shared map[string]bool
	// onRemove run once the workspace is removed (a run's uid lease).
	onRemove []func()
	// spare waits until the next spare of the parent is made (see
	// NewWorkspace).
	spare func()
}

// Names of the child's HOME and TMPDIR inside workspace.dir.
const (
	HomeDirName = ".home"
	TmpDirName  = ".tmp"
)

// Dirs are the paths the child sees for the skill root, HOME and TMPDIR.
type Dirs struct {
	Skill, Home, Tmp string
}

// OnRemove has fn run once the workspace is removed (a run's cgroup, its
// uid lease), the last added first: a run's cgroup is killed and removed
// before its uid is leased again.
func (ws *Workspace) OnRemove(fn func()) { ws.onRemove = append(ws.onRemove, fn) }

// Under returns the child's directories when it sees workspace.dir at base.
func (ws *Workspace) Under(base string) Dirs {
	return Dirs{
		Skill: filepath.Join(base, ws.Name),
		Home:  filepath.Join(base, HomeDirName),
		Tmp:   filepath.Join(base, TmpDirName),
	}
}

// NewWorkspace returns a fresh private workspace under parent whose skill
// folder is called name, after removing, the first time a parent is used
// in this process, what dead agents left there (see sweep).
//
// Making a workspace takes half a dozen directory operations, which cost a
// few milliseconds on some disks (a VM's), so each parent keeps one spare
// made ahead: a run takes it with two renames, and a new spare is made
// while the run goes on. The spare's making is waited for when the run's
// workspace is removed, so no goroutine outlives an Execute.
func NewWorkspace(parent, name string) (*Workspace, error) {
	parent = filepath.Clean(parent)
	sweepOnce(parent)
	ws := takeSpare(parent)
	if ws == nil {
		var err error
		if ws, err = makeWorkspace(parent); err != nil {
			return nil, err
		}
	}
	if err := ws.claim(name); err != nil {
		ws.Remove()
		return nil, fmt.Errorf("%w: %w", codeexec.ErrWorkspace, err)
	}
	ws.spare = refillSpare(parent)
	return ws, nil
}

// makeWorkspace makes a spare workspace under parent: a root named
// sparePrefix*, its lock taken, and the child's part with its skill folder
// still called spareSkillName.
func makeWorkspace(parent string) (*Workspace, error) {
	root, err := os.MkdirTemp(parent, sparePrefix)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", codeexec.ErrWorkspace, err)
	}
	lock, err := lockWorkspace(root)
	if err != nil {
		removeTree(root)
		return nil, fmt.Errorf("%w: %w", codeexec.ErrWorkspace, err)
	}
	ws := &Workspace{Root: root, lock: lock}
	ws.setPaths(spareSkillName)
	for _, p := range []string{ws.Dir, ws.Skill, ws.Home, ws.Tmp} {
		if err := os.Mkdir(p, 0o700); err != nil {
			ws.Remove()
			return nil, fmt.Errorf("%w: %w", codeexec.ErrWorkspace, err)
		}
	}
	return ws, nil
}

// setPaths sets the workspace's paths below root for a skill folder
// called name.
func (ws *Workspace) setPaths(name string) {
	ws.Dir, ws.Name = filepath.Join(ws.Root, "w"), name
	d := ws.Under(ws.Dir)
	ws.Skill, ws.Home, ws.Tmp = d.Skill, d.Home, d.Tmp
}

// claim makes a spare a run's workspace: its root takes the name of a
// run's (so a sweep tells it by WorkspacePrefix) and its skill folder the
// skill's name.
//
// The root's new name is the spare's own random part, or, when a name is
// taken (in a shared temporary directory another user can squat the name
// a visible spare will take), a fresh one, as os.MkdirTemp would pick.
func (ws *Workspace) claim(name string) error {
	parent, suffix := filepath.Dir(ws.Root), strings.TrimPrefix(filepath.Base(ws.Root), sparePrefix)
	var err error
	for range claimAttempts {
		root := filepath.Join(parent, WorkspacePrefix+suffix)
		if err = os.Rename(ws.Root, root); err == nil {
			ws.Root = root
			break
		}
		suffix = randomName()
	}
	if err != nil {
		return err
	}
	ws.setPaths(spareSkillName)
	spare := ws.Skill
	ws.setPaths(name)
	if name == spareSkillName {
		return nil
	}
	return os.Rename(spare, ws.Skill)
}

// Spare workspaces (see newWorkspace).
const (
	// sparePrefix starts the name of a spare workspace's root.
	sparePrefix = "adkskills-spare-"
	// spareSkillName is a spare's skill folder until a run names it: no
	// skill name starts with a dot.
	spareSkillName = ".skill"
	// claimAttempts is how many names a claim tries for its root.
	claimAttempts = 100
	// maxSpareParents is how many workspace directories keep a spare: a
	// program that gives every tenant or test a directory of its own holds
	// at most this many spares (and their lock descriptors) at once.
	maxSpareParents = 8
)

// spares holds the spares of the maxSpareParents workspace directories used
// last (order: least recently first), and the directories whose spare is
// being made.
var spares spareSet

// spareSet is the type of spares.
type spareSet struct {
	mu     sync.Mutex
	ready  map[string]*Workspace
	order  []string
	making map[string]bool
}

// takeSpare returns parent's spare, or nil. A spare that is no longer whole
// (its parent removed under it, a cleaner that pruned its empty folders) is
// dropped.
func takeSpare(parent string) *Workspace {
	spares.mu.Lock()
	ws := spares.ready[parent]
	delete(spares.ready, parent)
	spares.mu.Unlock()
	if ws == nil {
		return nil
	}
	for _, d := range []string{ws.Root, ws.Dir, ws.Skill, ws.Home, ws.Tmp} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			ws.Remove()
			return nil
		}
	}
	return ws
}

// refillSpare starts making parent's next spare, unless one is ready or
// being made, and returns what waits until it is made (and the spare of
// the directory used longest ago is removed, when parent is one too many).
func refillSpare(parent string) func() {
	spares.mu.Lock()
	defer spares.mu.Unlock()
	if spares.ready[parent] != nil || spares.making[parent] {
		return func() {}
	}
	if spares.making == nil {
		spares.making, spares.ready = map[string]bool{}, map[string]*Workspace{}
	}
	spares.making[parent] = true
	done := make(chan struct{})
	go func() {
		defer close(done)
		ws, err := makeWorkspace(parent)
		var dropped *Workspace
		spares.mu.Lock()
		delete(spares.making, parent)
		if err == nil {
			spares.ready[parent] = ws
			dropped = spares.use(parent)
		}
		spares.mu.Unlock()
		if dropped != nil {
			dropped.Remove()
		}
	}()
	return func() { <-done }
}

// use records parent as the directory used last and returns the spare of
// the one that no longer fits in maxSpareParents, taken out of ready, or
// nil. spares.mu is held.
func (sp *spareSet) use(parent string) *Workspace {
	sp.order = append(slices.DeleteFunc(sp.order, func(p string) bool { return p == parent }), parent)
	if len(sp.order) <= maxSpareParents {
		return nil
	}
	oldest := sp.order[0]
	sp.order = sp.order[1:]
	ws := sp.ready[oldest]
	delete(sp.ready, oldest)
	return ws
}

// waitSpare waits until the spare the workspace's run started making is
// made: no goroutine of a run makes anything in the workspace directory
// once its Execute has returned.
func (ws *Workspace) waitSpare() {
	if ws.spare != nil {
		ws.spare()
		ws.spare = nil
	}
}

// Remove deletes the workspace and then gives up its lock.
func (ws *Workspace) Remove() {
	ws.waitSpare()
	removeTree(ws.Root)
	for _, f := range slices.Backward(ws.onRemove) {
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
		if !e.IsDir() || !strings.HasPrefix(e.Name(), WorkspacePrefix) && !strings.HasPrefix(e.Name(), sparePrefix) {
			continue
		}
		root := filepath.Join(parent, e.Name())
		if !OwnDir(root, 0) {
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
	f, err := os.OpenFile(filepath.Join(root, lockFileName), os.O_RDONLY|NoFollow, 0)
	if err != nil {
		fi, err := os.Lstat(root)
		return err == nil && time.Since(fi.ModTime()) > staleAge
	}
	defer f.Close()
	return TryLock(f)
}

// recordGroup writes the process group of the run's script into the
// workspace's root, for a sweep after the agent's death.
func (ws *Workspace) recordGroup(pgid int) {
	_ = os.WriteFile(filepath.Join(ws.Root, groupFileName), []byte(strconv.Itoa(pgid)), 0o600)
}
