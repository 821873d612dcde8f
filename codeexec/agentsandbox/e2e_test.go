//go:build linux

package agentsandbox

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/scripted"
	"github.com/adkskills/adkskills/internal/truncate"
	"github.com/adkskills/adkskills/skilltoolset"
)

// End to end: a model's run_skill_script call goes through skilltoolset
// and ADK's real runner to this executor, which runs it in a pod.

const (
	e2eApp  = "agentsandbox_e2e"
	e2eUser = "tester"
	// floodBytes is what flood.sh prints on each stream: together past the
	// agent-sandbox client's own 16 MB response cap, which a buffering
	// executor would hit.
	floodBytes = 24 << 20
)

// e2e is one agent on the executor, with in-memory sessions and artifacts.
type e2e struct {
	t         *testing.T
	runner    *runner.Runner
	artifacts artifact.Service
	sessionID string
}

func newE2E(t *testing.T, exec codeexec.Executor, steps []scripted.Step, opts ...skilltoolset.Option) *e2e {
	t.Helper()
	ctx := context.Background()
	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS(filepath.Join("..", "..", "testdata", "skills"))),
		append([]skilltoolset.Option{skilltoolset.WithCodeExecutor(exec)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "skills_agent", Model: scripted.New("scripted", steps...), Toolsets: []tool.Toolset{ts}})
	if err != nil {
		t.Fatal(err)
	}
	h := &e2e{t: t, artifacts: artifact.InMemoryService()}
	sessions := session.InMemoryService()
	if h.runner, err = runner.New(runner.Config{AppName: e2eApp, Agent: a, SessionService: sessions, ArtifactService: h.artifacts}); err != nil {
		t.Fatal(err)
	}
	created, err := sessions.Create(ctx, &session.CreateRequest{AppName: e2eApp, UserID: e2eUser})
	if err != nil {
		t.Fatal(err)
	}
	h.sessionID = created.Session.ID()
	return h
}

// run sends text and returns the run_skill_script response.
func (h *e2e) run(text string) map[string]any {
	h.t.Helper()
	for ev, err := range h.runner.Run(context.Background(), e2eUser, h.sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			h.t.Fatal(err)
		}
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if r := p.FunctionResponse; r != nil && r.Name == "run_skill_script" {
				return r.Response
			}
		}
	}
	h.t.Fatal("no run_skill_script response")
	return nil
}

// load reads the latest version of an artifact.
func (h *e2e) load(name string) []byte {
	h.t.Helper()
	resp, err := h.artifacts.Load(context.Background(), &artifact.LoadRequest{AppName: e2eApp, UserID: e2eUser, SessionID: h.sessionID, FileName: name})
	if err != nil {
		h.t.Fatalf("artifact %q: %v", name, err)
	}
	return resp.Part.InlineData.Data
}

func call(skill, script string, args ...any) []scripted.Step {
	return []scripted.Step{
		scripted.Call("run_skill_script", map[string]any{"skill_name": skill, "script_path": script, "args": args}),
		scripted.Say("done"),
	}
}

func TestEndToEndOutputFilesBecomeArtifacts(t *testing.T) {
	c := newCluster(t)
	h := newE2E(t, c.executor(), call("report-writer", "scripts/report.py", "ada lovelace", "--style", "bold"))
	resp := h.run("write a report for ada")
	if resp["status"] != "success" {
		t.Fatalf("response %v", resp)
	}
	if !strings.Contains(resp["stdout"].(string), "report for Ada Lovelace") {
		t.Errorf("stdout %q", resp["stdout"])
	}
	manifest := resp["output_files"].([]map[string]any)
	var names []string
	for _, f := range manifest {
		names = append(names, f["name"].(string))
		if got := len(h.load(f["artifact"].(string))); fmt.Sprint(got) != fmt.Sprint(f["size_bytes"]) {
			t.Errorf("%s: artifact holds %d bytes, manifest says %v", f["name"], got, f["size_bytes"])
		}
	}
	if want := "badge.png dist/data/summary.json report.md"; strings.Join(names, " ") != want {
		t.Errorf("output files %v, want %s", names, want)
	}
	img, err := png.Decode(bytes.NewReader(h.load("badge.png")))
	if err != nil || img.Bounds().Dx() != 16 {
		t.Errorf("badge.png: %v", err)
	}
	if created, deleted := c.counts(); created != 1 || deleted != 1 {
		t.Errorf("claims created %d, deleted %d; want 1, 1", created, deleted)
	}
}

func TestEndToEndTimeout(t *testing.T) {
	const timeout = time.Second
	c := newCluster(t)
	h := newE2E(t, c.executor(), call("shell-tools", "scripts/hang.sh"), skilltoolset.WithScriptTimeout(timeout))
	start := time.Now()
	resp := h.run("hang")
	if elapsed := time.Since(start); elapsed > timeout+5*time.Second {
		t.Errorf("the run took %v with a %v limit", elapsed, timeout)
	}
	if resp["status"] != "timeout" || resp["timed_out"] != true || resp["stdout"] != "started\n" {
		t.Errorf("response %v", resp)
	}
	if created, deleted := c.counts(); created != 1 || deleted != 1 {
		t.Errorf("claims created %d, deleted %d; want 1, 1", created, deleted)
	}
}

func TestEndToEndOutputFlood(t *testing.T) {
	const maxChars = 1000
	c := newCluster(t)
	h := newE2E(t, c.executor(), call("shell-tools", "scripts/flood.sh", fmt.Sprint(floodBytes)), skilltoolset.WithMaxOutputChars(maxChars))
	resp := h.run("flood")
	if resp["status"] != "success" {
		t.Fatalf("response %v", resp)
	}
	for _, stream := range []string{"stdout", "stderr"} {
		text := resp[stream].(string)
		marker := truncate.Marker(floodBytes-maxChars, floodBytes, maxChars)
		if n := len([]rune(text)); !strings.Contains(text, marker) || n > maxChars+len([]rune(marker))+2 {
			t.Errorf("%s: %d characters, want the cap %d and the marker %q", stream, len([]rune(text)), maxChars, marker)
		}
	}
}
