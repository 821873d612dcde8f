package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adkskills/adkskills/codeexec/agentsandbox"
	"github.com/adkskills/adkskills/codeexec/agentsandbox/agentsandboxtest"
	"github.com/adkskills/adkskills/tools/runscript"
)

// onCluster is a kube hook that finds the fake cluster c, as a kubeconfig
// (inCluster false: the command goes through port-forwards) or a pod's
// service account would.
func onCluster(c *agentsandboxtest.Cluster, inCluster bool) func(func(string) string) (*kubeTarget, error) {
	return func(func(string) string) (*kubeTarget, error) {
		return &kubeTarget{
			helper:    c.Helper,
			namespace: agentsandboxtest.Namespace,
			inCluster: inCluster,
			server:    c.Helper.RestConfig.Host,
			options:   []agentsandbox.Option{agentsandbox.WithGRPCPort(c.GRPCPort)},
		}, nil
	}
}

// claimsBalanced checks that every claim the command made was deleted.
func claimsBalanced(t *testing.T, c *agentsandboxtest.Cluster, want int) {
	t.Helper()
	created, deleted := c.Counts()
	assert.Equal(t, want, created, "claims created")
	assert.Equal(t, created, deleted, "claims deleted")
	assert.Zero(t, c.Live(), "pods left")
}

// TestRunOnAgentSandbox: adkskills run --agent-sandbox runs the script in a
// pod claimed from the pool, after the probe's claim, from a laptop
// (port-forwards) and from a pod (pod IPs), and saves its files as ever.
func TestRunOnAgentSandbox(t *testing.T) {
	for _, tt := range []struct {
		name      string
		inCluster bool
	}{{"FromALaptop", false}, {"InAPod", true}} {
		t.Run(tt.name, func(t *testing.T) {
			c := agentsandboxtest.NewCluster(t)
			o := invoke(t, invocation{kube: onCluster(c, tt.inCluster),
				args: []string{"run", "--skills", testSkills(t), "--agent-sandbox", agentsandboxtest.Pool, "report-writer", "scripts/report.py", "--", "Ada"}})
			require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
			assert.Contains(t, o.stdout, "report for Ada: report.md, dist/data/summary.json, badge.png")
			files := printedFiles(t, o.stdout)
			assert.Contains(t, files, "badge.png")
			assert.Contains(t, files, "dist/data/summary.json")
			claimsBalanced(t, c, 2) // the probe's and the run's
			if tt.inCluster {
				assert.Zero(t, c.Forwards(), "a pod reaches sandboxd by IP")
			} else {
				assert.Equal(t, 2, c.Forwards(), "a laptop reaches sandboxd through the API server")
			}
		})
	}
}

// TestAgentSandboxMisconfigured: a wrong pool or namespace stops the command
// at the probe, saying what the cluster has, and claims nothing.
func TestAgentSandboxMisconfigured(t *testing.T) {
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"WrongPool", []string{"--agent-sandbox", "adkskills-pool"}, `no such warm pool: "adkskills-pool" in namespace "agents"; namespace "agents" has skills-pool`},
		{"WrongNamespace", []string{"--agent-sandbox", agentsandboxtest.Pool, "--namespace", "default"}, `namespace "default" has no warm pool at all: is it the right namespace?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := agentsandboxtest.NewCluster(t)
			args := append(append([]string{"run", "--skills", testSkills(t)}, tt.args...), "report-writer", "scripts/report.py")
			o := invoke(t, invocation{kube: onCluster(c, false), args: args})
			assert.Equal(t, exitFailure, o.code)
			assert.Contains(t, o.stderr, tt.says)
			assert.Empty(t, o.stdout)
			claimsBalanced(t, c, 0)
		})
	}
}

// TestWebOnAgentSandbox: adkskills web --demo --agent-sandbox serves the
// agent whose runs go to pods, through ADK's REST API, from a laptop.
func TestWebOnAgentSandbox(t *testing.T) {
	c := agentsandboxtest.NewCluster(t)
	srv := startWebEnv(t, nil, nil, env{kube: onCluster(c, false)},
		"--demo", "--skills", testSkills(t), "--agent-sandbox", agentsandboxtest.Pool)
	s := newRESTSession(t, srv)
	got, _ := s.say("run report-writer scripts/report.py Ada")
	require.Len(t, got, 3, "%q", got)
	assert.Equal(t, []string{"call run_skill_script", "response run_skill_script success"}, got[:2])
	var names []string
	require.NoError(t, json.Unmarshal(restCall(t, http.MethodGet, srv.url+"/api/apps/adkskills/users/user/sessions/"+s.id+"/artifacts", ""), &names))
	assert.ElementsMatch(t, []string{"badge.png", runscript.ArtifactName("dist/data/summary.json"), "report.md"}, names)
	assert.True(t, strings.HasPrefix(string(s.artifact("report.md")), "# Report"), "%s", s.artifact("report.md"))
	srv.stop()
	claimsBalanced(t, c, 2)
	assert.Equal(t, 2, c.Forwards())
}
