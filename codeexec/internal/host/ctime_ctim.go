//go:build aix || dragonfly || illumos || linux || openbsd || solaris

package host

import (
	"syscall"
	"time"
)

// statCtime is the change time a syscall.Stat_t records.
func statCtime(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
}
