package host

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Removing a finished run's workspace takes one unlink or rmdir per entry,
// about 0.16 ms each on a VM's disk: too much for the end of every Execute.
// So Execute renames the workspace into the trash (one rename) and a
// worker removes it after Execute has returned. The workspace keeps its
// lock until it is gone, so a crash sweep of the trash (sweepOnce, at the
// first use in a process) removes only what a dead agent left there.
//
// The trash is one directory of the agent's user in os.TempDir, not a
// folder beside the workspaces: a caller's directory (a test's t.TempDir)
// holds nothing of a run once Execute has returned, so its removal never
// races the worker. A workspace directory on another file system than
// os.TempDir (a rename cannot leave it), or a trash that is not the
// agent's own and private, has its workspaces removed in Execute, as
// before. Config.WaitRemovals (every executor's Close) waits for the
// removals of the runs it executed.

// trashPrefix starts the name of the trash directory in os.TempDir; the
// effective uid follows.
const trashPrefix = "adkskills-trash-"

// removalWorkers bounds the removals running at once: each is a stream
// of small system calls, and a few use the disk as well as many.
const removalWorkers = 2

// removalSlots is the semaphore of removalWorkers.
var removalSlots = make(chan struct{}, removalWorkers)

// trashDir is the trash's path, made (and swept) on first use; "" when it
// cannot be used.
var trashDir = sync.OnceValue(func() string {
	dir := filepath.Join(os.TempDir(), trashPrefix+strconv.Itoa(os.Geteuid()))
	_ = os.Mkdir(dir, 0o700)
	// Not a link, the agent's own, closed to everyone else: a trash
	// another user made first is not used.
	if !OwnDir(dir, 0o077) {
		return ""
	}
	sweepOnce(dir)
	return dir
})

// trashFor returns the trash a workspace under parent can be renamed into,
// or "" when there is none on parent's file system.
func trashFor(parent string) string {
	t := trashDir()
	if t == "" {
		return ""
	}
	a, err := os.Stat(parent)
	b, err2 := os.Stat(t)
	if err != nil || err2 != nil || idOf(a).dev != idOf(b).dev {
		return ""
	}
	return t
}

// RemoveLater removes ws after the caller has gone on: renamed into the
// trash at once, then removed by a worker, with c.WaitRemovals waiting
// for it. Where it cannot be renamed away it is removed now.
func (c *Config) RemoveLater(ws *Workspace) {
	ws.waitSpare()
	t := trashFor(filepath.Dir(ws.Root))
	if t == "" {
		ws.Remove()
		return
	}
	to := filepath.Join(t, filepath.Base(ws.Root))
	if err := os.Rename(ws.Root, to); err != nil {
		ws.Remove()
		return
	}
	ws.Root = to
	c.removals.Add(1)
	go func() {
		defer c.removals.Done()
		removalSlots <- struct{}{}
		defer func() { <-removalSlots }()
		ws.Remove()
	}()
}

// WaitRemovals waits until the workspaces of every run executed with c
// so far are removed (an executor's Close).
func (c *Config) WaitRemovals() { c.removals.Wait() }
