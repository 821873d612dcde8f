//go:build linux

package agentsandboxtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	ktesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
	fakeagents "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned/fake"
	fakeextensions "sigs.k8s.io/agent-sandbox/clients/k8s/extensions/clientset/versioned/fake"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

// The cluster's fixed names and sizes.
const (
	// Pool is the SandboxWarmPool the cluster has.
	Pool = "skills-pool"
	// Namespace is where the pool is, and where claims get pods.
	Namespace = "agents"
	// WarmPods is how many pods the cluster keeps started ahead of claims.
	WarmPods = 4
)

// TB is what the cluster needs of a testing.TB; outside a test, give it a
// [Standalone].
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatal(args ...any)
	Errorf(format string, args ...any)
}

// Cluster is a fake agent-sandbox cluster with the warm pool [Pool] in
// [Namespace].
type Cluster struct {
	// Client is an agent-sandbox client for sandboxd with in-cluster pod IP
	// connectivity, built on Helper.
	Client *sandbox.Client
	// Helper holds the clients Client uses: the fake clientsets, and a
	// CoreClient and RestConfig that reach the fake API server, which
	// serves the pods' portforward subresource and nothing else.
	Helper *sandbox.K8sHelper
	// GRPCPort is sandboxd's gRPC port in every pod.
	GRPCPort int
	// Agents and Extensions are the fake clientsets. Prepend a reactor to
	// make the API fail (a claim that RBAC forbids, a delete that fails).
	Agents     *fakeagents.Clientset
	Extensions *fakeextensions.Clientset

	// NeverReady makes new claims get a Sandbox that never becomes Ready.
	NeverReady atomic.Bool
	// KillOnClaim makes a claim's pod die as its Sandbox becomes Ready, so
	// its sandboxd never answers.
	KillOnClaim atomic.Bool

	tb       TB
	root     string
	restPort int
	api      *httptest.Server
	forwards atomic.Int64

	mu      sync.Mutex
	pods    map[string]*Pod // by claim name
	created int
	deleted int
	nextIP  int
	warm    chan *Pod
	stop    chan struct{}
	wg      sync.WaitGroup
}

// Pod is one sandbox pod: a sandboxd in a PID namespace of its own.
type Pod struct {
	ip   string
	root string
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// NewCluster starts a fake cluster, torn down when the test ends. It needs
// the sandboxd binary: see [Main].
func NewCluster(tb TB) *Cluster {
	tb.Helper()
	if sandboxdBin == "" {
		tb.Fatal("agentsandboxtest: no sandboxd: call agentsandboxtest.Main from TestMain, or set ADKSKILLS_SANDBOXD")
	}
	c := &Cluster{
		tb:       tb,
		root:     tb.TempDir(),
		GRPCPort: freePort(tb),
		restPort: freePort(tb),
		Agents:   fakeagents.NewSimpleClientset(),
		Extensions: fakeextensions.NewSimpleClientset(&extv1beta1.SandboxWarmPool{
			ObjectMeta: metav1.ObjectMeta{Name: Pool, Namespace: Namespace},
			Spec:       extv1beta1.SandboxWarmPoolSpec{Replicas: ptr.To[int32](WarmPods)},
		}),
		pods: map[string]*Pod{},
		warm: make(chan *Pod, WarmPods),
		stop: make(chan struct{}),
	}
	c.api = httptest.NewServer(http.HandlerFunc(c.serveAPI))
	restConfig := &rest.Config{Host: c.api.URL}
	core, err := corev1client.NewForConfig(restConfig)
	if err != nil {
		tb.Fatal(err)
	}
	c.Helper = &sandbox.K8sHelper{
		AgentsClient:     c.Agents.AgentsV1beta1(),
		ExtensionsClient: c.Extensions.ExtensionsV1beta1(),
		CoreClient:       core,
		RestConfig:       restConfig,
		Log:              logr.Discard(),
	}
	c.Extensions.PrependReactor("create", "sandboxclaims", c.onClaim)
	c.Extensions.PrependReactor("delete", "sandboxclaims", c.onDelete)
	client, err := sandbox.NewClient(context.Background(), sandbox.Options{
		Runtime:             sandbox.RuntimeSandboxd,
		Connectivity:        sandbox.ConnectivityInClusterPodIP,
		SandboxdRESTPort:    c.restPort,
		SandboxdGRPCPort:    c.GRPCPort,
		SandboxReadyTimeout: time.Minute,
		K8sHelper:           c.Helper,
		Quiet:               true,
	})
	if err != nil {
		c.api.Close()
		tb.Fatal(err)
	}
	c.Client = client
	c.wg.Add(1)
	go c.refill()
	tb.Cleanup(c.close)
	return c
}

// Pod returns the pod of a live claim whose root directory has returns
// true for, or nil.
func (c *Cluster) Pod(has func(root string) bool) *Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pods {
		if has(p.root) {
			return p
		}
	}
	return nil
}

// Live returns how many claims have a pod.
func (c *Cluster) Live() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pods)
}

// Counts returns how many claims were created and how many deletes were
// asked for (a delete that a prepended reactor failed counts too).
func (c *Cluster) Counts() (created, deleted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created, c.deleted
}

// Forwards returns how many port-forward sessions the fake API server
// brokered.
func (c *Cluster) Forwards() int { return int(c.forwards.Load()) }

// Root returns the pod's sandboxd root directory.
func (p *Pod) Root() string { return p.root }

// Kill deletes the pod: every process in its PID namespace dies with it.
func (p *Pod) Kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		_ = os.RemoveAll(p.root)
	})
}

// refill keeps the warm pool full.
func (c *Cluster) refill() {
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
			p.Kill()
			return
		}
	}
}

// startPod starts a sandboxd on a loopback address of its own and waits
// until it accepts connections.
func (c *Cluster) startPod() (*Pod, error) {
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
		"-rest-port", strconv.Itoa(c.restPort), "-grpc-port", strconv.Itoa(c.GRPCPort))
	cmd := exec.Command("unshare", args...)
	// What the pod's environment holds must never reach a script.
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "GOOGLE_API_KEY=pod-secret-must-not-leak"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Pod{ip: ip, root: root, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	addr := net.JoinHostPort(ip, strconv.Itoa(c.GRPCPort))
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
			p.Kill()
			return nil, fmt.Errorf("sandboxd on %s did not listen", addr)
		}
	}
}

// podPrefix is how the controller names a claim's Sandbox (and its pod).
const podPrefix = "sb-"

// onClaim plays the controller for a new claim: it names it (the fake
// tracker does not honour GenerateName), gives it a warm pod and a Sandbox
// that is Ready (or never Ready), before the claim is stored, so the client
// finds both on its first look.
func (c *Cluster) onClaim(action ktesting.Action) (bool, runtime.Object, error) {
	claim := action.(ktesting.CreateAction).GetObject().(*extv1beta1.SandboxClaim)
	c.mu.Lock()
	c.created++
	if claim.Name == "" {
		claim.Name = claim.GenerateName + strconv.Itoa(c.created)
	}
	c.mu.Unlock()
	sb := &sandboxv1beta1.Sandbox{ObjectMeta: metav1.ObjectMeta{Name: podPrefix + claim.Name, Namespace: claim.Namespace}}
	ready := metav1.Condition{Type: string(sandboxv1beta1.SandboxConditionReady), Status: metav1.ConditionFalse, Reason: "SandboxNotReady"}
	// As the controller does, a claim on a pool that does not exist stays
	// not Ready (WarmPoolNotFound), retried until it is deleted.
	_, poolErr := c.Extensions.Tracker().Get(extv1beta1.SchemeGroupVersion.WithResource("sandboxwarmpools"), claim.Namespace, claim.Spec.WarmPoolRef.Name)
	if poolErr != nil {
		ready.Reason = "WarmPoolNotFound"
	}
	if !c.NeverReady.Load() && poolErr == nil {
		var p *Pod
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
		if c.KillOnClaim.Load() {
			p.Kill()
		}
	}
	sb.Status.Conditions = []metav1.Condition{ready}
	if _, err := c.Agents.AgentsV1beta1().Sandboxes(claim.Namespace).Create(context.Background(), sb, metav1.CreateOptions{}); err != nil {
		return true, nil, err
	}
	claim.Status.SandboxStatus.Name = sb.Name
	return false, nil, nil // the tracker stores the claim
}

// onDelete deletes the claim's pod, as the controller does.
func (c *Cluster) onDelete(action ktesting.Action) (bool, runtime.Object, error) {
	name := action.(ktesting.DeleteAction).GetName()
	c.mu.Lock()
	c.deleted++
	p := c.pods[name]
	delete(c.pods, name)
	c.mu.Unlock()
	if p != nil {
		p.Kill()
	}
	return false, nil, nil
}

// podNamed returns the pod of the Sandbox named name in namespace ns.
func (c *Cluster) podNamed(ns, name string) *Pod {
	claim, ok := strings.CutPrefix(name, podPrefix)
	if !ok || ns != Namespace {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pods[claim]
}

// close stops the API server, the warm pool and every pod.
func (c *Cluster) close() {
	c.api.CloseClientConnections()
	c.api.Close()
	close(c.stop)
	drain := func() {
		for {
			select {
			case p := <-c.warm:
				p.Kill()
			default:
				return
			}
		}
	}
	drain()
	c.wg.Wait()
	drain()
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, p := range c.pods {
		p.Kill()
		delete(c.pods, name)
	}
}

// freePort returns a TCP port free on loopback.
func freePort(tb TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sandboxdBin is the sandboxd binary Main found or built.
var sandboxdBin = os.Getenv("ADKSKILLS_SANDBOXD")

// Main runs m's tests with a sandboxd binary: $ADKSKILLS_SANDBOXD, else one
// it builds (into a temporary directory it removes afterwards) from the
// agent-sandbox module of codeexec/agentsandbox's build list. It returns
// the exit code for os.Exit; a failed build is reported and exits 1.
func Main(m *testing.M) int {
	if sandboxdBin != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "sandboxd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentsandboxtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sandboxd")
	if err := buildSandboxd(bin); err != nil {
		fmt.Fprintln(os.Stderr, "agentsandboxtest: building sandboxd:", err)
		return 1
	}
	sandboxdBin = bin
	return m.Run()
}

// sandboxdPackage is sandboxd's main package.
const sandboxdPackage = "sigs.k8s.io/agent-sandbox/packages/sandboxd/cmd/sandboxd"

// buildSandboxd builds sandboxd into bin, in codeexec/agentsandbox's own
// module, whose go.sum holds sandboxd's dependencies (it is a tool there).
func buildSandboxd(bin string) error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/adkskills/adkskills/codeexec/agentsandbox").Output()
	if err != nil {
		return fmt.Errorf("locating codeexec/agentsandbox: %w", err)
	}
	build := exec.Command("go", "build", "-o", bin, sandboxdPackage)
	build.Dir = strings.TrimSpace(string(out))
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	return build.Run()
}
