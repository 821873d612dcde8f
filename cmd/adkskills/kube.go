package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/agentsandbox"
)

// kubeTarget is the cluster --agent-sandbox claims its pods in.
type kubeTarget struct {
	// helper holds the Kubernetes clients.
	helper *sandbox.K8sHelper
	// namespace is the kubeconfig context's namespace, or the pod's own in
	// the cluster.
	namespace string
	// inCluster: the command runs in a pod, which reaches sandbox pods by
	// IP; outside, it goes through port-forwards.
	inCluster bool
	// server names the API server, for messages.
	server string
	// options are appended to the executor's (a test's fake cluster needs
	// its own sandboxd port).
	options []agentsandbox.Option
}

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// errNoCluster: neither a kubeconfig nor a pod's service account says
// which cluster to use.
var errNoCluster = errors.New("no Kubernetes cluster")

// loadKube finds the cluster as kubectl does: the files KUBECONFIG lists,
// else ~/.kube/config, else, in a pod, its service account.
func loadKube(getenv func(string) string) (*kubeTarget, error) {
	rules := &clientcmd.ClientConfigLoadingRules{}
	switch v, home := getenv("KUBECONFIG"), getenv("HOME"); {
	case v != "":
		rules.Precedence = filepath.SplitList(v)
	case home != "":
		rules.Precedence = []string{filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)}
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig (%s): %w", strings.Join(rules.Precedence, string(filepath.ListSeparator)), err)
	}
	if len(raw.Contexts) == 0 {
		return inCluster(rules.Precedence)
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig (%s): %w", strings.Join(rules.Precedence, string(filepath.ListSeparator)), err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, err
	}
	return newTarget(cfg, ns, false)
}

// inCluster is the target of a command that runs in a pod, or errNoCluster
// naming the kubeconfig files that were not there.
func inCluster(looked []string) (*kubeTarget, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		where := "KUBECONFIG is not set and there is no ~/.kube/config"
		if len(looked) > 0 {
			where = "no kubeconfig in " + strings.Join(looked, string(filepath.ListSeparator))
		}
		return nil, fmt.Errorf("%w: %s, and this is not a pod (%v): point KUBECONFIG at your cluster's", errNoCluster, where, err)
	}
	ns := "default"
	if data, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(data)) != "" {
		ns = strings.TrimSpace(string(data))
	}
	return newTarget(cfg, ns, true)
}

func newTarget(cfg *rest.Config, ns string, in bool) (*kubeTarget, error) {
	h, err := sandbox.NewK8sHelper(cfg, logr.Discard())
	if err != nil {
		return nil, err
	}
	return &kubeTarget{helper: h, namespace: ns, inCluster: in, server: cfg.Host}, nil
}

// agentSandbox returns the executor --agent-sandbox asks for, probed: a
// claim round trip on the warm pool, so that a wrong pool, namespace,
// cluster or RBAC fails here, before anything runs.
func (c *cli) agentSandbox(ctx context.Context, ex *execFlags) (codeexec.Executor, string, error) {
	load := c.env.kube
	if load == nil {
		load = loadKube
	}
	k, err := load(c.env.getenv)
	if err != nil {
		return nil, "", fmt.Errorf("--agent-sandbox: %w", err)
	}
	ns := ex.namespace
	if ns == "" {
		ns = k.namespace
	}
	client, err := sandbox.NewClient(ctx, sandbox.Options{
		Runtime: sandbox.RuntimeSandboxd,
		// The client only claims; the executor reaches sandboxd itself.
		Connectivity: sandbox.ConnectivityInClusterPodIP,
		K8sHelper:    k.helper,
		Quiet:        true,
	})
	if err != nil {
		return nil, "", fmt.Errorf("--agent-sandbox: %w", err)
	}
	opts := []agentsandbox.Option{agentsandbox.WithNamespace(ns), agentsandbox.WithKubernetes(k.helper)}
	via := "pod IPs"
	if !k.inCluster {
		opts = append(opts, agentsandbox.WithPortForward())
		via = "port-forwards through " + k.server
	}
	exe := agentsandbox.New(client, ex.agentSandbox, append(opts, k.options...)...)
	if err := exe.Probe(ctx); err != nil {
		return nil, "", fmt.Errorf("--agent-sandbox %s: %w", ex.agentSandbox, err)
	}
	return exe, fmt.Sprintf("in pods of agent-sandbox warm pool %s in namespace %s, through %s", ex.agentSandbox, ns, via), nil
}

// checkKubeNames reports a --agent-sandbox or --namespace that cannot name
// a Kubernetes object.
func checkKubeNames(pool, ns string) error {
	if errs := validation.IsDNS1123Subdomain(pool); len(errs) > 0 {
		return fmt.Errorf("--agent-sandbox %q is not a warm pool's name: %s", pool, strings.Join(errs, "; "))
	}
	if ns == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("--namespace %q is not a namespace's name: %s", ns, strings.Join(errs, "; "))
	}
	return nil
}
