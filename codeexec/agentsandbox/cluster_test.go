//go:build linux

package agentsandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ktesting "k8s.io/client-go/testing"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
	fakeagents "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned/fake"
	fakeextensions "sigs.k8s.io/agent-sandbox/clients/k8s/extensions/clientset/versioned/fake"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

// The tests run the executor against a fake cluster: agent-sandbox's own
// fake clientsets carry the claim lifecycle, and a reactor plays the
// controller. Each claim gets a "pod" of its own: a real sandboxd process,
// built from the module, listening on a loopback address of its own
// (127.77.x.y) with a temporary root, inside a PID namespace (unshare), so
// that deleting the claim kills everything the run left in the pod, as
// deleting a pod does. A small warm pool of pods is kept started, as a
// SandboxWarmPool keeps sandboxes ready.

// sandboxdBin is the sandboxd binary: $ADKSKILLS_SANDBOXD (.ci/run builds
// it), else built by TestMain.
var sandboxdBin string

func TestMain(m *testing.M) {
	code, err := runTests(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runTests(m *testing.M) (int, error) {
	sandboxdBin = os.Getenv("ADKSKILLS_SANDBOXD")
	if sandboxdBin == "" {
		dir, err := os.MkdirTemp("", "sandboxd-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		sandboxdBin = filepath.Join(dir, "sandboxd")
		build := exec.Command("go", "build", "-o", sandboxdBin, "sigs.k8s.io/agent-sandbox/packages/sandboxd/cmd/sandboxd")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return 0, fmt.Errorf("building sandboxd: %w", err)
		}
	}
	return m.Run(), nil
}

const (
	testPool      = "skills-pool"
	testNamespace = "agents"
	warmPods      = 4
)

// testingTB is what the cluster needs of a testing.TB (an Example has
// none: exampleTB stands in).
type testingTB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatal(args ...any)
	Errorf(format string, args ...any)
}

// cluster is the fake cluster.
type cluster struct {
	tb       testingTB
	root     string
	grpcPort int
	restPort int
	agents   *fakeagents.Clientset
	ext      *fakeextensions.Clientset
	helper   *sandbox.K8sHelper
	client   *sandbox.Client

	neverReady  atomic.Bool // claims get a sandbox that never becomes Ready
	killOnClaim atomic.Bool // a claim's pod dies as it becomes Ready

	mu      sync.Mutex
	pods    map[string]*fakePod // by claim name
	created int
	deleted int
	nextIP  int
	warm    chan *fakePod
	stop    chan struct{}
	wg      sync.WaitGroup
}

// fakePod is one sandbox pod: a sandboxd in a PID namespace of its own.
type fakePod struct {
	ip   string
	root string
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// newCluster starts a fake cluster with the warm pool testPool in
// testNamespace, torn down when the test ends.
func newCluster(tb testingTB) *cluster {
	tb.Helper()
	c := &cluster{
		tb:       tb,
		root:     tb.TempDir(),
		grpcPort: freePort(tb),
		restPort: freePort(tb),
		agents:   fakeagents.NewSimpleClientset(),
		ext:      fakeextensions.NewSimpleClientset(&extv1beta1.SandboxWarmPool{ObjectMeta: metav1.ObjectMeta{Name: testPool, Namespace: testNamespace}}),
		pods:     map[string]*fakePod{},
		warm:     make(chan *fakePod, warmPods),
		stop:     make(chan struct{}),
	}
	c.helper = &sandbox.K8sHelper{AgentsClient: c.agents.AgentsV1beta1(), ExtensionsClient: c.ext.ExtensionsV1beta1(), Log: logr.Discard()}
	c.ext.PrependReactor("create", "sandboxclaims", c.onClaim)
	c.ext.PrependReactor("delete", "sandboxclaims", c.onDelete)
	client, err := sandbox.NewClient(context.Background(), sandbox.Options{
		Runtime:             sandbox.RuntimeSandboxd,
		Connectivity:        sandbox.ConnectivityInClusterPodIP,
		SandboxdRESTPort:    c.restPort,
		SandboxdGRPCPort:    c.grpcPort,
		SandboxReadyTimeout: time.Minute,
		K8sHelper:           c.helper,
		Quiet:               true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	c.client = client
	c.wg.Add(1)
	go c.refill()
	tb.Cleanup(c.close)
	return c
}

// executor returns an executor on the cluster's warm pool.
func (c *cluster) executor(opts ...Option) *Executor {
	base := []Option{WithNamespace(testNamespace), WithGRPCPort(c.grpcPort), WithKubernetes(c.helper), WithClaimTimeout(10 * time.Second)}
	return New(c.client, testPool, append(base, opts...)...)
}

// pod returns the pod of a live claim for which has returns true.
func (c *cluster) pod(has func(root string) bool) *fakePod {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pods {
		if has(p.root) {
			return p
		}
	}
	return nil
}

// live returns how many claims have a pod.
func (c *cluster) live() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods)
}

// counts returns how many claims were created and deleted.
func (c *cluster) counts() (created, deleted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created, c.deleted
}

// refill keeps the warm pool full.
func (c *cluster) refill() {
	defer c.wg.Done()
	for {
		p, err := c.startPod()
		if err != nil {
			c.tb.Errorf("starting a pod: %v", err)
			return
		}
		select {
		case c.warm <- p:
		case <-c.stop:
			p.kill()
			return
		}
	}
}

// startPod starts a sandboxd on a loopback address of its own and waits
// until it accepts connections.
func (c *cluster) startPod() (*fakePod, error) {
	c.mu.Lock()
	c.nextIP++
	n := c.nextIP
	c.mu.Unlock()
	ip := fmt.Sprintf("127.77.%d.%d", n/250, n%250+2)
	root := filepath.Join(c.root, "pod-"+strconv.Itoa(n))
	if err := os.Mkdir(root, 0o755); err != nil {
		return nil, err
	}
	args := []string{"--pid", "--fork", "--kill-child", "--mount-proc"}
	if os.Geteuid() != 0 {
		args = append(args, "--user", "--map-root-user")
	}
	args = append(args, sandboxdBin, "-listen-host", ip, "-root-dir", root,
		"-rest-port", strconv.Itoa(c.restPort), "-grpc-port", strconv.Itoa(c.grpcPort))
	cmd := exec.Command("unshare", args...)
	// What the pod's environment holds must never reach a script.
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "GOOGLE_API_KEY=pod-secret-must-not-leak"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &fakePod{ip: ip, root: root, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	addr := net.JoinHostPort(ip, strconv.Itoa(c.grpcPort))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("sandboxd on %s exited", addr)
		default:
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("sandboxd on %s did not listen", addr)
		}
	}
}

// kill deletes the pod: every process in its PID namespace dies with it.
func (p *fakePod) kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		_ = os.RemoveAll(p.root)
	})
}

// onClaim plays the controller for a new claim: it names it (the fake
// tracker does not honour GenerateName), gives it a warm pod and a Sandbox
// that is Ready (or never Ready), before the claim is stored, so the client
// finds both on its first look.
func (c *cluster) onClaim(action ktesting.Action) (bool, runtime.Object, error) {
	claim := action.(ktesting.CreateAction).GetObject().(*extv1beta1.SandboxClaim)
	c.mu.Lock()
	c.created++
	if claim.Name == "" {
		claim.Name = claim.GenerateName + strconv.Itoa(c.created)
	}
	c.mu.Unlock()
	sb := &sandboxv1beta1.Sandbox{ObjectMeta: metav1.ObjectMeta{Name: "sb-" + claim.Name, Namespace: claim.Namespace}}
	ready := metav1.Condition{Type: string(sandboxv1beta1.SandboxConditionReady), Status: metav1.ConditionFalse, Reason: "SandboxNotReady"}
	// As the controller does, a claim on a pool that does not exist stays
	// not Ready (WarmPoolNotFound), retried until it is deleted.
	_, poolErr := c.ext.Tracker().Get(extv1beta1.SchemeGroupVersion.WithResource("sandboxwarmpools"), claim.Namespace, claim.Spec.WarmPoolRef.Name)
	if poolErr != nil {
		ready.Reason = "WarmPoolNotFound"
	}
	if !c.neverReady.Load() && poolErr == nil {
		var p *fakePod
		select {
		case p = <-c.warm:
		case <-time.After(20 * time.Second):
			return true, nil, fmt.Errorf("no warm pod")
		}
		c.mu.Lock()
		c.pods[claim.Name] = p
		c.mu.Unlock()
		sb.Status.PodIPs = []string{p.ip}
		ready.Status, ready.Reason = metav1.ConditionTrue, "Ready"
		if c.killOnClaim.Load() {
			p.kill()
		}
	}
	sb.Status.Conditions = []metav1.Condition{ready}
	if _, err := c.agents.AgentsV1beta1().Sandboxes(claim.Namespace).Create(context.Background(), sb, metav1.CreateOptions{}); err != nil {
		return true, nil, err
	}
	claim.Status.SandboxStatus.Name = sb.Name
	return false, nil, nil // the tracker stores the claim
}

// onDelete deletes the claim's pod, as the controller does.
func (c *cluster) onDelete(action ktesting.Action) (bool, runtime.Object, error) {
	name := action.(ktesting.DeleteAction).GetName()
	c.mu.Lock()
	c.deleted++
	p := c.pods[name]
	delete(c.pods, name)
	c.mu.Unlock()
	if p != nil {
		p.kill()
	}
	return false, nil, nil
}

// close stops the warm pool and every pod.
func (c *cluster) close() {
	close(c.stop)
	for {
		select {
		case p := <-c.warm:
			p.kill()
			continue
		default:
		}
		break
	}
	c.wg.Wait()
	for {
		select {
		case p := <-c.warm:
			p.kill()
			continue
		default:
		}
		break
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, p := range c.pods {
		p.kill()
		delete(c.pods, name)
	}
}

// freePort returns a TCP port free on loopback.
func freePort(tb testingTB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
