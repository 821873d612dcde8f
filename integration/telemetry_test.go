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
	"google.golang.org/adk/server/adkrest"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

var (
	spansOnce sync.Once
	spans     *tracetest.InMemoryExporter
	traceView http.Handler // ADK's REST server, whose /debug/trace feeds adk-web's trace view
)

// recordSpans installs, once per test binary, a global tracer provider that
// keeps every span in memory and feeds ADK's REST server's trace store, as
// ADK's web launcher does. ADK's tracer follows the first provider set, so
// ADK's spans and ours land there together.
func recordSpans(t *testing.T) (*tracetest.InMemoryExporter, http.Handler) {
	spansOnce.Do(func() {
		rest, err := adkrest.NewServer(adkrest.ServerConfig{SessionService: session.InMemoryService()})
		require.NoError(t, err)
		spans, traceView = tracetest.NewInMemoryExporter(), rest
		otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithSpanProcessor(rest.SpanProcessor())))
	})
	return spans, traceView
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
