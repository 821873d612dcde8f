//go:build unix

package host

import (
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillPauses: the pauses between kills start at 50 µs and double up
// to 10 ms.
func TestKillPauses(t *testing.T) {
	const us = time.Microsecond
	want := []time.Duration{50 * us, 100 * us, 200 * us, 400 * us, 800 * us, 1600 * us, 3200 * us, 6400 * us, 10 * time.Millisecond, 10 * time.Millisecond}
	var got []time.Duration
	for p := range killPauses() {
		if got = append(got, p); len(got) == len(want) {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pauses %v, want %v", got, want)
	}
}

// TestKillUntilGone: kill is called until it finds nothing, or once more
// after the bound has passed.
func TestKillUntilGone(t *testing.T) {
	const found = 3 // calls that find something
	tests := []struct {
		name      string
		bound     time.Duration
		wantCalls int
	}{
		{"GoneWithinTheBound", GroupGoneBound, found + 1},
		{"BoundPassed", -time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			killUntilGone(tt.bound, func() bool {
				calls++
				return calls <= found
			})
			if calls != tt.wantCalls {
				t.Errorf("kill called %d times, want %d", calls, tt.wantCalls)
			}
		})
	}
}

// TestProcGroupFinish: once the leader has been waited for, finish kills
// the members of its group left running and returns only when none is
// left (a killed member not yet reaped by its new parent counts).
func TestProcGroupFinish(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
	g := newProcGroup(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	member, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	g.started(cmd.Process.Pid)
	g.finish()
	if err := syscall.Kill(member, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the group's member %d is still there after finish: %v", member, err)
		_ = syscall.Kill(member, syscall.SIGKILL)
	}
}
