package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/adk/model"
	"google.golang.org/adk/telemetry"
	"google.golang.org/protobuf/proto"

	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/redact"
)

// followCurrentProvider makes the tracers ADK and runscript took when their
// packages loaded follow whichever provider is global when a span starts.
// They follow the first provider ever set, and a process runs one command,
// whose provider that is; the tests run many commands in one process, each
// setting its own.
func followCurrentProvider() { otel.SetTracerProvider(following{}) }

// following is a TracerProvider whose tracers start spans on the global one.
type following struct{ embedded.TracerProvider }

func (following) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return followingTracer{name: name, opts: opts}
}

type followingTracer struct {
	embedded.Tracer
	name string
	opts []trace.TracerOption
}

func (f followingTracer) Start(ctx context.Context, span string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	tp := otel.GetTracerProvider()
	if _, self := tp.(following); self {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(f.name, f.opts...).Start(ctx, span, opts...)
}

// otlpSpan is a span as an OTLP receiver gets it, flattened to text.
type otlpSpan struct {
	name string
	text string // status, attributes and events
}

// otlpReceiver is an OTLP/HTTP collector on loopback; spans returns the
// spans it has been sent, logs how many log exports.
func otlpReceiver(t *testing.T) (url string, spans func() []otlpSpan, logs func() int) {
	var mu sync.Mutex
	var got []otlpSpan
	var logPosts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/v1/logs" {
			mu.Lock()
			logPosts++
			mu.Unlock()
		}
		if r.URL.Path == "/v1/traces" {
			var req collectortrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(data, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						var b strings.Builder
						b.WriteString(s.GetStatus().GetMessage() + "\n")
						writeAttrs(&b, s.Attributes)
						for _, ev := range s.Events {
							b.WriteString(ev.Name + "\n")
							writeAttrs(&b, ev.Attributes)
						}
						got = append(got, otlpSpan{name: s.Name, text: b.String()})
					}
				}
			}
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []otlpSpan {
			mu.Lock()
			defer mu.Unlock()
			return append([]otlpSpan(nil), got...)
		}, func() int {
			mu.Lock()
			defer mu.Unlock()
			return logPosts
		}
}

func writeAttrs(b *strings.Builder, kvs []*commonpb.KeyValue) {
	for _, kv := range kvs {
		if sv, ok := kv.Value.GetValue().(*commonpb.AnyValue_StringValue); ok {
			fmt.Fprintf(b, "%s=%s\n", kv.Key, sv.StringValue)
			continue
		}
		fmt.Fprintf(b, "%s=%v\n", kv.Key, kv.Value.GetValue())
	}
}

// traceSecrets are pieces of a run of py-tools' upper.py: the argument, the
// stdin and the stdout (stdin upper-cased).
var traceSecrets = []string{"arg-secret-plum", "stdin-secret-kiwi", "STDIN-SECRET-KIWI"}

// upperCall is the model's call of upper.py with the secrets.
var upperCall = map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py", "args": []any{"arg-secret-plum"}, "stdin": "stdin-secret-kiwi\n"}

// TestTraceContent: with OTEL_EXPORTER_OTLP_ENDPOINT set, run, chat and
// web export their spans, ADK's and ours, to an OTLP collector; the tool
// calls' content reads <elided> in every span unless --trace-content is
// given, and then it is there.
func TestTraceContent(t *testing.T) {
	commands := map[string]func(t *testing.T, vars map[string]string, flags []string){
		"run": func(t *testing.T, vars map[string]string, flags []string) {
			args := append([]string{"run", "--skills", testSkills(t), "--stdin", "-"}, flags...)
			o := invoke(t, invocation{vars: vars, stdin: "stdin-secret-kiwi\n", args: append(args, "py-tools", "scripts/upper.py", "--", "arg-secret-plum")})
			require.Equal(t, exitOK, o.code, o.stderr)
			require.Contains(t, o.stdout, "STDIN-SECRET-KIWI")
		},
		"chat": func(t *testing.T, vars map[string]string, flags []string) {
			vars["GOOGLE_API_KEY"] = "test-key"
			m := scripted.New("m", scripted.Call("run_skill_script", upperCall), scripted.Say("done"))
			e := env{getenv: func(k string) string { return vars[k] }, newModel: func(context.Context, string) (model.LLM, error) { return m, nil }}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"chat", "--skills", testSkills(t)}, flags...), strings.NewReader("go\n"), &stdout, &stderr, e)
			require.Equal(t, exitOK, code, stderr.String())
			require.Contains(t, stdout.String(), "done")
		},
		"web": func(t *testing.T, vars map[string]string, flags []string) {
			m := scripted.New("m", scripted.Call("run_skill_script", upperCall), scripted.Say("done"))
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			srv := startWebWith(t, m, vars, append([]string{"--skills", testSkills(t)}, flags...)...)
			resp, err := http.Post(srv.url+"/api/apps/adkskills/users/user/sessions", "application/json", strings.NewReader("{}"))
			require.NoError(t, err)
			var sess struct {
				ID string `json:"id"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&sess))
			resp.Body.Close()
			body := fmt.Sprintf(`{"appName":"adkskills","userId":"user","sessionId":%q,"newMessage":{"role":"user","parts":[{"text":"go"}]}}`, sess.ID)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.url+"/api/run", strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err = http.DefaultClient.Do(req)
			require.NoError(t, err)
			reply, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Contains(t, string(reply), "STDIN-SECRET-KIWI", "the UI gets the content")
			srv.stop() // ADK's launcher flushes its exporters
		},
	}
	for _, name := range []string{"run", "chat", "web"} {
		for _, content := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s content=%v", name, content), func(t *testing.T) {
				url, spans, _ := otlpReceiver(t)
				t.Setenv(otlpEndpoint, url)    // what the OTLP exporters read
				t.Setenv(otlpLogsEndpoint, "") // the command sets it: unset again after
				vars, _ := store(t)
				vars[otlpEndpoint] = url
				var flags []string
				if content {
					flags = []string{"--trace-content"}
				}
				commands[name](t, vars, flags)
				_, hidden := os.LookupEnv(otlpEndpoint)
				assert.False(t, hidden, "the variable is taken from ADK")

				got := spans()
				names := map[string]bool{}
				all := ""
				for _, s := range got {
					names[s.name] = true
					all += s.name + "\n" + s.text
				}
				for _, want := range []string{"invoke_agent", "generate_content", "execute_tool run_skill_script", "run_script py-tools scripts/upper.py"} {
					found := false
					for n := range names {
						found = found || strings.HasPrefix(n, want)
					}
					assert.True(t, found, "%s is exported: %v", want, names)
				}
				for _, secret := range traceSecrets {
					if content {
						assert.Contains(t, all, secret)
					} else {
						assert.NotContains(t, all, secret)
					}
				}
				assert.Equal(t, !content, strings.Contains(all, "gcp.vertex.agent.tool_response="+redact.Elided), all)
			})
		}
	}
}

// TestTelemetryOptionsTakeTheTraceEndpoints: the commands take the trace
// endpoints from ADK, which then builds its log exporter (a shared
// endpoint handed on as the logs endpoint, with the path OTLP gives it)
// and no span exporter of its own.
func TestTelemetryOptionsTakeTheTraceEndpoints(t *testing.T) {
	tests := []struct {
		name     string
		vars     map[string]string
		opts     int
		wantLogs string // the logs endpoint ADK is left with
	}{
		{"nothing set", map[string]string{}, 0, ""},
		{"a shared endpoint", map[string]string{otlpEndpoint: "http://collector:4318/"}, 1, "http://collector:4318/v1/logs"},
		{"a traces endpoint", map[string]string{otlpTracesEndpoint: "http://collector:4318/v1/traces"}, 1, ""},
		{"a logs endpoint of its own", map[string]string{otlpEndpoint: "http://collector:4318", otlpLogsEndpoint: "http://logs:4318/v1/logs"}, 1, "http://logs:4318/v1/logs"},
		{"only logs", map[string]string{otlpLogsEndpoint: "http://logs:4318/v1/logs"}, 0, "http://logs:4318/v1/logs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{otlpEndpoint, otlpTracesEndpoint, otlpLogsEndpoint} {
				t.Setenv(k, tt.vars[k])
				if tt.vars[k] == "" {
					os.Unsetenv(k)
				}
			}
			c := &cli{env: env{getenv: func(k string) string { return tt.vars[k] }}}
			opts, err := c.telemetryOptions(context.Background(), false)
			require.NoError(t, err)
			assert.Len(t, opts, tt.opts)
			_, traces := os.LookupEnv(otlpEndpoint)
			_, traces2 := os.LookupEnv(otlpTracesEndpoint)
			assert.False(t, traces || traces2, "no trace endpoint is left for ADK")
			assert.Equal(t, tt.wantLogs, os.Getenv(otlpLogsEndpoint))

			providers, err := telemetry.New(context.Background())
			require.NoError(t, err)
			assert.Nil(t, providers.TracerProvider, "ADK builds no span exporter")
			assert.Equal(t, tt.wantLogs != "", providers.LoggerProvider != nil, "ADK builds its log exporter")
			require.NoError(t, providers.Shutdown(context.Background()))
		})
	}
}

// TestBinaryExportsTracesWithoutContent runs the built command as a
// process of its own, as an operator does: the first provider it sets is
// its own, so ADK's spans and log records reach the collector, and the
// tool content does not.
func TestBinaryExportsTracesWithoutContent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	for _, content := range []bool{false, true} {
		t.Run(fmt.Sprintf("content=%v", content), func(t *testing.T) {
			url, spans, logs := otlpReceiver(t)
			args := []string{"run", "--stdin", "-"}
			if content {
				args = append(args, "--trace-content")
			}
			cmd := exec.Command(bin, append(args, "py-tools", "scripts/upper.py", "--", "arg-secret-plum")...)
			cmd.Dir = repoRoot(t)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "ADKSKILLS_ARTIFACTS=" + t.TempDir(), otlpEndpoint + "=" + url}
			cmd.Stdin = strings.NewReader("stdin-secret-kiwi\n")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "STDIN-SECRET-KIWI")
			all := ""
			for _, s := range spans() {
				all += s.name + "\n" + s.text
			}
			assert.Contains(t, all, "execute_tool run_skill_script")
			assert.Contains(t, all, "run_script py-tools scripts/upper.py")
			for _, secret := range traceSecrets {
				assert.Equal(t, content, strings.Contains(all, secret), "%s exported", secret)
			}
			assert.Positive(t, logs(), "ADK's log records are exported")
		})
	}
}
