package hosttest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// MarkerVar is the environment variable that tags every process of a test
// run, so the test can find Survivors in /proc.
const MarkerVar = "ADKSKILLS_TEST_RUN"

// Grace is how long past its limit a killed run may take to return on a
// contended machine (a loaded CI runner starting six sandboxes at once takes
// seconds). A broken kill makes the run last SleepSeconds, or until a test
// gives up at HardDeadline: both far past it.
const (
	Grace        = 10 * time.Second
	SleepSeconds = 300
	HardDeadline = 30 * time.Second // a test gives up on a run after this
)

// EscapeeScript starts a process that leaves the process group (setsid)
// keeping the script's stdout, and waits until it has left before exiting.
var EscapeeScript = fmt.Sprintf(`setsid sleep %d &
pid=$!
until [ "$(cut -d' ' -f6 /proc/$pid/stat)" = "$pid" ]; do sleep 0.01; done
echo started
`, SleepSeconds)

// RunBounded is codeexectest.RunBounded, and kills every process marked
// with marker when the test ends (a broken kill fails the test instead of
// leaving processes behind).
func RunBounded(t *testing.T, e codeexec.Executor, req *codeexec.Request, cancelAt time.Duration, marker string) (*codeexec.Result, time.Duration) {
	t.Helper()
	t.Cleanup(func() { KillMarked(marker) })
	return codeexectest.RunBounded(t, e, req, cancelAt)
}

// NewMarker returns a value for MarkerVar unique to this test run.
func NewMarker(t *testing.T) string {
	return strings.ReplaceAll(t.Name(), "/", ".") + "-" + RandHex(8)
}

// Survivors returns the live (non-zombie) processes whose environment
// carries MarkerVar=marker, waiting briefly for SIGKILLed ones to finish
// exiting.
func Survivors(marker string) []int {
	var pids []int
	for deadline := time.Now().Add(Grace); ; time.Sleep(20 * time.Millisecond) {
		pids = MarkedProcesses(marker)
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
	}
}

// MarkedProcesses scans /proc for live processes tagged with marker.
func MarkedProcesses(marker string) []int {
	needle := []byte(MarkerVar + "=" + marker + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue // exited, waiting to be reaped
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(environ, needle) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// KillMarked SIGKILLs every process tagged with marker (test cleanup only).
func KillMarked(marker string) {
	for _, pid := range MarkedProcesses(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Describe names pids with their command lines.
func Describe(pids []int) []string {
	var out []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

func RandHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
