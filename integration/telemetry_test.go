package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/server/adkrest"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/redact"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

var (
	spansOnce sync.Once
	spans     *tracetest.InMemoryExporter
	redacted  *tracetest.InMemoryExporter // behind redact.NewSpanProcessor
	traceView http.Handler                // ADK's REST server, whose /debug/trace feeds adk-web's trace view
)

// recordSpans installs, once per test binary, a global tracer provider that
// keeps every span in memory twice, as it is and through
// redact.NewSpanProcessor (see redactedSpans), and feeds ADK's REST server's
// trace store, as ADK's web launcher does. ADK's tracer follows the first
// provider set, so ADK's spans and ours land there together.
func recordSpans(t *testing.T) (*tracetest.InMemoryExporter, http.Handler) {
	spansOnce.Do(func() {
		rest, err := adkrest.NewServer(adkrest.ServerConfig{SessionService: session.InMemoryService()})
		require.NoError(t, err)
		spans, redacted, traceView = tracetest.NewInMemoryExporter(), tracetest.NewInMemoryExporter(), rest
		otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans),
			sdktrace.WithSpanProcessor(redact.NewSpanProcessor(sdktrace.NewSimpleSpanProcessor(redacted))),
			sdktrace.WithSpanProcessor(rest.SpanProcessor())))
	})
	return spans, traceView
}

// redactedSpans is the exporter behind redact's processor (see recordSpans).
func redactedSpans(t *testing.T) *tracetest.InMemoryExporter {
	recordSpans(t)
	return redacted
}

// debugSpan is a span as ADK's REST server's /debug/trace shows it.
type debugSpan struct {
	Name       string            `json:"name"`
	Attributes map[string]string `json:"attributes"`
}

// brokenExecutor cannot run anything.
type brokenExecutor struct{}

var errNoIsolation = fmt.Errorf("%w: bwrap is missing", codeexec.ErrSandboxUnavailable)

func (brokenExecutor) Execute(context.Context, *codeexec.Request) (*codeexec.Result, error) {
	return nil, errNoIsolation
}

// TestScriptRunsAreSpans: every script run is a span under ADK's
// execute_tool span, with what it ran and what came of it, and never its
// output.
func TestScriptRunsAreSpans(t *testing.T) {
	exp, view := recordSpans(t)
	noisy := map[string]any{"skill_name": "shell-tools", "script_path": "scripts/noisy.sh", "args": []any{"3000"}}
	inline := map[string]any{"language": "bash", "script": "echo inline-secret-output; echo x > made.txt", "skill_name": "report-writer", "input_files": []any{"in.txt"}}
	tests := []struct {
		name     string
		opts     []skilltoolset.Option
		tool     string
		args     map[string]any
		approve  bool
		spanName string
		want     map[attribute.Key]any
		status   codes.Code
		err      error
		inputs   []string // artifacts saved in the session before the run
	}{{
		name: "a skill's script", tool: "run_skill_script", args: reportArgs,
		spanName: "run_script report-writer scripts/report.py",
		want: map[attribute.Key]any{
			runscript.AttrTool: "run_skill_script", runscript.AttrSkill: "report-writer", runscript.AttrScript: "scripts/report.py",
			runscript.AttrInline: false, runscript.AttrExecutor: "local.Executor",
			runscript.AttrStatus: "success", runscript.AttrExitCode: int64(0), runscript.AttrTimedOut: false,
			runscript.AttrStdoutCut: false, runscript.AttrStderrCut: false,
			runscript.AttrFilesSaved: int64(3), runscript.AttrFilesNotSaved: int64(0), runscript.AttrFilesOmitted: int64(0), runscript.AttrFilesInput: int64(0),
		},
	}, {
		name: "input files", tool: "run_skill_script", inputs: []string{"a.txt", "b.txt"},
		args:     map[string]any{"skill_name": "report-writer", "script_path": "scripts/report.py", "args": []any{"x"}, "input_files": []any{"a.txt", "b.txt"}},
		spanName: "run_script report-writer scripts/report.py",
		want:     map[attribute.Key]any{runscript.AttrStatus: "success", runscript.AttrFilesInput: int64(2), runscript.AttrFilesSaved: int64(3)},
	}, {
		name: "capped streams", tool: "run_skill_script", args: noisy,
		opts:     []skilltoolset.Option{skilltoolset.WithMaxOutputChars(1000)},
		spanName: "run_script shell-tools scripts/noisy.sh",
		want: map[attribute.Key]any{
			runscript.AttrStatus:      "success",
			runscript.AttrStdoutBytes: int64(len(noisyOutput("out", 3000))), runscript.AttrStdoutChars: int64(len(noisyOutput("out", 3000))),
			runscript.AttrStderrBytes: int64(len(noisyOutput("err", 3000))), runscript.AttrStderrChars: int64(len(noisyOutput("err", 3000))),
			runscript.AttrStdoutCut: true, runscript.AttrStderrCut: true,
		},
	}, {
		name: "a failing script", tool: "run_skill_script", args: map[string]any{"skill_name": "py-tools", "script_path": "scripts/fail.py"},
		spanName: "run_script py-tools scripts/fail.py",
		want:     map[attribute.Key]any{runscript.AttrStatus: "error", runscript.AttrExitCode: int64(1)},
		status:   codes.Error,
	}, {
		name: "a script that times out", tool: "run_skill_script", args: map[string]any{"skill_name": "shell-tools", "script_path": "scripts/hang.sh"},
		opts:     []skilltoolset.Option{skilltoolset.WithScriptTimeout(500 * time.Millisecond)},
		spanName: "run_script shell-tools scripts/hang.sh",
		want:     map[attribute.Key]any{runscript.AttrStatus: "timeout", runscript.AttrTimedOut: true},
		status:   codes.Error,
	}, {
		name: "an inline script", tool: "run_skill_inline_script", args: inline, approve: true,
		opts:     []skilltoolset.Option{skilltoolset.WithInlineScripts(true)},
		spanName: "run_inline_script bash",
		want: map[attribute.Key]any{
			runscript.AttrTool: "run_skill_inline_script", runscript.AttrSkill: "report-writer", runscript.AttrLanguage: "bash",
			runscript.AttrInline: true, runscript.AttrStatus: "success", runscript.AttrFilesSaved: int64(1),
			runscript.AttrFilesInput: int64(1),
		},
		inputs: []string{"in.txt"},
	}, {
		name: "an executor that cannot run", tool: "run_skill_script", args: reportArgs,
		opts:     []skilltoolset.Option{skilltoolset.WithCodeExecutor(brokenExecutor{})},
		spanName: "run_script report-writer scripts/report.py",
		want:     map[attribute.Key]any{runscript.AttrExecutor: "integration.brokenExecutor"},
		status:   codes.Error, err: errNoIsolation,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{opts: tt.opts, steps: []scripted.Step{call(tt.tool, tt.args), say("done")}})
			for _, name := range tt.inputs {
				_, err := h.artifacts.Save(context.Background(), &artifact.SaveRequest{AppName: appName, UserID: userID, SessionID: h.sessionID,
					FileName: name, Part: genai.NewPartFromBytes([]byte("input"), "text/plain")})
				require.NoError(t, err)
			}
			events := h.say("go")
			if tt.approve {
				events = confirm(h, confirmationCall(t, events), true)
			}
			_, resp := responseEvent(t, events, tt.tool)

			// The invocation's spans: its trace is the one whose
			// invoke_agent span names this session.
			var trace []sdktrace.ReadOnlySpan
			for _, s := range exp.GetSpans().Snapshots() {
				for _, kv := range s.Attributes() {
					if kv.Key == "gen_ai.conversation.id" && kv.Value.AsString() == h.sessionID {
						for _, o := range exp.GetSpans().Snapshots() {
							if o.SpanContext().TraceID() == s.SpanContext().TraceID() {
								trace = append(trace, o)
							}
						}
					}
				}
			}
			var run, parent sdktrace.ReadOnlySpan
			for _, s := range trace {
				if s.Name() == tt.spanName {
					require.Nil(t, run, "one span per run")
					run = s
				}
			}
			require.NotNil(t, run, "no %q span among %d of this session", tt.spanName, len(trace))
			for _, s := range trace {
				if s.SpanContext().SpanID() == run.Parent().SpanID() {
					parent = s
				}
			}
			require.NotNil(t, parent, "the run span's parent is in the trace")
			assert.Equal(t, "execute_tool "+tt.tool, parent.Name(), "a child of ADK's execute_tool span")
			assert.Equal(t, runscript.TracerName, run.InstrumentationScope().Name)

			got := map[attribute.Key]any{}
			for _, kv := range run.Attributes() {
				got[kv.Key] = kv.Value.AsInterface()
				if s, ok := got[kv.Key].(string); ok {
					for _, secret := range []string{"Ada Lovelace", "inline-secret-output", "out line", "err line", "ValueError", "started"} {
						assert.NotContains(t, s, secret, "%s holds script output", kv.Key)
					}
				}
			}
			for k, v := range tt.want {
				assert.Equal(t, v, got[k], "%s", k)
			}
			if tt.err == nil {
				assert.Greater(t, got[runscript.AttrDurationMs], 0.0)
				assert.Equal(t, resp["status"], got[runscript.AttrStatus], "the span says what the response says")
				assert.Equal(t, int64(resp["exit_code"].(int)), got[runscript.AttrExitCode])
			} else {
				assert.NotContains(t, got, runscript.AttrStatus, "nothing ran")
			}
			assert.Equal(t, tt.status, run.Status().Code, run.Status().Description)
			var recorded []string
			for _, ev := range run.Events() {
				recorded = append(recorded, ev.Name)
				for _, kv := range ev.Attributes {
					if kv.Key == "exception.message" && tt.err != nil {
						assert.Equal(t, tt.err.Error(), kv.Value.AsString())
					}
				}
			}
			if tt.err != nil {
				assert.Equal(t, []string{"exception"}, recorded, "the error is recorded on the span")
				assert.True(t, errors.Is(tt.err, codeexec.ErrSandboxUnavailable))
			} else {
				assert.Empty(t, recorded, "no events: nothing of the output goes into the span")
			}
			assert.False(t, strings.Contains(fmt.Sprint(run.Attributes()), "inline-secret-output"))

			// adk-web's trace view shows the session's spans, the run's too.
			rec := httptest.NewRecorder()
			view.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/trace/session/"+h.sessionID, nil))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var shown []debugSpan
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &shown))
			i := slices.IndexFunc(shown, func(s debugSpan) bool { return s.Name == tt.spanName })
			require.GreaterOrEqual(t, i, 0, "the trace view lacks %q", tt.spanName)
			assert.Equal(t, tt.tool, shown[i].Attributes[string(runscript.AttrTool)])
		})
	}
}

// sessionSpans are the spans of every invocation of a session: the traces
// whose invoke_agent span names it.
func sessionSpans(exp *tracetest.InMemoryExporter, sessionID string) []sdktrace.ReadOnlySpan {
	all := exp.GetSpans().Snapshots()
	traces := map[[16]byte]bool{}
	for _, s := range all {
		for _, kv := range s.Attributes() {
			if kv.Key == "gen_ai.conversation.id" && kv.Value.AsString() == sessionID {
				traces[s.SpanContext().TraceID()] = true
			}
		}
	}
	var out []sdktrace.ReadOnlySpan
	for _, s := range all {
		if traces[s.SpanContext().TraceID()] {
			out = append(out, s)
		}
	}
	return out
}

// spanText is everything a span says: name, status, attributes and events.
func spanText(s sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	b.WriteString(s.Name() + "\n" + s.Status().Description + "\n")
	for _, kv := range s.Attributes() {
		b.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
	}
	for _, ev := range s.Events() {
		b.WriteString(ev.Name + "\n")
		for _, kv := range ev.Attributes {
			b.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
		}
	}
	return b.String()
}

// TestTracesCarryNoToolContentWhenRedacted: through ADK's runner, every
// tool (a script with args and stdin, a failing script, a file read, a
// failed read, parallel calls, an approved inline script) records its
// content in ADK's execute_tool spans, which an exporter as it is sees; the
// exporter behind redact's processor sees none of it in any span, ADK's or
// ours, and still sees every span.
func TestTracesCarryNoToolContentWhenRedacted(t *testing.T) {
	raw := func() *tracetest.InMemoryExporter { e, _ := recordSpans(t); return e }()
	red := redactedSpans(t)
	secrets := map[string]string{
		"an argument":          "arg-secret-plum",
		"stdin":                "stdin-secret-kiwi",
		"stdout":               "STDIN-SECRET-KIWI",
		"stderr":               "the input table is empty",
		"a file's content":     "Ünïcödé",
		"a failed read's path": "missing-secret-fig",
		"instructions":         "# Report writer",
		"an inline script":     "inline-secret-lime",
	}
	parallel := func(*model.LLMRequest) (*genai.Content, error) {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{FunctionCall: &genai.FunctionCall{Name: "run_skill_script", Args: map[string]any{"skill_name": "py-tools", "script_path": "scripts/fail.py"}}},
			{FunctionCall: &genai.FunctionCall{Name: "load_skill", Args: map[string]any{"name": "report-writer"}}},
		}}, nil
	}
	h := newHarness(t, harnessConfig{opts: []skilltoolset.Option{skilltoolset.WithInlineScripts(true)}, steps: []scripted.Step{
		call("run_skill_script", map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py", "args": []any{"arg-secret-plum"}, "stdin": "stdin-secret-kiwi\n"}),
		call("load_skill_resource", map[string]any{"skill_name": "report-writer", "resource_path": "cards/greeting.txt"}),
		call("load_skill_resource", map[string]any{"skill_name": "report-writer", "resource_path": "references/missing-secret-fig.md"}),
		parallel,
		call("run_skill_inline_script", map[string]any{"language": "bash", "script": "echo inline-secret-lime"}),
		say("done"),
	}})
	events := h.say("go")
	h.model.Append(say("ran"))
	confirm(h, confirmationCall(t, events), true)

	rawText, redText := "", ""
	rawSpans, redSpans := sessionSpans(raw, h.sessionID), sessionSpans(red, h.sessionID)
	for _, s := range rawSpans {
		rawText += spanText(s)
	}
	names := map[string]int{}
	for _, s := range redSpans {
		redText += spanText(s)
		names[s.Name()]++
	}
	for what, secret := range secrets {
		assert.Contains(t, rawText, secret, "%s reaches an exporter as it is", what)
		assert.NotContains(t, redText, secret, "%s reaches the exporter behind redact", what)
	}
	assert.Equal(t, len(rawSpans), len(redSpans), "every span is exported")
	for _, name := range []string{"execute_tool run_skill_script", "execute_tool load_skill_resource", "execute_tool load_skill",
		"execute_tool (merged)", "execute_tool run_skill_inline_script", "run_script py-tools scripts/upper.py", "run_inline_script bash"} {
		assert.Positive(t, names[name], "%s is exported", name)
	}
	assert.Contains(t, redText, "gcp.vertex.agent.tool_response="+redact.Elided)
	assert.Contains(t, redText, "adkskills.exit_code=1", "our own attributes pass")
}
