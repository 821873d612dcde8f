package hook

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The hook listens on 127.0.0.1:port in the sandbox's network namespace,
// hands the listening socket to the agent over the descriptor it was
// given, closes everything of its own and executes the script in its
// place (the "reexec" pattern: this package's init runs it, whatever the
// program's main). It needs no privilege: the socket belongs to the
// sandbox's namespace because the hook made it there, and the agent
// accepts on it from outside.

func init() {
	if args, ok := Call(os.Args); ok {
		os.Exit(Run(args, os.Stderr))
	}
}

// Run runs the hook on its arguments (after Flag): it returns only when it
// failed, with the exit status.
func Run(args []string, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "adkskills egress hook: %v\n", err)
		return code
	}
	if len(args) < 4 || args[2] != "--" {
		return fail(Failed, errors.New("usage: FD PORT -- COMMAND [ARG...]"))
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		return fail(Failed, fmt.Errorf("bad descriptor %q", args[0]))
	}
	port, err := ParsePort(args[1])
	if err != nil {
		return fail(Failed, err)
	}
	if err := handOver(fd, port); err != nil {
		return fail(Failed, err)
	}
	argv := args[3:]
	if !strings.Contains(argv[0], "/") {
		// No PATH search: os/exec would have this package initialized
		// after most of the agent's (see the package's doc).
		return fail(NotFound, fmt.Errorf("%s: the command must be a path", argv[0]))
	}
	err = syscall.Exec(argv[0], argv, os.Environ())
	if errors.Is(err, syscall.ENOENT) {
		return fail(NotFound, fmt.Errorf("%s: %w", argv[0], err))
	}
	return fail(Failed, fmt.Errorf("%s: %w", argv[0], err))
}

// handOver listens on 127.0.0.1:port, sends the socket over fd and closes
// both.
func handOver(fd int, port uint16) error {
	defer syscall.Close(fd)
	s, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(s)
	if err := syscall.Bind(s, &syscall.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("listening on 127.0.0.1:%d: %w", port, err)
	}
	if err := syscall.Listen(s, syscall.SOMAXCONN); err != nil {
		return fmt.Errorf("listening on 127.0.0.1:%d: %w", port, err)
	}
	if err := syscall.Sendmsg(fd, []byte{'L'}, syscall.UnixRights(s), nil, 0); err != nil {
		return fmt.Errorf("handing the listener over: %w", err)
	}
	return nil
}
