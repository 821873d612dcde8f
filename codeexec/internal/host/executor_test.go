//go:build unix

package host

import (
	"context"
	"os/exec"

	"github.com/adkskills/adkskills/codeexec"
)

// testLauncher runs the child as a plain host process, as codeexec/local's
// launcher does, staging the skill in mode.
type testLauncher struct{ mode StageMode }

func (l testLauncher) StageMode() StageMode   { return l.mode }
func (testLauncher) RecordsGroup()            {}
func (testLauncher) Prepare(*Workspace) error { return nil }
func (testLauncher) Command(ctx context.Context, p *Plan) (*exec.Cmd, error) {
	return DirectCommand(ctx, p), nil
}

// testExecutor is a host executor over a launcher.
type testExecutor struct {
	cfg Config
	l   Launcher
}

func (e *testExecutor) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	return Execute(ctx, &e.cfg, e.l, req)
}

// newLocal is a host executor like codeexec/local's, configured by opts.
func newLocal(opts ...func(*Config)) *testExecutor {
	return newStaging(StageCloneOrLink, opts...)
}

// newStaging is a host executor that stages skills in mode.
func newStaging(mode StageMode, opts ...func(*Config)) *testExecutor {
	e := &testExecutor{l: testLauncher{mode}}
	for _, o := range opts {
		o(&e.cfg)
	}
	return e
}

func withWorkspaceDir(dir string) func(*Config) { return func(c *Config) { c.SetWorkspaceDir(dir) } }
func withSnapshotCache(n int64) func(*Config)   { return func(c *Config) { c.SetSnapshotCache(n) } }
