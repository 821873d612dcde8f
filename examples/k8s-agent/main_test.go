package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func TestParseConfig(t *testing.T) {
	key := map[string]string{"GOOGLE_API_KEY": "k"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{"GOOGLE_API_KEY": "k"}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    config
		wantErr string
	}{
		{name: "Defaults", env: key, want: config{skills: "/skills", pool: "adkskills-pool", namespace: "default", model: "gemini-2.5-flash", port: 8080}},
		{name: "FromTheEnvironment", env: with(map[string]string{"SKILLS_DIR": "/s", "AGENT_SANDBOX_POOL": "p", "AGENT_SANDBOX_NAMESPACE": "ns", "PORT": "9000", "GEMINI_MODEL": "m"}),
			want: config{skills: "/s", pool: "p", namespace: "ns", model: "m", port: 9000}},
		{name: "FlagsOverTheEnvironment", args: []string{"--warm-pool", "q", "--port", "81", "--namespace", "x"}, env: with(map[string]string{"AGENT_SANDBOX_POOL": "p", "PORT": "9000"}),
			want: config{skills: "/skills", pool: "q", namespace: "x", model: "gemini-2.5-flash", port: 81}},
		{name: "DemoNeedsNoKey", args: []string{"--demo"}, env: map[string]string{},
			want: config{skills: "/skills", pool: "adkskills-pool", namespace: "default", model: "gemini-2.5-flash", port: 8080, demo: true}},
		{name: "DemoFromTheEnvironment", env: map[string]string{"DEMO_MODEL": "true"},
			want: config{skills: "/skills", pool: "adkskills-pool", namespace: "default", model: "gemini-2.5-flash", port: 8080, demo: true}},
		{name: "VertexNeedsNoKey", env: map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true"},
			want: config{skills: "/skills", pool: "adkskills-pool", namespace: "default", model: "gemini-2.5-flash", port: 8080}},
		{name: "NoCredentials", env: map[string]string{}, wantErr: "no Gemini credentials: set GOOGLE_API_KEY"},
		{name: "BadPORT", env: with(map[string]string{"PORT": "http"}), wantErr: "PORT: "},
		{name: "PortOutOfRange", args: []string{"--port", "70000"}, env: key, wantErr: "--port 70000: not a port"},
		{name: "BadDEMO_MODEL", env: map[string]string{"DEMO_MODEL": "maybe"}, wantErr: "DEMO_MODEL: "},
		{name: "UnknownFlag", args: []string{"--bogus"}, env: key, wantErr: "flag provided but not defined: -bogus"},
		{name: "AnArgument", args: []string{"extra"}, env: key, wantErr: `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig(tt.args, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseConfig = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if _, err := parseConfig([]string{"--help"}, func(string) string { return "" }); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v, want flag.ErrHelp", err)
	}
}

// repo is the repository's root.
var repo = filepath.Join("..", "..")

// TestDeploymentRunsThisAgent: deploy/agent/deployment.yaml, read through
// this agent's own flags and environment, claims from the kit's warm pool,
// in the pod's namespace, on the port it declares, and the image
// (Dockerfile) has the binary and the skills where the agent looks.
func TestDeploymentRunsThisAgent(t *testing.T) {
	var d appsv1.Deployment
	readYAML(t, filepath.Join(repo, "deploy", "agent", "deployment.yaml"), &d)
	var pool extv1beta1.SandboxWarmPool
	readYAML(t, filepath.Join(repo, "deploy", "agent-sandbox", "sandboxwarmpool.yaml"), &pool)
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[e.Name] = d.Namespace // the downward API
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "from-the-secret"
		default:
			env[e.Name] = e.Value
		}
	}
	cfg, err := parseConfig(c.Args, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the Deployment's arguments and environment: %v", err)
	}
	dockerfile := readFile(t, "Dockerfile")
	skillsDest := match(t, dockerfile, `(?m)^COPY \$\{SKILLS\} (\S+)$`)
	binary := match(t, dockerfile, `(?m)^COPY --from=build /out/k8s-agent (\S+)$`)
	checks := []struct {
		what string
		ok   bool
	}{
		{"the warm pool is the kit's", cfg.pool == pool.Name},
		{"claims go to the agent's namespace, the pool's", cfg.namespace == d.Namespace && d.Namespace == pool.Namespace},
		{"the agent listens on the container's port", len(c.Ports) == 1 && int(c.Ports[0].ContainerPort) == cfg.port},
		{"the image exposes that port", strings.Contains(dockerfile, "\nEXPOSE "+strconv.Itoa(cfg.port)+"\n")},
		{"the image has the skills where the agent looks", skillsDest == cfg.skills},
		{"the image runs the binary", strings.Contains(dockerfile, `ENTRYPOINT ["`+binary+`"]`)},
		{"the image's user is the pod's", d.Spec.Template.Spec.SecurityContext != nil && d.Spec.Template.Spec.SecurityContext.RunAsUser != nil &&
			strings.Contains(dockerfile, "\nUSER "+strconv.FormatInt(*d.Spec.Template.Spec.SecurityContext.RunAsUser, 10)+":")},
		{"the image builds with the Go of the example's go.mod", strings.Contains(dockerfile, "FROM golang:"+goMinor(t)+"-")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: does not hold", c.what)
		}
	}
	// The default skills the image bakes are skills.
	def := match(t, dockerfile, `(?m)^ARG SKILLS=(\S+)$`)
	if found, _ := filepath.Glob(filepath.Join(repo, filepath.FromSlash(def), "*", "SKILL.md")); len(found) == 0 {
		t.Errorf("ARG SKILLS=%s: no skill there", def)
	}
}

// TestRefusesToStart: the binary, as the image runs it, stops with status 1
// and says why when it cannot reach a cluster, before it serves anything.
func TestRefusesToStart(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	down := filepath.Join(dir, "down")
	if err := os.WriteFile(down, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
users: [{name: u, user: {token: t}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, kubeconfig, says string
	}{
		{"NoCluster", filepath.Join(dir, "missing"), "k8s-agent: not in a pod, and no kubeconfig to reach a cluster with (KUBECONFIG)"},
		{"APIServerDown", down, "the Kubernetes API server at http://127.0.0.1:1 does not answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.CommandContext(context.Background(), bin, "--demo", "--skills", filepath.Join(repo, "testdata", "skills"), "--port", "1")
			cmd.Env = []string{"KUBECONFIG=" + tt.kubeconfig, "HOME=" + dir, "PATH=" + os.Getenv("PATH")}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1; stderr: %s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.says) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.says)
			}
		})
	}
}

// build builds the binary as the Dockerfile does.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "k8s-agent")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// goMinor is the Go release the example's go.mod needs ("1.26").
func goMinor(t *testing.T) string {
	v := match(t, readFile(t, "go.mod"), `(?m)^go (\d+\.\d+)`)
	return v
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func readYAML(t *testing.T, p string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(readFile(t, p)), into); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

// match returns the first group of re's first match in s.
func match(t *testing.T, s, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s", re)
	}
	return m[1]
}
