package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// runUser is who a run's processes are when the agent is root: uid:gid on
// the host, insideUID:insideGID as the script sees itself.
type runUser struct {
	uid, gid             int
	insideUID, insideGID int
	lease                *os.File // holds uid for the run; nil for WithUser's
}

// insideID is the uid and gid a script of a per-run uid sees itself as:
// nobody, who has a name in every /etc/passwd.
const insideID = 65534

// uidLeaseDirs are where the leases of per-run uids are kept, the first
// usable one winning: /run is the host's (or the container's) and not
// private to a service the way a systemd PrivateTmp /tmp is.
var uidLeaseDirs = []string{"/run", os.TempDir()}

// uidLeaseDirName is the directory of lease files in one of uidLeaseDirs.
const uidLeaseDirName = "adkskills-uids"

// user returns the user a run is to be: the fixed WithUser, or a
// uid of the run's own leased from the range of WithUIDs. A leased
// uid is held, by a lock on a file named after it, until the lease is
// closed, so two runs never share one, in this process or any other that
// leases from the same directory. Leasing starts at a random place in the
// range, so agents that cannot see each other's leases (in containers
// with separate /run and /tmp) are unlikely to meet.
func (s *Executor) user() (runUser, error) {
	if s.uid > 0 {
		return runUser{uid: s.uid, gid: s.gid, insideUID: s.uid, insideGID: s.gid}, nil
	}
	first, count := s.firstUID, s.uidCount
	if count == 0 {
		first, count = DefaultFirstUID, DefaultUIDCount
	}
	dir, err := uidLeaseDir()
	if err != nil {
		return runUser{}, fmt.Errorf("%w: per-run uids: %v", codeexec.ErrSandboxUnavailable, err)
	}
	start := rand.IntN(count)
	for i := range count {
		uid := first + (start+i)%count
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(uid)), os.O_RDWR|os.O_CREATE|host.NoFollow, 0o600)
		if err != nil {
			return runUser{}, fmt.Errorf("%w: per-run uids: %v", codeexec.ErrSandboxUnavailable, err)
		}
		if host.TryLock(f) {
			return runUser{uid: uid, gid: uid, insideUID: insideID, insideGID: insideID, lease: f}, nil
		}
		f.Close()
	}
	return runUser{}, fmt.Errorf("%w: all %d sandbox uids from %d are in use by other runs: wait for runs to end, or widen WithUIDs", codeexec.ErrSandboxUnavailable, count, first)
}

// uidLeaseDir returns the lease directory, creating it: a directory of the
// agent's (root's), not a link, that no one else can write.
func uidLeaseDir() (string, error) {
	var errs []error
	for _, base := range uidLeaseDirs {
		d := filepath.Join(base, uidLeaseDirName)
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			errs = append(errs, err)
			continue
		}
		if !host.OwnDir(d, 0o022) {
			errs = append(errs, fmt.Errorf("%s is not a directory of uid %d that only it can write", d, os.Geteuid()))
			continue
		}
		return d, nil
	}
	return "", errors.Join(errs...)
}

// release gives the user's uid back.
func (u runUser) release() {
	if u.lease != nil {
		_ = unix.Flock(int(u.lease.Fd()), unix.LOCK_UN)
		_ = u.lease.Close()
	}
}
