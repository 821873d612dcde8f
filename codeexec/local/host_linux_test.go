package local

import (
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/hostsuite"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

func TestLocalHost(t *testing.T) {
	hostsuite.RunSuite(t, newLocal)
}

// TestLocalSetsidEscapee pins the documented limit of Local: a process that
// calls setsid leaves the process group and survives the run; the call
// still returns after WaitDelay.
func TestLocalSetsidEscapee(t *testing.T) {
	const delay = 300 * time.Millisecond
	marker := hosttest.NewMarker(t)
	req := hosttest.Script("scripts/escape.sh", hosttest.EscapeeScript)
	req.Env = map[string]string{hosttest.MarkerVar: marker}
	_, elapsed := hosttest.RunBounded(t, New(WithWaitDelay(delay)), req, 0, marker)
	if elapsed < delay {
		t.Errorf("Execute took %v, less than WaitDelay %v: did the escapee hold stdout?", elapsed, delay)
	}
	if len(hosttest.MarkedProcesses(marker)) == 0 {
		t.Errorf("the setsid escapee did not survive: update Local's documentation")
	}
}

// newLocal builds a Local with the suite's options.
func newLocal(o hostsuite.Options) codeexec.Executor {
	var opts []Option
	if o.Env != nil {
		opts = append(opts, WithEnv(o.Env))
	}
	if o.PassEnv != nil {
		opts = append(opts, WithPassEnv(o.PassEnv...))
	}
	if o.WaitDelay != 0 {
		opts = append(opts, WithWaitDelay(o.WaitDelay))
	}
	if o.WorkspaceDir != "" {
		opts = append(opts, WithWorkspaceDir(o.WorkspaceDir))
	}
	return New(opts...)
}
