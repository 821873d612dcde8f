package agentsandbox

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/execenv"
	"github.com/adkskills/adkskills/codeexec/internal/host"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
)

// Defaults of the options.
const (
	// DefaultNamespace is where claims are created unless WithNamespace says
	// otherwise (the agent-sandbox client's own default).
	DefaultNamespace = "default"
	// DefaultGRPCPort is sandboxd's ProcessService port in the pod.
	DefaultGRPCPort = 9090
	// DefaultClaimTimeout bounds claiming a sandbox until it is Ready.
	DefaultClaimTimeout = 30 * time.Second
	// DefaultConnectTimeout bounds reaching sandboxd once the sandbox is Ready.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultTransferTimeout bounds staging the skill folder and, separately,
	// collecting the output files.
	DefaultTransferTimeout = 2 * time.Minute
	// DefaultCleanupTimeout bounds deleting the claim after a run, on a
	// context detached from the caller's (so a cancelled run still deletes it).
	DefaultCleanupTimeout = 30 * time.Second
	// DefaultPATH is the script's PATH in the pod unless WithEnv sets one.
	DefaultPATH = execenv.DefaultPATH
)

// Option configures an [Executor].
type Option func(*config)

// config is an Executor's configuration.
type config struct {
	namespace       string
	grpcPort        int
	serviceDNS      bool
	portForward     bool
	dialer          func(ctx context.Context, addr string) (net.Conn, error)
	helper          *sandbox.K8sHelper
	claimTimeout    time.Duration
	connectTimeout  time.Duration
	transferTimeout time.Duration
	cleanupTimeout  time.Duration
	shared          host.Config // the interpreter table and WithEnv, as the host executors keep them
}

func defaultConfig() config {
	return config{
		namespace:       DefaultNamespace,
		grpcPort:        DefaultGRPCPort,
		claimTimeout:    DefaultClaimTimeout,
		connectTimeout:  DefaultConnectTimeout,
		transferTimeout: DefaultTransferTimeout,
		cleanupTimeout:  DefaultCleanupTimeout,
	}
}

// WithNamespace sets the namespace claims are created in (default
// [DefaultNamespace]); the warm pool must be there.
func WithNamespace(ns string) Option {
	return func(c *config) {
		if ns == "" {
			c.shared.Invalid(fmt.Errorf("WithNamespace: empty namespace"))
		}
		c.namespace = ns
	}
}

// WithGRPCPort sets sandboxd's ProcessService port in the pod (default
// [DefaultGRPCPort]); it must match the template's --grpc-port and the
// client's Options.SandboxdGRPCPort.
func WithGRPCPort(port int) Option {
	return func(c *config) {
		if port < 1 || port > 65535 {
			c.shared.Invalid(fmt.Errorf("WithGRPCPort(%d): not a port", port))
		}
		c.grpcPort = port
	}
}

// WithServiceDNS makes the executor reach sandboxd through the sandbox's
// headless Service (Status.ServiceFQDN; the template needs spec.service:
// true) instead of its pod IP: a pod IP that Kubernetes reassigned cannot
// then route a run to a stranger's pod. Pair it with the client's
// ConnectivityInClusterService.
func WithServiceDNS() Option {
	return func(c *config) { c.serviceDNS = true }
}

// WithDialer replaces how the executor opens its connection to sandboxd's
// gRPC address ("host:port", the pod IP or Service name and the gRPC port).
// Use it to reach pods from outside the cluster (through a port-forward) or
// in tests. Nil restores the default, a plain TCP dial.
func WithDialer(dial func(ctx context.Context, addr string) (net.Conn, error)) Option {
	return func(c *config) { c.dialer = dial }
}

// WithPortForward makes the executor reach sandboxd through a
// port-forward to the sandbox's pod that the Kubernetes API server brokers,
// as kubectl port-forward does (SPDY, one session per run, nothing
// listening on the agent's host): for an agent outside the cluster, such
// as adkskills on a laptop, where pod IPs do not route and the sandbox
// NetworkPolicy admits only the agent's pods. It needs [WithKubernetes]
// with a helper that has a CoreClient and a RestConfig
// (sandbox.NewK8sHelper builds both), and the identity in the kubeconfig
// needs create on pods/portforward besides what claims need. It excludes
// WithDialer and WithServiceDNS.
func WithPortForward() Option {
	return func(c *config) { c.portForward = true }
}

// WithKubernetes gives the executor the Kubernetes clients the sandbox
// client was built with (sandbox.Options.K8sHelper). With them, Execute
// checks that the warm pool exists before it claims (a missing pool then
// fails at once with [ErrNoWarmPool] instead of waiting out the claim
// timeout); the agent's Role needs get on sandboxwarmpools.
func WithKubernetes(h *sandbox.K8sHelper) Option {
	return func(c *config) { c.helper = h }
}

// WithClaimTimeout bounds claiming a sandbox until it is Ready (default
// [DefaultClaimTimeout]); past it Execute returns [ErrClaimNotReady].
func WithClaimTimeout(d time.Duration) Option {
	return durationOption("WithClaimTimeout", d, func(c *config) *time.Duration { return &c.claimTimeout })
}

// WithConnectTimeout bounds reaching sandboxd once the sandbox is Ready
// (default [DefaultConnectTimeout]); past it Execute returns [ErrUnreachable].
func WithConnectTimeout(d time.Duration) Option {
	return durationOption("WithConnectTimeout", d, func(c *config) *time.Duration { return &c.connectTimeout })
}

// WithTransferTimeout bounds staging the skill folder and, separately,
// collecting the output files (default [DefaultTransferTimeout]). The
// script's own time limit is the request's.
func WithTransferTimeout(d time.Duration) Option {
	return durationOption("WithTransferTimeout", d, func(c *config) *time.Duration { return &c.transferTimeout })
}

// WithCleanupTimeout bounds deleting the claim after a run (default
// [DefaultCleanupTimeout]).
func WithCleanupTimeout(d time.Duration) Option {
	return durationOption("WithCleanupTimeout", d, func(c *config) *time.Duration { return &c.cleanupTimeout })
}

// check reports the combinations of options that cannot work.
func (c *config) check() {
	if !c.portForward {
		return
	}
	switch {
	case c.helper == nil || c.helper.CoreClient == nil || c.helper.RestConfig == nil:
		c.shared.Invalid(fmt.Errorf("WithPortForward needs WithKubernetes with a helper that has a CoreClient and a RestConfig (sandbox.NewK8sHelper builds both)"))
	case c.dialer != nil:
		c.shared.Invalid(fmt.Errorf("WithPortForward and WithDialer both choose how sandboxd is reached: give one"))
	case c.serviceDNS:
		c.shared.Invalid(fmt.Errorf("WithPortForward and WithServiceDNS both choose how sandboxd is reached: give one"))
	}
}

// durationOption sets a positive duration; zero keeps the default.
func durationOption(name string, d time.Duration, field func(*config) *time.Duration) Option {
	return func(c *config) {
		switch {
		case d < 0:
			c.shared.Invalid(fmt.Errorf("%s(%v): negative", name, d))
		case d > 0:
			*field(c) = d
		}
	}
}

// WithInterpreters replaces the interpreter table (default
// codeexec.DefaultInterpreters; nil restores it). Commands are looked up in
// the pod's PATH; the table is copied.
func WithInterpreters(t codeexec.Interpreters) Option {
	return func(c *config) { c.shared.SetInterpreters(t) }
}

// WithEnv adds variables to every run's environment, above the allowlist,
// below codeexec.Request.Env. Nothing of the pod's own environment reaches a
// script; set PATH here if the image's interpreters are outside
// [DefaultPATH]. Calls accumulate; a later value for a name wins.
func WithEnv(env map[string]string) Option {
	return func(c *config) { c.shared.AddEnv(env) }
}
