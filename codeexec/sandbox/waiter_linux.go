package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// The waiter is the last helper of a prepared sandbox: the agent's own
// executable (bound at hookPath, like the egress hook), started by the
// inner bubblewrap under the filter, in the script's namespaces, as the
// run's user, with waiterFlag as its first argument (this package's init runs
// it, whatever the program's main). It reads the run's command line,
// environment and folder from goFD, which the agent writes once the skill
// is staged, closes it, sets the run's rlimits (prlimit's in an unprepared
// run) and executes the script in its place. A prepared
// sandbox released unused reads end of file and exits.

// waiterFlag, as the first argument, makes a process the waiter.
const waiterFlag = "-adkskills-sandbox-waiter"

// goFD is the waiter's descriptor of the pipe it reads its run from (the
// handoff's number: a prepared sandbox has no egress); readyFD the pipe it
// writes one byte to, and closes, once it runs: the sandbox is up.
const (
	goFD    = handoffFD
	readyFD = hookExeFD + 1
)

// maxGoMessage bounds what the waiter reads: a request's arguments and
// environment are bounded well below it.
const maxGoMessage = 64 << 20

// goMessage is what the waiter reads.
type goMessage struct {
	Argv    []string `json:"argv"`
	Env     []string `json:"env"`
	Dir     string   `json:"dir"`
	Rlimits []rlimit `json:"rlimits"`
}

// rlimit is one resource limit, set as both the soft and the hard limit.
type rlimit struct {
	Resource int    `json:"r"`
	Value    uint64 `json:"v"`
}

// Exit statuses of a waiter that ran no script, as a shell's.
const (
	waiterReleased = 125 // released unused: end of file
	waiterFailed   = 126
	waiterNotFound = 127
)

func init() {
	if len(os.Args) > 3 && os.Args[1] == waiterFlag {
		os.Exit(runWaiter(os.Args[2], os.Args[3], os.Stderr))
	}
}

// runWaiter runs the waiter on its descriptor arguments: it returns only
// when it ran no script, with the exit status.
func runWaiter(goArg, readyArg string, stderr io.Writer) int {
	fd, err := strconv.Atoi(goArg)
	ready, err2 := strconv.Atoi(readyArg)
	if err != nil || err2 != nil || fd < 3 || ready < 3 {
		fmt.Fprintf(stderr, "adkskills sandbox waiter: bad descriptors %q %q\n", goArg, readyArg)
		return waiterFailed
	}
	_, _ = unix.Write(ready, []byte{'R'})
	_ = unix.Close(ready)
	f := os.NewFile(uintptr(fd), "go")
	b, err := io.ReadAll(io.LimitReader(f, maxGoMessage))
	f.Close()
	if err == nil && len(b) == 0 {
		return waiterReleased
	}
	var m goMessage
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err == nil && len(m.Argv) == 0 {
		err = fmt.Errorf("no command")
	}
	if err != nil {
		fmt.Fprintf(stderr, "adkskills sandbox waiter: %v\n", err)
		return waiterFailed
	}
	for _, r := range m.Rlimits {
		if err := unix.Setrlimit(r.Resource, &unix.Rlimit{Cur: r.Value, Max: r.Value}); err != nil {
			fmt.Fprintf(stderr, "adkskills sandbox waiter: rlimit %d: %v\n", r.Resource, err)
			return waiterFailed
		}
	}
	if err := unix.Chdir(m.Dir); err != nil {
		fmt.Fprintf(stderr, "adkskills sandbox waiter: %s: %v\n", m.Dir, err)
		return waiterFailed
	}
	err = unix.Exec(m.Argv[0], m.Argv, m.Env)
	fmt.Fprintf(stderr, "%s: %v\n", m.Argv[0], err)
	if err == unix.ENOENT {
		return waiterNotFound
	}
	return waiterFailed
}
