package hook

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRun: a hook that cannot hand a listener over or cannot run its
// command says why and exits as a shell would; one that could hands over
// a socket listening on 127.0.0.1:port first.
func TestRun(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	agent := fds[0]
	defer syscall.Close(agent)
	defer syscall.Close(fds[1])
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	dup := func(fd int) string { // Run closes the descriptor it is given
		d, err := syscall.Dup(fd)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.Itoa(d)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port) // free: each listener handed over is closed at once
	l.Close()
	tests := []struct {
		name string
		args []string
		code int
		msg  string
		sent bool // a listener was handed over
	}{
		{"no arguments", nil, Failed, "usage", false},
		{"no --", []string{"3", port, "true"}, Failed, "usage", false},
		{"descriptor not a number", []string{"x", port, "--", "true"}, Failed, "bad descriptor", false},
		{"standard descriptor", []string{"2", port, "--", "true"}, Failed, "bad descriptor", false},
		{"port zero", []string{"3", "0", "--", "true"}, Failed, "port", false},
		{"port with a leading zero", []string{dup(int(pw.Fd())), "0" + port, "--", "true"}, Failed, "port", false},
		{"descriptor not a socket", []string{dup(int(pw.Fd())), port, "--", "true"}, Failed, "handing the listener over", false},
		{"command not a path", []string{dup(fds[1]), port, "--", "true"}, NotFound, "must be a path", true},
		{"command missing", []string{dup(fds[1]), port, "--", "/nonexistent/command"}, NotFound, "/nonexistent/command", true},
		{"command not executable", []string{dup(fds[1]), port, "--", "/dev/null"}, Failed, "/dev/null", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := Run(tt.args, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.msg) || !strings.HasPrefix(stderr.String(), "adkskills egress hook: ") {
				t.Errorf("Run(%q) = %d %q, want %d %q", tt.args, code, stderr.String(), tt.code, tt.msg)
			}
			if !tt.sent {
				return
			}
			buf, oob := make([]byte, 1), make([]byte, syscall.CmsgSpace(4))
			n, oobn, _, _, err := syscall.Recvmsg(agent, buf, oob, syscall.MSG_DONTWAIT)
			if err != nil || n != 1 || buf[0] != 'L' {
				t.Fatalf("no listener handed over: %d %q %v", n, buf, err)
			}
			msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
			if err != nil || len(msgs) != 1 {
				t.Fatalf("control messages %v %v", msgs, err)
			}
			got, err := syscall.ParseUnixRights(&msgs[0])
			if err != nil || len(got) != 1 {
				t.Fatalf("rights %v %v", got, err)
			}
			defer syscall.Close(got[0])
			if v, err := syscall.GetsockoptInt(got[0], syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN); err != nil || v != 1 {
				t.Errorf("not listening: %d %v", v, err)
			}
			sa, err := syscall.Getsockname(got[0])
			if in, ok := sa.(*syscall.SockaddrInet4); err != nil || !ok || in.Addr != [4]byte{127, 0, 0, 1} || strconv.Itoa(in.Port) != port {
				t.Errorf("listens on %#v (%v), want 127.0.0.1:%s", sa, err, port)
			}
		})
	}
}
