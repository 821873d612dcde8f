//go:build darwin || freebsd || netbsd

package host

import (
	"syscall"
	"time"
)

// statCtime is the change time a syscall.Stat_t records.
func statCtime(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
}
