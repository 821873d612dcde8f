package codeexec

import (
	"context"
	"errors"
	"os/exec"
	"testing"
)

// fakeLauncher is a launcher whose steps can fail, to test the pipeline's
// handling of the seam.
type fakeLauncher struct {
	prepareErr error
	noContext  bool // build the command without exec.CommandContext
	commandErr error
}

func (f fakeLauncher) stageMode() stageMode     { return stageCopy }
func (f fakeLauncher) prepare(*workspace) error { return f.prepareErr }

func (f fakeLauncher) command(ctx context.Context, p *plan) (*exec.Cmd, error) {
	if f.commandErr != nil {
		return nil, f.commandErr
	}
	if f.noContext {
		return exec.Command(p.argv[0], p.argv[1:]...), nil
	}
	return localLauncher{}.command(ctx, p)
}

func TestPipelineSeam(t *testing.T) {
	tests := []struct {
		name    string
		l       fakeLauncher
		wantErr error
		notErr  error // must not wrap this
	}{
		{"PrepareFails", fakeLauncher{prepareErr: errors.New("chown: denied")}, ErrWorkspace, nil},
		{"PrepareSentinelKept", fakeLauncher{prepareErr: ErrSandboxUnavailable}, ErrSandboxUnavailable, ErrWorkspace},
		{"CommandFails", fakeLauncher{commandErr: errors.New("no bwrap")}, ErrStart, nil},
		{"CommandSentinelKept", fakeLauncher{commandErr: ErrSandboxUnavailable}, ErrSandboxUnavailable, ErrStart},
		{"CommandWithoutContext", fakeLauncher{noContext: true}, ErrStart, nil},
		{"Works", fakeLauncher{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config{workspaceDir: t.TempDir()}
			res, err := execute(context.Background(), cfg, tt.l, script("scripts/a.sh", "echo hi"))
			if !errors.Is(err, tt.wantErr) || (err == nil) != (res != nil) {
				t.Errorf("execute = %v, %v; want %v", res, err, tt.wantErr)
			}
			if tt.notErr != nil && errors.Is(err, tt.notErr) {
				t.Errorf("err %v also wraps %v", err, tt.notErr)
			}
			if left := leftovers(cfg.workspaceDir); len(left) != 0 {
				t.Errorf("workspace left behind: %v", left)
			}
		})
	}
}
