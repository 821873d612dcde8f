package agentsandbox

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"

	"github.com/adkskills/adkskills/codeexec"
)

// probeScript runs in the probe's pod with the helpers' PATH: it checks the
// tools every run drives, in the flavours it needs, and prints what is
// wrong.
const probeScript = `for t in tar find setsid; do
  command -v "$t" >/dev/null 2>&1 || { echo "no $t in PATH $PATH"; exit 3; }
done
case "$(tar --version 2>/dev/null)" in *"GNU tar"*) ;; *) echo "tar is not GNU tar"; exit 3;; esac
find . -maxdepth 0 -printf '' >/dev/null 2>&1 || { echo "find is not GNU find (no -printf)"; exit 3; }
exit 0
`

// rbacRules is what the agent's identity needs, as deploy/agent/rbac.yaml
// in adkskills' repository grants it.
const rbacRules = "create, get, list, watch and delete on sandboxclaims, get on sandboxwarmpools, get, list and watch on sandboxes"

// Probe checks at start-up that the executor can run scripts, with a claim
// round trip: it checks the warm pool, claims a sandbox from it, reaches
// the sandbox's sandboxd, runs a trivial process there that checks the
// tools every run drives (GNU tar, GNU find, setsid), and deletes the
// claim, on every path.
//
// It returns nil, or an error that says what is wrong and what to change: a
// configuration error wraps codeexec.ErrInvalidConfig; anything else wraps
// codeexec.ErrSandboxUnavailable and, where one applies, [ErrNoWarmPool]
// (the pool or the namespace is wrong), [ErrClaimNotReady] (RBAC forbids
// claims, the API server is unreachable, no sandbox became Ready) or
// [ErrUnreachable] (sandboxd does not answer). It takes at most the claim
// timeout plus twice the connect timeout, then the cleanup timeout to
// delete its claim; ctx can end it sooner.
func (e *Executor) Probe(ctx context.Context) error {
	if err := e.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.claimTimeout+2*e.cfg.connectTimeout)
	defer cancel()
	sb, err := e.claim(ctx)
	if err != nil {
		return fmt.Errorf("agentsandbox: probe: %w%s", err, e.claimHint(ctx, err))
	}
	err = e.try(ctx, sb)
	if derr := e.deleteClaim(ctx, sb); derr != nil {
		derr = fmt.Errorf("agentsandbox: probe: %w: deleting claim %s failed, so every run would leave its claim and pod behind: %w; the agent's identity needs %s; delete the claim by hand: kubectl -n %s delete sandboxclaim %s",
			codeexec.ErrSandboxUnavailable, sb.ClaimName(), derr, rbacRules, e.cfg.namespace, sb.ClaimName())
		err = errors.Join(err, derr)
	}
	return err
}

// try runs the probe's process in sb.
func (e *Executor) try(ctx context.Context, sb *sandbox.Sandbox) error {
	p, err := e.connect(sb)
	if err != nil {
		return fmt.Errorf("agentsandbox: probe: %w%s", err, e.reachHint())
	}
	defer p.close()
	var out note
	pr, err := p.start(ctx, proc{
		argv:    argv([]string{"PATH=" + p.helperPATH()}, "/bin/sh", "-c", probeScript, "adkskills-probe"),
		stdout:  &out,
		stderr:  &out,
		connect: true,
	})
	switch {
	case errors.Is(err, errStopped):
		return fmt.Errorf("agentsandbox: probe: %w: a trivial process in sandbox %s did not finish in time: %w", codeexec.ErrSandboxUnavailable, sb.SandboxName(), context.Cause(ctx))
	case errors.Is(err, ErrUnreachable):
		return fmt.Errorf("agentsandbox: probe: %w%s", err, e.reachHint())
	case err != nil:
		return fmt.Errorf("agentsandbox: probe: %w", err)
	case pr.exit != 0:
		return fmt.Errorf("agentsandbox: probe: %w: the sandbox image cannot run scripts: %s (exit %d): build it like deploy/agent-sandbox/Dockerfile (a Debian-based image has GNU tar, GNU find and util-linux's setsid)",
			codeexec.ErrSandboxUnavailable, strings.TrimSpace(out.String()), pr.exit)
	}
	return nil
}

// reachHint says what keeps an agent from reaching a Ready sandbox's
// sandboxd.
func (e *Executor) reachHint() string {
	if e.cfg.portForward {
		return fmt.Sprintf("; the port-forward goes through the API server: the identity in the kubeconfig needs create on pods/portforward in namespace %q, and sandboxd must listen on port %d in the pod (the template's -grpc-port)",
			e.cfg.namespace, e.cfg.grpcPort)
	}
	return fmt.Sprintf("; the sandbox's NetworkPolicy admits only the agent's pods: run the agent in namespace %q with the label the template's networkPolicy selects (app: adk-agent in deploy/agent-sandbox/sandboxtemplate.yaml); outside the cluster use WithPortForward; sandboxd must listen on port %d (the template's -grpc-port)",
		e.cfg.namespace, e.cfg.grpcPort)
}

// claimHint says, for a failed claim, what to change: "" or "; ...".
func (e *Executor) claimHint(ctx context.Context, err error) string {
	var urlErr *url.Error
	switch {
	case errors.Is(err, ErrNoWarmPool):
		return "; " + e.poolHint(ctx)
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("; RBAC forbids it: bind the agent's identity (its service account in the cluster, your user from a laptop) a Role in namespace %q with %s (deploy/agent/rbac.yaml)", e.cfg.namespace, rbacRules)
	case apierrors.IsUnauthorized(err):
		return "; the API server refused the credentials: renew them (does kubectl get pods work?)"
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("; does namespace %q exist? (kubectl get namespace %s)", e.cfg.namespace, e.cfg.namespace)
	case errors.As(err, &urlErr):
		server := urlErr.URL
		if u, perr := url.Parse(urlErr.URL); perr == nil {
			server = u.Scheme + "://" + u.Host
		}
		return fmt.Sprintf("; the Kubernetes API server at %s does not answer: is the cluster up, and is KUBECONFIG (or the in-cluster service account) the right one?", server)
	case ctx.Err() != nil || errors.Is(err, ErrClaimNotReady):
		return "; " + e.readyHint(ctx)
	}
	return ""
}

// poolHint says, for a warm pool that is not there, which pools the
// namespace has, when the agent may list them.
func (e *Executor) poolHint(ctx context.Context) string {
	apply := "apply the sandbox side (deploy/agent-sandbox/) there, or name the right pool and namespace"
	list, err := e.cfg.helper.ExtensionsClient.SandboxWarmPools(e.cfg.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("%s (kubectl get sandboxwarmpools -A lists them)", apply)
	}
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return fmt.Sprintf("namespace %q has no warm pool at all: is it the right namespace? %s (kubectl get sandboxwarmpools -A lists them)", e.cfg.namespace, apply)
	}
	slices.Sort(names)
	return fmt.Sprintf("namespace %q has %s: %s", e.cfg.namespace, strings.Join(names, ", "), apply)
}

// readyHint says, for a claim whose sandbox never became Ready, how the
// pool stands, when the agent may read it.
func (e *Executor) readyHint(ctx context.Context) string {
	check := fmt.Sprintf("kubectl -n %s describe sandboxwarmpool %s and the events of its pods say why (an image that does not pull, no gvisor RuntimeClass, no room on the nodes)", e.cfg.namespace, e.warmPool)
	h := e.cfg.helper
	if h == nil || h.ExtensionsClient == nil {
		return check
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.connectTimeout)
	defer cancel()
	pool, err := h.ExtensionsClient.SandboxWarmPools(e.cfg.namespace).Get(ctx, e.warmPool, metav1.GetOptions{})
	if err != nil {
		return check
	}
	return fmt.Sprintf("the warm pool has %d of %d sandboxes ready: %s", pool.Status.ReadyReplicas, ptr.Deref(pool.Spec.Replicas, 0), check)
}
