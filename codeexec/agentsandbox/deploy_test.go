package agentsandbox

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/yaml"
)

// The deployment kit: the sandbox side (template, warm pool, image) and the
// agent side (identity, RBAC, Deployment, Service) of adkskills'
// repository.
var (
	sandboxDir = filepath.Join("..", "..", "deploy", "agent-sandbox")
	agentDir   = filepath.Join("..", "..", "deploy", "agent")
)

// kit is every manifest of the kit, parsed strictly into its Go type.
type kit struct {
	template   extv1beta1.SandboxTemplate
	pool       extv1beta1.SandboxWarmPool
	role       rbacv1.Role
	binding    rbacv1.RoleBinding
	account    corev1.ServiceAccount
	deployment appsv1.Deployment
	service    corev1.Service
}

// loadKit reads the manifests of dirs: custom resources are validated
// against the CRD schemas agent-sandbox v1.0.3 ships (k8s/crds in its
// module), and every document goes strictly into its Go type, so an
// unknown or misspelt field fails. Each kind appears once.
func loadKit(t *testing.T, dirs ...string) *kit {
	t.Helper()
	schemas := crdSchemas(t)
	docs := map[string][]byte{}
	for _, dir := range dirs {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if len(paths) == 0 {
			t.Fatalf("no manifests in %s", dir)
		}
		for _, p := range paths {
			for _, doc := range yamlDocs(t, p) {
				var meta struct{ APIVersion, Kind string }
				if err := yaml.Unmarshal(doc, &meta); err != nil || meta.Kind == "" {
					continue
				}
				if _, dup := docs[meta.Kind]; dup {
					t.Errorf("%s: a second %s", p, meta.Kind)
				}
				docs[meta.Kind] = doc
				if v, ok := schemas[meta.APIVersion+"/"+meta.Kind]; ok {
					var obj map[string]any
					if err := yaml.Unmarshal(doc, &obj); err != nil {
						t.Fatal(err)
					}
					if errs := validation.ValidateCustomResource(nil, obj, v); len(errs) > 0 {
						t.Errorf("%s %s: %v", filepath.Base(p), meta.Kind, errs.ToAggregate())
					}
				}
			}
		}
	}
	k := &kit{}
	for kind, into := range map[string]any{"SandboxTemplate": &k.template, "SandboxWarmPool": &k.pool, "Role": &k.role, "RoleBinding": &k.binding,
		"ServiceAccount": &k.account, "Deployment": &k.deployment, "Service": &k.service} {
		if err := yaml.UnmarshalStrict(docs[kind], into); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
	return k
}

// yamlDocs splits the file p into its YAML documents.
func yamlDocs(t *testing.T, p string) [][]byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, doc)
	}
}

// check is one property of the kit.
type check struct {
	what string
	ok   bool
}

// TestSandboxSide checks the sandbox pods: isolated, limited, reachable
// only on sandboxd's port, and the pool on the template.
func TestSandboxSide(t *testing.T) {
	k := loadKit(t, sandboxDir, agentDir)
	spec := k.template.Spec.PodTemplate.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("template: %d containers, want sandboxd alone", len(spec.Containers))
	}
	c := spec.Containers[0]
	f, tr := false, true
	policy := k.template.Spec.NetworkPolicy
	report(t, []check{
		{"gVisor", spec.RuntimeClassName != nil && *spec.RuntimeClassName == "gvisor"},
		{"no service-account token", spec.AutomountServiceAccountToken != nil && *spec.AutomountServiceAccountToken == f},
		{"non-root", spec.SecurityContext != nil && spec.SecurityContext.RunAsNonRoot != nil && *spec.SecurityContext.RunAsNonRoot == tr},
		{"no privilege escalation", c.SecurityContext != nil && c.SecurityContext.AllowPrivilegeEscalation != nil && !*c.SecurityContext.AllowPrivilegeEscalation},
		{"capabilities dropped", c.SecurityContext != nil && c.SecurityContext.Capabilities != nil && len(c.SecurityContext.Capabilities.Drop) == 1 && c.SecurityContext.Capabilities.Drop[0] == "ALL"},
		{"CPU, memory and disk limits", !c.Resources.Limits.Cpu().IsZero() && !c.Resources.Limits.Memory().IsZero() && !c.Resources.Limits.StorageEphemeral().IsZero()},
		{"managed network policy", k.template.Spec.NetworkPolicyManagement == extv1beta1.NetworkPolicyManagementManaged && policy != nil},
		{"no egress", policy != nil && len(policy.Egress) == 0},
		{"ingress to the gRPC port only", policy != nil && len(policy.Ingress) == 1 &&
			len(policy.Ingress[0].Ports) == 1 && policy.Ingress[0].Ports[0].Port.IntValue() == DefaultGRPCPort},
		{"sandboxd listens on the port the policy opens", argAfter(c.Args, "-grpc-port") == strconv.Itoa(DefaultGRPCPort)},
		{"the pool uses the template", k.pool.Spec.TemplateRef.Name == k.template.Name},
		{"the pool is beside the template", k.pool.Namespace == k.template.Namespace},
	})
}

// TestAgentSide checks that the agent's Deployment is the one workload the
// sandbox pods' NetworkPolicy admits, that it runs as the identity the RBAC
// binds, and that its Service and probes use its port.
func TestAgentSide(t *testing.T) {
	k := loadKit(t, sandboxDir, agentDir)
	policy := k.template.Spec.NetworkPolicy
	if policy == nil || len(policy.Ingress) != 1 || len(policy.Ingress[0].From) != 1 || policy.Ingress[0].From[0].PodSelector == nil {
		t.Fatal("the template's NetworkPolicy admits no pod selector")
	}
	peer := policy.Ingress[0].From[0]
	admits, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	d := k.deployment
	pod := d.Spec.Template
	podLabels := labels.Set(pod.Labels)
	selects, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("the agent's pod has %d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	port := containerPort(c, "http")
	ns := k.template.Namespace
	report(t, []check{
		// The policy selects pods of its own namespace only.
		{"the agent runs beside the sandboxes", d.Namespace == ns && peer.NamespaceSelector == nil},
		{"the policy admits the agent's pods", !admits.Empty() && admits.Matches(podLabels)},
		{"the policy admits no sandbox pod", !admits.Matches(labels.Set(k.template.Spec.PodTemplate.ObjectMeta.Labels))},
		{"the Deployment owns its pods", !selects.Empty() && selects.Matches(podLabels)},
		{"the agent claims from the pool", argAfter(c.Args, "--warm-pool") == k.pool.Name},
		{"the agent runs as the service account", pod.Spec.ServiceAccountName == k.account.Name && k.account.Namespace == ns},
		{"it gets its token (claims go to the API server)", pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken},
		{"the binding gives the account the role", k.binding.RoleRef.Kind == "Role" && k.binding.RoleRef.Name == k.role.Name && len(k.binding.Subjects) == 1 &&
			k.binding.Subjects[0].Kind == "ServiceAccount" && k.binding.Subjects[0].Name == k.account.Name && k.binding.Subjects[0].Namespace == ns},
		{"the RBAC is in the sandboxes' namespace", k.role.Namespace == ns && k.binding.Namespace == ns},
		{"non-root", pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.RunAsNonRoot != nil && *pod.Spec.SecurityContext.RunAsNonRoot},
		{"a read-only root file system", c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem},
		{"the container has an http port", port > 0},
		{"the probes ask that port", c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Port.String() == "http" &&
			c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Port.String() == "http"},
		{"the agent listens on that port", argAfter(c.Args, "--port") == strconv.Itoa(int(port))},
		{"the Service is beside the agent", k.service.Namespace == ns},
		{"the Service selects the agent's pods", len(k.service.Spec.Selector) > 0 && labels.SelectorFromSet(k.service.Spec.Selector).Matches(podLabels)},
		{"the Service forwards to the http port", len(k.service.Spec.Ports) == 1 && k.service.Spec.Ports[0].TargetPort.String() == "http"},
		{"the Service stays inside the cluster", k.service.Spec.Type == corev1.ServiceTypeClusterIP},
	})
}

// TestRoleAllowsClaims: the role grants what a claim round trip needs, and
// writes nothing but claims.
func TestRoleAllowsClaims(t *testing.T) {
	k := loadKit(t, sandboxDir, agentDir)
	allowed := func(group, resource, verb string) bool {
		for _, r := range k.role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	const ext, agents = "extensions.agents.x-k8s.io", "agents.x-k8s.io"
	needs := []struct{ group, resource, verb string }{
		// The client creates the claim, watches it for its Sandbox's name,
		// then that Sandbox until it is Ready; the executor checks the pool
		// and deletes the claim.
		{ext, "sandboxclaims", "create"}, {ext, "sandboxclaims", "get"}, {ext, "sandboxclaims", "list"},
		{ext, "sandboxclaims", "watch"}, {ext, "sandboxclaims", "delete"}, {ext, "sandboxwarmpools", "get"},
		{agents, "sandboxes", "get"}, {agents, "sandboxes", "list"}, {agents, "sandboxes", "watch"},
	}
	for _, n := range needs {
		if !allowed(n.group, n.resource, n.verb) {
			t.Errorf("the role may not %s %s", n.verb, n.resource)
		}
	}
	for _, r := range k.role.Rules {
		for _, res := range r.Resources {
			for _, verb := range r.Verbs {
				if verb != "get" && verb != "list" && verb != "watch" && res != "sandboxclaims" {
					t.Errorf("the role may %s %s: only claims are created and deleted", verb, res)
				}
			}
		}
	}
}

// argAfter returns the argument after flag in args, or "".
func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// containerPort returns c's port named name, or 0.
func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// report fails t for every check that does not hold.
func report(t *testing.T, checks []check) {
	t.Helper()
	for _, c := range checks {
		if !c.ok {
			t.Errorf("the kit lacks: %s", c.what)
		}
	}
}

// crdSchemas returns a validator per "apiVersion/Kind" from the CRDs in
// agent-sandbox's module.
func crdSchemas(t *testing.T) map[string]validation.SchemaCreateValidator {
	t.Helper()
	out, err := exec.CommandContext(context.Background(), "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/agent-sandbox").Output()
	if err != nil {
		t.Fatalf("locating agent-sandbox's module: %v", err)
	}
	paths, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "k8s", "crds", "*.yaml"))
	if len(paths) == 0 {
		t.Fatal("no CRDs in agent-sandbox's module")
	}
	schemas := map[string]validation.SchemaCreateValidator{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
				t.Fatal(err)
			}
			val, _, err := validation.NewSchemaValidator(&internal)
			if err != nil {
				t.Fatal(err)
			}
			schemas[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = val
		}
	}
	return schemas
}
