package main

import (
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec/agentsandbox"
	"github.com/adkskills/adkskills/codeexec/agentsandbox/agentsandboxtest"
)

// TestServesOnAgentSandbox serves the agent with the demo model on the fake
// cluster's warm pool and drives it through ADK's REST API as adk-web
// does: the run goes to a pod, its files come back as artifacts, and its
// claim is deleted.
func TestServesOnAgentSandbox(t *testing.T) {
	c := agentsandboxtest.NewCluster(t)
	exe := agentsandbox.New(c.Client, agentsandboxtest.Pool, agentsandbox.WithNamespace(agentsandboxtest.Namespace),
		agentsandbox.WithGRPCPort(c.GRPCPort), agentsandbox.WithKubernetes(c.Helper))
	if err := exe.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg := config{skills: filepath.Join(repo, "testdata", "skills"), port: freePort(t), demo: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, exe) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", cfg.port)
	waitHealthy(t, base, done)

	const app = "skills_agent"
	var session struct{ ID string }
	call(t, http.MethodPost, base+"/api/apps/"+app+"/users/u/sessions", "{}", &session)
	var events []struct {
		Content *struct {
			Parts []struct {
				FunctionResponse *struct {
					Response map[string]any `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"content"`
	}
	call(t, http.MethodPost, base+"/api/run", fmt.Sprintf(`{"appName": %q, "userId": "u", "sessionId": %q,
		"newMessage": {"role": "user", "parts": [{"text": "run report-writer scripts/report.py Ada"}]}}`, app, session.ID), &events)
	var status any
	for _, e := range events {
		for _, p := range e.Content.Parts {
			if p.FunctionResponse != nil {
				status = p.FunctionResponse.Response["status"]
			}
		}
	}
	if status != "success" {
		t.Fatalf("the run's status: %v; events: %+v", status, events)
	}
	var names []string
	call(t, http.MethodGet, base+"/api/apps/"+app+"/users/u/sessions/"+session.ID+"/artifacts", "", &names)
	if !slices.Contains(names, "report.md") || !slices.Contains(names, "badge.png") {
		t.Errorf("artifacts %q, want report.md and badge.png among them", names)
	}
	created, deleted := c.Counts()
	if created != 2 || deleted != 2 || c.Live() != 0 {
		t.Errorf("claims created %d, deleted %d, pods left %d; want the probe's and the run's, both deleted", created, deleted, c.Live())
	}
}

// TestImageBinaryIsStatic: the binary the Dockerfile builds needs no C
// library, as distroless static has none.
func TestImageBinaryIsStatic(t *testing.T) {
	f, err := elf.Open(build(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary has a dynamic loader: it would not start on distroless static")
		}
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHealthy waits until the server answers /health, as the Deployment's
// probes ask.
func waitHealthy(t *testing.T, base string, done <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v", err)
		default:
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatal("no /health")
}

// call sends a request and decodes its 200 answer into out.
func call(t *testing.T, method, u, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s %s %v", method, u, resp.Status, data, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, u, err, data)
	}
}
