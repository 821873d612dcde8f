//go:build linux

package agentsandboxtest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/adkskills/adkskills/codeexec/agentsandbox/agentsandboxtest"
)

// TestAPIServerServesOnlyPortForward: the fake API server answers 404 to
// anything but a port-forward to a live claim's pod, as a real one answers
// a request for a pod that is not there.
func TestAPIServerServesOnlyPortForward(t *testing.T) {
	c := agentsandboxtest.NewCluster(t)
	sb, err := c.Client.CreateSandbox(context.Background(), agentsandboxtest.Pool, agentsandboxtest.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Client.DeleteSandbox(context.Background(), sb.ClaimName(), agentsandboxtest.Namespace)
	host, pod := c.Helper.RestConfig.Host, sb.PodName()
	tests := []struct {
		name, method, path string
	}{
		{"Get", http.MethodGet, "/api/v1/namespaces/agents/pods/" + pod + "/portforward"},
		{"OtherSubresource", http.MethodPost, "/api/v1/namespaces/agents/pods/" + pod + "/exec"},
		{"OtherNamespace", http.MethodPost, "/api/v1/namespaces/default/pods/" + pod + "/portforward"},
		{"NoSuchPod", http.MethodPost, "/api/v1/namespaces/agents/pods/sb-nothing/portforward"},
		{"NotASandboxPod", http.MethodPost, "/api/v1/namespaces/agents/pods/" + strings.TrimPrefix(pod, "sb-") + "/portforward"},
		{"Elsewhere", http.MethodPost, "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/agents/sandboxclaims"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, host+tt.path, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s: %s, want 404", tt.method, tt.path, resp.Status)
			}
		})
	}
	if c.Forwards() != 0 {
		t.Errorf("%d port-forwards", c.Forwards())
	}
}
