package host

import (
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// fakeLauncher is a launcher whose steps can fail, to test the pipeline's
// handling of the seam.
type fakeLauncher struct {
	prepareErr error
	noContext  bool // build the command without exec.CommandContext
	commandErr error
}

func (f fakeLauncher) StageMode() StageMode     { return StageCopy }
func (f fakeLauncher) Prepare(*Workspace) error { return f.prepareErr }

func (f fakeLauncher) Command(ctx context.Context, p *Plan) (*exec.Cmd, error) {
	if f.commandErr != nil {
		return nil, f.commandErr
	}
	if f.noContext {
		return exec.Command(p.Argv[0], p.Argv[1:]...), nil
	}
	return DirectCommand(ctx, p), nil
}

func TestPipelineSeam(t *testing.T) {
	tests := []struct {
		name    string
		l       fakeLauncher
		wantErr error
		notErr  error // must not wrap this
	}{
		{"PrepareFails", fakeLauncher{prepareErr: errors.New("chown: denied")}, codeexec.ErrWorkspace, nil},
		{"PrepareSentinelKept", fakeLauncher{prepareErr: codeexec.ErrSandboxUnavailable}, codeexec.ErrSandboxUnavailable, codeexec.ErrWorkspace},
		{"CommandFails", fakeLauncher{commandErr: errors.New("no bwrap")}, codeexec.ErrStart, nil},
		{"CommandSentinelKept", fakeLauncher{commandErr: codeexec.ErrSandboxUnavailable}, codeexec.ErrSandboxUnavailable, codeexec.ErrStart},
		{"CommandWithoutContext", fakeLauncher{noContext: true}, codeexec.ErrStart, nil},
		{"Works", fakeLauncher{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Config{workspaceDir: t.TempDir()}
			res, err := Execute(context.Background(), cfg, tt.l, codeexectest.Script("scripts/a.sh", "echo hi"))
			if !errors.Is(err, tt.wantErr) || (err == nil) != (res != nil) {
				t.Errorf("execute = %v, %v; want %v", res, err, tt.wantErr)
			}
			if tt.notErr != nil && errors.Is(err, tt.notErr) {
				t.Errorf("err %v also wraps %v", err, tt.notErr)
			}
			if left := Leftovers(cfg.workspaceDir); len(left) != 0 {
				t.Errorf("workspace left behind: %v", left)
			}
		})
	}
}
