package local

import (
	"strings"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"github.com/adkskills/adkskills/codeexec/internal/hostsuite"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

func TestLocalHost(t *testing.T) {
	hostsuite.RunSuite(t, newLocal)
}

// TestLocalSetsidEscapee pins what Local does with a process that calls
// setsid and so leaves the run's process group: where the run has a cgroup
// of its own it dies with the run; elsewhere (the documented limit) it
// survives. Either way the call returns after WaitDelay at most.
func TestLocalSetsidEscapee(t *testing.T) {
	const delay = 300 * time.Millisecond
	marker := hosttest.NewMarker(t)
	req := codeexectest.Script("scripts/escape.sh", hosttest.EscapeeScript)
	req.Env = map[string]string{hosttest.MarkerVar: marker}
	_, elapsed := hosttest.RunBounded(t, New(WithWaitDelay(delay)), req, 0, marker)
	if limit := delay + hosttest.Grace; elapsed > limit {
		t.Errorf("Execute took %v, want within %v", elapsed, limit)
	}
	alive := len(hosttest.MarkedProcesses(marker)) > 0
	if bounded := !strings.HasPrefix(host.CgroupReport(), "no run cgroup"); alive == bounded {
		t.Errorf("escapee alive %v with run cgroups %v (%s): update Local's documentation", alive, bounded, host.CgroupReport())
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
	if o.MemoryLimit != 0 {
		opts = append(opts, WithMemoryLimit(o.MemoryLimit))
	}
	if o.DependencyStore != "" {
		opts = append(opts, WithDependencyStore(o.DependencyStore, 0))
	}
	if o.NoInstall {
		opts = append(opts, WithDependencies(false))
	}
	return New(opts...)
}
