//go:build linux

package agentsandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/agentsandbox/agentsandboxtest"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// claimsBalanced fails the test unless every claim created was deleted and
// no pod is left.
func claimsBalanced(t *testing.T, c *cluster, wantCreated int) {
	t.Helper()
	created, deleted := c.Counts()
	if created != wantCreated || deleted != created || c.Live() != 0 {
		t.Errorf("claims created %d, deleted %d, pods left %d; want %d created, all deleted", created, deleted, c.Live(), wantCreated)
	}
}

func TestClaimNeverReady(t *testing.T) {
	const timeout = 300 * time.Millisecond
	c := newCluster(t)
	c.NeverReady.Store(true)
	start := time.Now()
	_, err := c.executor(WithClaimTimeout(timeout)).Execute(context.Background(), script("scripts/a.sh", "echo never"))
	if !errors.Is(err, ErrClaimNotReady) || !errors.Is(err, codeexec.ErrSandboxUnavailable) {
		t.Errorf("err = %v, want ErrClaimNotReady and codeexec.ErrSandboxUnavailable", err)
	}
	if elapsed := time.Since(start); elapsed > timeout+grace {
		t.Errorf("Execute took %v with a %v claim timeout", elapsed, timeout)
	}
	claimsBalanced(t, c, 1)
}

func TestWarmPoolMissing(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name        string
		kubernetes  bool // the executor can look the pool up
		want        error
		wantCreated int
	}{
		// It says so at once, and claims nothing.
		{"Checked", true, ErrNoWarmPool, 0},
		// The controller leaves the claim not Ready (WarmPoolNotFound).
		{"Unchecked", false, ErrClaimNotReady, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			opts := []Option{WithNamespace(testNamespace), WithGRPCPort(c.GRPCPort), WithClaimTimeout(timeout)}
			if tt.kubernetes {
				opts = append(opts, WithKubernetes(c.Helper))
			}
			e := New(c.Client, "no-such-pool", opts...)
			_, err := e.Execute(context.Background(), script("scripts/a.sh", "echo x"))
			if !errors.Is(err, tt.want) || !errors.Is(err, codeexec.ErrSandboxUnavailable) {
				t.Errorf("err = %v, want %v and codeexec.ErrSandboxUnavailable", err, tt.want)
			}
			claimsBalanced(t, c, tt.wantCreated)
		})
	}
}

func TestSandboxdUnreachable(t *testing.T) {
	const timeout = 300 * time.Millisecond
	c := newCluster(t)
	c.KillOnClaim.Store(true)
	_, err := c.executor(WithConnectTimeout(timeout)).Execute(context.Background(), script("scripts/a.sh", "echo x"))
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, codeexec.ErrSandboxUnavailable) {
		t.Errorf("err = %v, want ErrUnreachable and codeexec.ErrSandboxUnavailable", err)
	}
	claimsBalanced(t, c, 1)
}

func TestSandboxdDiesMidRun(t *testing.T) {
	c := newCluster(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.executor().Execute(context.Background(), script("scripts/a.sh", "echo started > started\nsleep 60"))
		done <- err
	}()
	var p *agentsandboxtest.Pod
	for deadline := time.Now().Add(hardDeadline); p == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the script never started")
		}
		p = c.Pod(func(root string) bool {
			_, err := os.Stat(filepath.Join(root, codeexec.DefaultSkillName, "started"))
			return err == nil
		})
	}
	p.Kill()
	var err error
	select {
	case err = <-done:
	case <-time.After(hardDeadline):
		t.Fatal("Execute did not return after its pod died")
	}
	var lost *LostError
	if !errors.As(err, &lost) || !lost.Started || !errors.Is(err, ErrConnectionLost) || errors.Is(err, codeexec.ErrSandboxUnavailable) {
		t.Errorf("err = %v, want a LostError that says the script started (and not ErrSandboxUnavailable)", err)
	}
	claimsBalanced(t, c, 1)
}

func TestUploadLimit(t *testing.T) {
	const limit = 8 << 20
	c := newCluster(t)
	tests := []struct {
		name        string
		extra       int // bytes beside the script
		wantErr     error
		wantCreated int
	}{
		{"AtTheLimit", limit, nil, 1},
		{"OverTheLimit", limit + 1, codeexec.ErrInvalidRequest, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := c.Counts()
			src := "import os\nprint(os.path.getsize('data/blob'))\n"
			req := &codeexec.Request{
				Files:  []codeexec.File{{Path: "data/blob", Data: make([]byte, tt.extra-len(src))}, {Path: "scripts/size.py", Data: []byte(src)}},
				Script: "scripts/size.py",
				Limits: codeexec.Limits{MaxSkillBytes: limit},
			}
			res, err := c.executor().Execute(context.Background(), req)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && strings.TrimSpace(res.Stdout.Text) != strconv.Itoa(tt.extra-len(src)) {
				t.Errorf("stdout %q stderr %q", res.Stdout.Text, res.Stderr.Text)
			}
			if after, _ := c.Counts(); after-before != tt.wantCreated {
				t.Errorf("%d claims created, want %d", after-before, tt.wantCreated)
			}
		})
	}
	claimsBalanced(t, c, 1)
}

func TestClaimDeletedOnEveryPath(t *testing.T) {
	const limit = 500 * time.Millisecond
	tests := []struct {
		name     string
		req      *codeexec.Request
		cancelAt time.Duration
		wantErr  error
		claims   int
	}{
		{name: "Success", req: script("scripts/a.sh", "echo ok > out.txt"), claims: 1},
		{name: "Failure", req: script("scripts/a.sh", "echo bad >&2; exit 1"), claims: 1},
		{name: "Timeout", req: &codeexec.Request{Skill: codeexectest.Skill(map[string]string{"scripts/a.sh": "sleep 60"}), Script: "scripts/a.sh", Limits: codeexec.Limits{Timeout: limit}}, claims: 1},
		{name: "Cancel", req: script("scripts/a.sh", "sleep 60"), cancelAt: limit, claims: 1},
		// Valid, fails in the pod: a name longer than NAME_MAX.
		{name: "StagingError", req: &codeexec.Request{Skill: codeexectest.Skill(map[string]string{"scripts/a.sh": "", "data/" + strings.Repeat("n", 300): ""}), Script: "scripts/a.sh"}, wantErr: codeexec.ErrWorkspace, claims: 1},
		{name: "StartError", req: &codeexec.Request{Skill: codeexectest.Skill(map[string]string{"scripts/a.sh": ""}), Script: "scripts/a.sh",
			Interpreter: &codeexec.Interpreter{Language: "x", Command: []string{"/nonexistent/interpreter"}}}, wantErr: codeexec.ErrStart, claims: 1},
		// A request's PATH is the script's, not the helpers': staging
		// still unpacks, and the interpreter is not found in that PATH.
		{name: "RequestPATH", req: &codeexec.Request{Skill: codeexectest.Skill(map[string]string{"scripts/a.sh": ""}), Script: "scripts/a.sh",
			Env: map[string]string{"PATH": "/nonexistent"}}, wantErr: codeexec.ErrStart, claims: 1},
		{name: "InvalidRequest", req: &codeexec.Request{Script: "a.sh"}, wantErr: codeexec.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			ctx := context.Background()
			if tt.cancelAt > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(tt.cancelAt, cancel)
				defer cancel()
			}
			res, err := c.executor().Execute(ctx, tt.req)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.cancelAt > 0 && (err != nil || !res.TimedOut) {
				t.Errorf("a cancelled run: %+v, %v; want TimedOut", res, err)
			}
			claimsBalanced(t, c, tt.claims)
		})
	}
}

// TestPrintsBeforeReadingStdin: a script that prints more than the
// transport buffers before it reads its stdin still gets all of it, because
// stdin is written beside the stream, not before reading it.
func TestPrintsBeforeReadingStdin(t *testing.T) {
	const printed = 8 * windowBytes
	stdin := strings.Repeat("s", 4*stdinChunk)
	c := newCluster(t)
	req := script("scripts/p.py", "import sys\nsys.stdout.write('x' * int(sys.argv[1]))\nsys.stdout.flush()\nprint(len(sys.stdin.read()))\n")
	req.Args = []string{strconv.Itoa(printed)}
	req.Stdin = []byte(stdin)
	req.Limits.Timeout = hardDeadline
	res, err := c.executor().Execute(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || res.Stdout.TotalChars != int64(printed+len(strconv.Itoa(len(stdin)))+1) || !strings.HasSuffix(res.Stdout.Text, strconv.Itoa(len(stdin))+"\n") {
		t.Errorf("timed out %v, %d characters ending %q", res.TimedOut, res.Stdout.TotalChars, res.Stdout.Text[max(0, len(res.Stdout.Text)-20):])
	}
}

// TestConnectionLostWhileStaging: a connection that breaks while the skill
// is being uploaded is a LostError that says the script did not start.
func TestConnectionLostWhileStaging(t *testing.T) {
	const cut = 4 * stdinChunk // bytes the connection carries before it breaks
	c := newCluster(t)
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return &breakingConn{Conn: conn, left: cut}, nil
	}
	req := script("scripts/a.sh", "echo never")
	req.Files = []codeexec.File{{Path: "data/blob", Data: make([]byte, 4*cut)}}
	_, err := c.executor(WithDialer(dial)).Execute(context.Background(), req)
	var lost *LostError
	if !errors.As(err, &lost) || lost.Started || !errors.Is(err, codeexec.ErrSandboxUnavailable) {
		t.Errorf("err = %v, want a LostError that says the script did not start", err)
	}
	claimsBalanced(t, c, 1)
}

// breakingConn closes itself once it has written left bytes.
type breakingConn struct {
	net.Conn
	left int
}

func (c *breakingConn) Write(b []byte) (int, error) {
	if c.left -= len(b); c.left < 0 {
		c.Conn.Close()
		return 0, net.ErrClosed
	}
	return c.Conn.Write(b)
}

// TestPortForwardOutlivesConnectTimeout: the connect timeout bounds opening
// a port-forward, not the session: a run longer than it goes on.
func TestPortForwardOutlivesConnectTimeout(t *testing.T) {
	const connect = 300 * time.Millisecond
	c := newCluster(t)
	req := script("scripts/slow.sh", "sleep "+strconv.FormatFloat((3*connect).Seconds(), 'f', -1, 64)+"; echo done")
	res, err := c.executor(WithPortForward(), WithConnectTimeout(connect)).Execute(context.Background(), req)
	if err != nil || res.Stdout.Text != "done\n" || res.TimedOut {
		t.Fatalf("%+v, %v", res, err)
	}
	if c.Forwards() != 1 {
		t.Errorf("%d port-forwards, want 1", c.Forwards())
	}
	claimsBalanced(t, c, 1)
}
