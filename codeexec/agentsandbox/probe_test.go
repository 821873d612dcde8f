//go:build linux

package agentsandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ktesting "k8s.io/client-go/testing"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
	extensionsclientset "sigs.k8s.io/agent-sandbox/clients/k8s/extensions/clientset/versioned"

	"github.com/adkskills/adkskills/codeexec"
)

// claims is the resource the RBAC failures concern.
var claims = schema.GroupResource{Group: "extensions.agents.x-k8s.io", Resource: "sandboxclaims"}

// forbid makes the cluster refuse verb on claims, as RBAC does.
func forbid(c *cluster, verb string) {
	c.Extensions.PrependReactor(verb, "sandboxclaims", func(ktesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(claims, "", errors.New(`User "system:serviceaccount:agents:adk-agent" cannot `+verb+` resource "sandboxclaims"`))
	})
}

func TestProbe(t *testing.T) {
	const (
		claimTimeout   = 500 * time.Millisecond
		connectTimeout = 500 * time.Millisecond
	)
	timeouts := []Option{WithClaimTimeout(claimTimeout), WithConnectTimeout(connectTimeout)}
	tests := []struct {
		name  string
		setup func(c *cluster) *Executor
		// wants are the sentinels the error wraps (none: Probe succeeds);
		// says, what its text must say.
		wants []error
		says  []string
		// created and deleted are the claims the probe leaves counted.
		created, deleted int
		forwards         int
	}{
		{name: "Ready", setup: func(c *cluster) *Executor { return c.executor(timeouts...) }, created: 1, deleted: 1},
		{name: "ReadyThroughPortForward", setup: func(c *cluster) *Executor { return c.executor(append(timeouts, WithPortForward())...) },
			created: 1, deleted: 1, forwards: 1},
		{name: "NoSuchPool", setup: func(c *cluster) *Executor {
			return New(c.Client, "no-such-pool", append(timeouts, WithNamespace(testNamespace), WithGRPCPort(c.GRPCPort), WithKubernetes(c.Helper))...)
		}, wants: []error{ErrNoWarmPool}, says: []string{`"no-such-pool"`, `namespace "agents" has ` + testPool}},
		{name: "WrongNamespace", setup: func(c *cluster) *Executor { return c.executor(append(timeouts, WithNamespace("elsewhere"))...) },
			wants: []error{ErrNoWarmPool}, says: []string{`namespace "elsewhere" has no warm pool at all: is it the right namespace?`}},
		{name: "ClaimsForbidden", setup: func(c *cluster) *Executor { forbid(c, "create"); return c.executor(timeouts...) },
			wants: []error{ErrClaimNotReady}, says: []string{"forbidden", "RBAC forbids it", "deploy/agent/rbac.yaml"}},
		{name: "NeverReady", setup: func(c *cluster) *Executor { c.NeverReady.Store(true); return c.executor(timeouts...) },
			wants: []error{ErrClaimNotReady}, says: []string{"the warm pool has 0 of 4 sandboxes ready", "describe sandboxwarmpool " + testPool},
			created: 1, deleted: 1},
		{name: "SandboxdUnreachable", setup: func(c *cluster) *Executor { c.KillOnClaim.Store(true); return c.executor(timeouts...) },
			wants: []error{ErrUnreachable}, says: []string{"NetworkPolicy admits only the agent's pods", "app: adk-agent"}, created: 1, deleted: 1},
		{name: "SandboxdUnreachableThroughPortForward", setup: func(c *cluster) *Executor {
			c.KillOnClaim.Store(true)
			return c.executor(append(timeouts, WithPortForward())...)
		}, wants: []error{ErrUnreachable}, says: []string{"create on pods/portforward"}, created: 1, deleted: 1, forwards: 1},
		{name: "ImageLacksTools", setup: func(c *cluster) *Executor {
			return c.executor(append(timeouts, WithEnv(map[string]string{"PATH": "/nonexistent"}))...)
		}, wants: []error{}, says: []string{"the sandbox image cannot run scripts: no tar in PATH /nonexistent"}, created: 1, deleted: 1},
		{name: "DeleteForbidden", setup: func(c *cluster) *Executor { forbid(c, "delete"); return c.executor(timeouts...) },
			wants: []error{}, says: []string{"deleting claim sandbox-claim-1 failed", "kubectl -n agents delete sandboxclaim sandbox-claim-1"}, created: 1},
		{name: "APIServerUnreachable", setup: func(c *cluster) *Executor {
			h := unreachableAPI(t)
			client, err := sandbox.NewClient(context.Background(), sandbox.Options{Runtime: sandbox.RuntimeSandboxd, Connectivity: sandbox.ConnectivityInClusterPodIP, K8sHelper: h, Quiet: true})
			if err != nil {
				t.Fatal(err)
			}
			return New(client, testPool, append(timeouts, WithNamespace(testNamespace), WithKubernetes(h))...)
		}, wants: []error{ErrClaimNotReady}, says: []string{"the Kubernetes API server at http://127.0.0.1:1 does not answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			e := tt.setup(c)
			start := time.Now()
			err := e.Probe(context.Background())
			elapsed := time.Since(start)
			t.Logf("Probe: %v", err)
			if tt.wants == nil {
				if err != nil {
					t.Fatalf("Probe: %v", err)
				}
			} else {
				if !errors.Is(err, codeexec.ErrSandboxUnavailable) {
					t.Errorf("err = %v, want codeexec.ErrSandboxUnavailable", err)
				}
				for _, w := range tt.wants {
					if !errors.Is(err, w) {
						t.Errorf("err = %v, want %v", err, w)
					}
				}
				for _, s := range tt.says {
					if err == nil || !strings.Contains(err.Error(), s) {
						t.Errorf("err = %v\nwant it to say %q", err, s)
					}
				}
			}
			if limit := claimTimeout + 2*connectTimeout + grace; elapsed > limit {
				t.Errorf("Probe took %v, want at most %v", elapsed, limit)
			}
			created, deleted := c.Counts()
			if created != tt.created || deleted != tt.deleted || c.Live() != tt.created-tt.deleted {
				t.Errorf("claims created %d, deleted %d, pods left %d; want %d created, %d deleted", created, deleted, c.Live(), tt.created, tt.deleted)
			}
			if got := c.Forwards(); got != tt.forwards {
				t.Errorf("%d port-forwards, want %d", got, tt.forwards)
			}
		})
	}
}

// unreachableAPI returns Kubernetes clients whose API server does not
// answer (a closed port).
func unreachableAPI(t *testing.T) *sandbox.K8sHelper {
	t.Helper()
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	ext, err := extensionsclientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &sandbox.K8sHelper{ExtensionsClient: ext.ExtensionsV1beta1(), RestConfig: cfg, Log: logr.Discard()}
}

// TestProbeEndsWithTheContext: a probe the caller gives up on returns at
// once and leaves no claim.
func TestProbeEndsWithTheContext(t *testing.T) {
	const after = 300 * time.Millisecond
	c := newCluster(t)
	c.NeverReady.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), after)
	defer cancel()
	start := time.Now()
	err := c.executor().Probe(ctx) // a 10 s claim timeout
	if !errors.Is(err, codeexec.ErrSandboxUnavailable) {
		t.Errorf("err = %v, want codeexec.ErrSandboxUnavailable", err)
	}
	if elapsed := time.Since(start); elapsed > after+grace {
		t.Errorf("Probe took %v after its context ended at %v", elapsed, after)
	}
	claimsBalanced(t, c, 1)
}

func TestProbeInvalidConfig(t *testing.T) {
	if err := New(nil, "pool").Probe(context.Background()); !errors.Is(err, codeexec.ErrInvalidConfig) {
		t.Errorf("err = %v, want codeexec.ErrInvalidConfig", err)
	}
}
