package agentsandbox

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
)

func TestConfigErrors(t *testing.T) {
	client := &sandbox.Client{} // never used: the configuration is refused first
	restConfig := &rest.Config{Host: "http://127.0.0.1:1"}
	core, err := corev1client.NewForConfig(restConfig)
	if err != nil {
		t.Fatal(err)
	}
	full := &sandbox.K8sHelper{CoreClient: core, RestConfig: restConfig}
	dial := func(context.Context, string) (net.Conn, error) { return nil, errors.New("unused") }
	tests := []struct {
		name     string
		client   *sandbox.Client
		warmPool string
		opts     []Option
	}{
		{"NilClient", nil, "pool", nil},
		{"NoWarmPool", client, "", nil},
		{"EmptyNamespace", client, "pool", []Option{WithNamespace("")}},
		{"PortZero", client, "pool", []Option{WithGRPCPort(0)}},
		{"PortTooLarge", client, "pool", []Option{WithGRPCPort(1 << 16)}},
		{"NegativeClaimTimeout", client, "pool", []Option{WithClaimTimeout(-time.Second)}},
		{"NegativeConnectTimeout", client, "pool", []Option{WithConnectTimeout(-time.Second)}},
		{"NegativeTransferTimeout", client, "pool", []Option{WithTransferTimeout(-time.Second)}},
		{"NegativeCleanupTimeout", client, "pool", []Option{WithCleanupTimeout(-time.Second)}},
		{"BadInterpreters", client, "pool", []Option{WithInterpreters(codeexec.Interpreters{{Language: "x"}})}},
		{"BadEnv", client, "pool", []Option{WithEnv(map[string]string{"A=B": "x"})}},
		{"PortForwardWithoutKubernetes", client, "pool", []Option{WithPortForward()}},
		{"PortForwardWithoutCoreClient", client, "pool", []Option{WithPortForward(), WithKubernetes(&sandbox.K8sHelper{RestConfig: restConfig})}},
		{"PortForwardWithoutRestConfig", client, "pool", []Option{WithPortForward(), WithKubernetes(&sandbox.K8sHelper{CoreClient: core})}},
		{"PortForwardAndDialer", client, "pool", []Option{WithPortForward(), WithKubernetes(full), WithDialer(dial)}},
		{"PortForwardAndServiceDNS", client, "pool", []Option{WithPortForward(), WithKubernetes(full), WithServiceDNS()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(tt.client, tt.warmPool, tt.opts...)
			if err := codeexec.ConfigError(e); !errors.Is(err, codeexec.ErrInvalidConfig) {
				t.Errorf("Err() = %v, want ErrInvalidConfig", err)
			}
			if res, err := e.Execute(context.Background(), &codeexec.Request{}); res != nil || !errors.Is(err, codeexec.ErrInvalidConfig) {
				t.Errorf("Execute = %v, %v; want nil, ErrInvalidConfig", res, err)
			}
		})
	}
	for _, opts := range [][]Option{
		{WithClaimTimeout(0), WithNamespace("ns"), WithGRPCPort(1), WithServiceDNS()},
		{WithPortForward(), WithKubernetes(full)},
	} {
		if err := New(client, "pool", opts...).Err(); err != nil {
			t.Errorf("valid configuration: Err() = %v", err)
		}
	}
}

func TestLostErrorSaysWhetherTheScriptStarted(t *testing.T) {
	cause := errors.New("connection reset")
	tests := []struct {
		started         bool
		wantUnavailable bool
		wantText        string
	}{
		{false, true, "before the script started (it did not run)"},
		{true, false, "after the script started (it may have run in part)"},
	}
	for _, tt := range tests {
		err := error(&LostError{Started: tt.started, Err: cause})
		if !errors.Is(err, ErrConnectionLost) || !errors.Is(err, cause) || errors.Is(err, codeexec.ErrSandboxUnavailable) != tt.wantUnavailable {
			t.Errorf("started=%v: %v: Is(ErrConnectionLost, cause, ErrSandboxUnavailable=%v) broken", tt.started, err, tt.wantUnavailable)
		}
		if got := err.Error(); !strings.Contains(got, tt.wantText) {
			t.Errorf("started=%v: %q does not say %q", tt.started, got, tt.wantText)
		}
	}
}
