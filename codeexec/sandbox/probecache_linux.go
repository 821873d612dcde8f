package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A successful trial is remembered in the file WithProbeCache names, under
// a key of everything that decides its outcome: the boot (the kernel, its
// settings since boot: /proc/sys/kernel/random/boot_id), bubblewrap's path
// and version, the helpers' paths, the agent's executable (path, size and
// change time: the command line it builds) and user, and the executor's
// options. A process whose key matches skips the trial (the tools are still
// looked up); any change runs it again. A run in a sandbox that no longer
// sets up still fails closed (ErrSandboxUnavailable, see Finish).

// probeKey is the key of a trial of s on h; "" when it cannot be made.
func (s *Executor) probeKey(h *sandboxHost) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "boot %s\nbwrap %s %s\nprlimit %s\nsetpriv %s\n", strings.TrimSpace(string(boot)), h.bwrap, h.version, h.prlimit, h.setpriv)
	fmt.Fprintf(&b, "exe %s %d %d\nuid %d root %v\n", exe, fi.Size(), fi.ModTime().UnixNano(), os.Geteuid(), h.root)
	fmt.Fprintf(&b, "opts %v %d %d %d %d %d %d %d %d %q %v\n", s.network, s.memory, s.procs, s.fileSize, s.cpu, s.tmpSize, s.uid, s.firstUID, s.uidCount, s.readOnly, s.noFilter)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// probeCached reports whether the probe cache holds key.
func (s *Executor) probeCached(key string) bool {
	if s.probeCache == "" || key == "" {
		return false
	}
	b, err := os.ReadFile(s.probeCache)
	return err == nil && strings.TrimSpace(string(b)) == key
}

// rememberProbe writes key to the probe cache, best effort (a file of the
// agent's user only, replaced atomically).
func (s *Executor) rememberProbe(key string) {
	if s.probeCache == "" || key == "" {
		return
	}
	dir := filepath.Dir(s.probeCache)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(s.probeCache)+".*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(key + "\n")
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), s.probeCache) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// probeCacheFile is the conventional probe cache below dir (a user's cache
// directory), per effective uid.
func probeCacheFile(dir string) string {
	return filepath.Join(dir, "adkskills", "sandbox-probe-"+strconv.Itoa(os.Geteuid()))
}
