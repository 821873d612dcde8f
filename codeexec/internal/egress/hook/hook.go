// Package hook is the inside half of an egress allowlist: the agent's own
// executable started in the sandbox before the script (see Flag). It
// imports the standard library alone, so that Go initializes it among the
// first packages, and its initialization, which runs the hook, comes
// before the agent's own (a Kubernetes client's, a model SDK's), which
// would otherwise cost each sandboxed run tens of milliseconds.
package hook

import (
	"errors"
	"fmt"
	"strconv"
)

// Flag, as the first argument, makes a process the hook.
const Flag = "-adkskills-egress-hook"

// Exit statuses of a hook that could not run the script, as a shell's.
const (
	Failed   = 126
	NotFound = 127
)

// Args returns the command line that runs argv behind the hook: exe is
// the agent's executable as the sandbox sees it, fd the descriptor number
// the child end of the handoff has there, port the port to listen on.
// Append the script's argv to it.
func Args(exe string, fd int, port uint16) []string {
	return []string{exe, Flag, strconv.Itoa(fd), strconv.Itoa(int(port)), "--"}
}

// Call returns the hook's arguments when argv starts the hook.
func Call(argv []string) ([]string, bool) {
	if len(argv) > 1 && argv[1] == Flag {
		return argv[2:], true
	}
	return nil, false
}

// ParsePort parses a TCP port: a decimal number from 1 to 65535 without a
// sign or a leading zero.
func ParsePort(s string) (uint16, error) {
	if s == "" {
		return 0, errors.New("no port: write host:port, e.g. api.example.com:443")
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 || s[0] == '0' || s[0] == '+' {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return uint16(n), nil
}
