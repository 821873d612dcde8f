package agentsandbox

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/yaml"
)

// deployDir is the deployment kit.
var deployDir = filepath.Join("..", "..", "deploy", "agent-sandbox")

// TestDeployKit validates every manifest of the kit: custom resources
// against the CRD schemas agent-sandbox v1.0.3 ships (k8s/crds in its
// module), and every document strictly into its Go type, so an unknown or
// misspelt field fails.
func TestDeployKit(t *testing.T) {
	schemas := crdSchemas(t)
	docs := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if len(paths) == 0 {
		t.Fatalf("no manifests in %s", deployDir)
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(f))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			var meta struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &meta); err != nil || meta.Kind == "" {
				continue
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
		f.Close()
	}
	var template extv1beta1.SandboxTemplate
	var pool extv1beta1.SandboxWarmPool
	var role rbacv1.Role
	var binding rbacv1.RoleBinding
	var account corev1.ServiceAccount
	for kind, into := range map[string]any{"SandboxTemplate": &template, "SandboxWarmPool": &pool, "Role": &role, "RoleBinding": &binding, "ServiceAccount": &account} {
		if err := yaml.UnmarshalStrict(docs[kind], into); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}

	spec := template.Spec.PodTemplate.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("template: %d containers, want sandboxd alone", len(spec.Containers))
	}
	c := spec.Containers[0]
	f, tr := false, true
	checks := []struct {
		what string
		ok   bool
	}{
		{"gVisor", spec.RuntimeClassName != nil && *spec.RuntimeClassName == "gvisor"},
		{"no service-account token", spec.AutomountServiceAccountToken != nil && *spec.AutomountServiceAccountToken == f},
		{"non-root", spec.SecurityContext != nil && spec.SecurityContext.RunAsNonRoot != nil && *spec.SecurityContext.RunAsNonRoot == tr},
		{"no privilege escalation", c.SecurityContext != nil && c.SecurityContext.AllowPrivilegeEscalation != nil && !*c.SecurityContext.AllowPrivilegeEscalation},
		{"capabilities dropped", c.SecurityContext != nil && c.SecurityContext.Capabilities != nil && len(c.SecurityContext.Capabilities.Drop) == 1 && c.SecurityContext.Capabilities.Drop[0] == "ALL"},
		{"CPU, memory and disk limits", !c.Resources.Limits.Cpu().IsZero() && !c.Resources.Limits.Memory().IsZero() && !c.Resources.Limits.StorageEphemeral().IsZero()},
		{"managed network policy", template.Spec.NetworkPolicyManagement == extv1beta1.NetworkPolicyManagementManaged && template.Spec.NetworkPolicy != nil},
		{"no egress", template.Spec.NetworkPolicy != nil && len(template.Spec.NetworkPolicy.Egress) == 0},
		{"ingress to the gRPC port only", template.Spec.NetworkPolicy != nil && len(template.Spec.NetworkPolicy.Ingress) == 1 &&
			len(template.Spec.NetworkPolicy.Ingress[0].Ports) == 1 && template.Spec.NetworkPolicy.Ingress[0].Ports[0].Port.IntValue() == DefaultGRPCPort},
		{"the pool uses the template", pool.Spec.TemplateRef.Name == template.Name},
		{"the role binds the agent", binding.RoleRef.Name == role.Name && len(binding.Subjects) == 1 && binding.Subjects[0].Name == account.Name},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("the template lacks: %s", c.what)
		}
	}
	// RBAC: claims only, plus reading what waiting for one needs.
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			for _, verb := range r.Verbs {
				if (verb == "create" || verb == "delete" || verb == "update" || verb == "patch") && res != "sandboxclaims" {
					t.Errorf("the role may %s %s: only claims are created and deleted", verb, res)
				}
			}
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
