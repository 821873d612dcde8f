package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Pair returns the two ends of a handoff: the agent keeps agent and reads
// the listener from it with [ReceiveListener]; child goes to the sandbox
// as the descriptor the hook's command line names (package hook's Args) (an exec.Cmd's ExtraFiles), and the
// agent closes its own copy of child once the sandbox has started.
func Pair() (agent *net.UnixConn, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrHandoff, err)
	}
	f := os.NewFile(uintptr(fds[0]), "egress-handoff")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("%w: %v", ErrHandoff, err)
	}
	return c.(*net.UnixConn), os.NewFile(uintptr(fds[1]), "egress-handoff-child"), nil
}

// ReceiveListener waits on c for the listener the hook hands over and
// returns it, once it has checked that it is what the hook was asked to
// make: one TCP socket listening on 127.0.0.1:port, in a network namespace
// that is not the agent's own (so a sandbox that lost its namespace never
// opens the proxy to the host). What comes over c comes from inside the
// sandbox and is checked as hostile. It returns an error wrapping
// [ErrHandoff] when the hook exits without handing anything over (c reads
// end of file once every copy of the child end is closed), or ctx's error.
func ReceiveListener(ctx context.Context, c *net.UnixConn, port uint16) (net.Listener, error) {
	stop := context.AfterFunc(ctx, func() { _ = c.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, flags, _, err := c.ReadMsgUnix(buf, oob)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, io.EOF):
		n, oobn = 0, 0
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrHandoff, err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	switch {
	case n == 0 && oobn == 0:
		return nil, fmt.Errorf("%w: the sandbox ended before its hook handed a listener over", ErrHandoff)
	case flags&unix.MSG_CTRUNC != 0 || len(fds) != 1:
		closeAll(fds)
		return nil, fmt.Errorf("%w: want one descriptor from the sandbox, got %d (truncated: %t)", ErrHandoff, len(fds), flags&unix.MSG_CTRUNC != 0)
	}
	if err := checkListener(fds[0], port); err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("%w: %v", ErrHandoff, err)
	}
	f := os.NewFile(uintptr(fds[0]), "egress-listener")
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHandoff, err)
	}
	return l, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// checkListener checks that fd is a TCP socket listening on
// 127.0.0.1:port in a network namespace other than the agent's.
func checkListener(fd int, port uint16) error {
	for _, o := range []struct {
		name      string
		opt, want int
	}{
		{"domain", unix.SO_DOMAIN, unix.AF_INET},
		{"type", unix.SO_TYPE, unix.SOCK_STREAM},
		{"protocol", unix.SO_PROTOCOL, unix.IPPROTO_TCP},
		{"listening", unix.SO_ACCEPTCONN, 1},
	} {
		v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, o.opt)
		if err != nil {
			return fmt.Errorf("not a listening TCP socket: %w", err)
		}
		if v != o.want {
			return fmt.Errorf("not a listening TCP/IPv4 socket (%s %d, want %d)", o.name, v, o.want)
		}
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	if in, ok := sa.(*unix.SockaddrInet4); !ok || in.Addr != [4]byte{127, 0, 0, 1} || in.Port != int(port) {
		return fmt.Errorf("the socket listens on %s, want 127.0.0.1:%d", sockaddrString(sa), port)
	}
	return checkNetns(fd)
}

// checkNetns refuses a socket of the agent's own network namespace. The
// kernel names a socket's namespace only to a process with CAP_NET_ADMIN
// over it, which the agent has over its sandboxes' (they are its own user
// namespaces' or, for a root agent, any) and a non-root agent lacks over
// its own.
func checkNetns(fd int) error {
	ns, err := unix.IoctlRetInt(fd, unix.SIOCGSKNS)
	if err != nil {
		return fmt.Errorf("the socket's network namespace is not one of the sandbox's: %w", err)
	}
	defer unix.Close(ns)
	var theirs, mine unix.Stat_t
	if err := unix.Fstat(ns, &theirs); err != nil {
		return err
	}
	if err := unix.Stat("/proc/thread-self/ns/net", &mine); err != nil {
		return err
	}
	if theirs.Ino == mine.Ino && theirs.Dev == mine.Dev {
		return errors.New("the socket is in the agent's own network namespace: the sandbox must have one of its own")
	}
	return nil
}

// sockaddrString prints a socket address for an error.
func sockaddrString(sa unix.Sockaddr) string {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *unix.SockaddrInet6:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	}
	return fmt.Sprintf("%T", sa)
}
