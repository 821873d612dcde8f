//go:build !linux

package host

import (
	"errors"
	"time"
)

// runCgroup is never made off Linux.
type runCgroup struct{ memBytes int64 }

// cgroupHost is never found off Linux.
type cgroupHost struct{}

// hostCgroups reports that runs get no cgroup off Linux.
func hostCgroups() (*cgroupHost, error) { return nil, errors.New("cgroups need Linux") }

// RunCgroups lists no run cgroup off Linux.
func RunCgroups() []string { return nil }

// CgroupReport says that runs get no cgroup off Linux.
func CgroupReport() string { return "no run cgroup (cgroups need Linux)" }

func (h *cgroupHost) create(int64, int) (*runCgroup, error) {
	return nil, errors.New("cgroups need Linux")
}
func (g *runCgroup) oomKilled() bool    { return false }
func (g *runCgroup) kill(time.Duration) {}
func (g *runCgroup) remove()            {}
