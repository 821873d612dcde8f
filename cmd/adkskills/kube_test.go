package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentSandboxUsageErrors: the flags of --agent-sandbox are checked
// before anything reaches a cluster.
func TestAgentSandboxUsageErrors(t *testing.T) {
	long := strings.Repeat("p", 254) // one over a DNS subdomain's 253
	tests := []struct {
		name  string
		args  []string
		cause string
	}{
		{"both sandboxes", []string{"run", "--sandbox", "--agent-sandbox", "pool", "s", "x.py"}, "run: --sandbox and --agent-sandbox both choose where scripts run: give one"},
		{"a namespace alone", []string{"chat", "--demo", "--namespace", "agents"}, "chat: --namespace is --agent-sandbox's: give the warm pool too (--agent-sandbox POOL)"},
		{"a pool that is no name", []string{"web", "--demo", "--agent-sandbox", "Skills_Pool"}, `web: --agent-sandbox "Skills_Pool" is not a warm pool's name: a lowercase RFC 1123 subdomain`},
		{"a pool too long", []string{"run", "--agent-sandbox", long, "s", "x.py"}, "run: --agent-sandbox \"" + long + "\" is not a warm pool's name: must be no more than 253 characters"},
		{"a namespace that is no name", []string{"run", "--agent-sandbox", "pool", "--namespace", "a.b", "s", "x.py"}, `run: --namespace "a.b" is not a namespace's name: must not contain dots`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := invoke(t, invocation{args: tt.args})
			assert.Equal(t, exitUsage, o.code)
			first, _, _ := strings.Cut(o.stderr, "\n")
			assert.True(t, strings.HasPrefix(first, "adkskills: "+tt.cause), "stderr: %s", o.stderr)
			assert.Contains(t, o.stderr, "--help' for its usage.\n")
		})
	}
}

// kubeconfig writes a kubeconfig for one cluster at server whose context
// has namespace ns ("": none), and returns its path.
func kubeconfig(t *testing.T, dir, server, ns string) string {
	t.Helper()
	nsLine := ""
	if ns != "" {
		nsLine = "\n    namespace: " + ns
	}
	p := filepath.Join(dir, "config")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(p, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
contexts:
- name: ctx
  context:
    cluster: c
    user: u%s
current-context: ctx
users:
- name: u
  user:
    token: not-a-secret
`, server, nsLine), 0o600))
	return p
}

// TestLoadKube: the cluster is found as kubectl finds it.
func TestLoadKube(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // never the pod this test may run in
	const server = "https://127.0.0.1:1"
	dir := t.TempDir()
	withNS := kubeconfig(t, filepath.Join(dir, "ns"), server, "team-a")
	withoutNS := kubeconfig(t, filepath.Join(dir, "plain"), server, "")
	home := filepath.Join(dir, "home")
	kubeconfig(t, filepath.Join(home, ".kube"), server, "from-home")
	broken := filepath.Join(dir, "broken")
	require.NoError(t, os.WriteFile(broken, []byte("clusters: [\n"), 0o600))
	noContext := filepath.Join(dir, "nocontext")
	require.NoError(t, os.WriteFile(noContext, []byte("apiVersion: v1\nkind: Config\ncontexts:\n- name: a\n  context: {cluster: gone}\ncurrent-context: a\n"), 0o600))
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name    string
		vars    map[string]string
		wantNS  string
		wantErr string
		noClust bool // the error is errNoCluster
	}{
		{name: "KUBECONFIG", vars: map[string]string{"KUBECONFIG": withNS}, wantNS: "team-a"},
		{name: "NoNamespace", vars: map[string]string{"KUBECONFIG": withoutNS}, wantNS: "default"},
		{name: "AList", vars: map[string]string{"KUBECONFIG": missing + string(filepath.ListSeparator) + withNS}, wantNS: "team-a"},
		{name: "KUBECONFIGBeforeHome", vars: map[string]string{"KUBECONFIG": withNS, "HOME": home}, wantNS: "team-a"},
		{name: "Home", vars: map[string]string{"HOME": home}, wantNS: "from-home"},
		{name: "Missing", vars: map[string]string{"KUBECONFIG": missing}, wantErr: "no kubeconfig in " + missing + ", and this is not a pod", noClust: true},
		{name: "Nothing", vars: map[string]string{}, wantErr: "KUBECONFIG is not set and there is no ~/.kube/config", noClust: true},
		{name: "Broken", vars: map[string]string{"KUBECONFIG": broken}, wantErr: "reading the kubeconfig (" + broken + ")"},
		{name: "ContextWithoutCluster", vars: map[string]string{"KUBECONFIG": noContext}, wantErr: "the kubeconfig (" + noContext + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := loadKube(func(k string) string { return tt.vars[k] })
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Equal(t, tt.noClust, errors.Is(err, errNoCluster), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantNS, k.namespace)
			assert.False(t, k.inCluster)
			assert.Equal(t, server, k.server)
			assert.NotNil(t, k.helper.ExtensionsClient)
			assert.NotNil(t, k.helper.CoreClient, "port-forwards need it")
		})
	}
}

// TestAgentSandboxWithoutACluster: with no cluster to reach, the command
// stops before it runs anything and says why.
func TestAgentSandboxWithoutACluster(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	down := kubeconfig(t, filepath.Join(dir, "down"), "http://127.0.0.1:1", "agents")
	tests := []struct {
		name, kubeconfig, says string
	}{
		{"NoKubeconfig", missing, "adkskills: --agent-sandbox: no Kubernetes cluster: no kubeconfig in " + missing},
		{"APIServerDown", down, `adkskills: --agent-sandbox skills-pool: agentsandbox: probe: codeexec: sandbox unavailable: agentsandbox: sandbox claim not ready: checking warm pool "skills-pool"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars, storeDir := store(t)
			vars["KUBECONFIG"] = tt.kubeconfig
			o := invoke(t, invocation{vars: vars, args: []string{"run", "--skills", testSkills(t), "--agent-sandbox", "skills-pool", "report-writer", "scripts/report.py", "--", "Ada"}})
			assert.Equal(t, exitFailure, o.code)
			assert.True(t, strings.HasPrefix(o.stderr, tt.says), "stderr: %s", o.stderr)
			assert.Empty(t, o.stdout)
			if tt.kubeconfig == down {
				assert.Contains(t, o.stderr, "the Kubernetes API server at http://127.0.0.1:1 does not answer")
			}
			entries, _ := os.ReadDir(storeDir)
			assert.Empty(t, entries, "nothing ran, nothing was saved")
		})
	}
}
