package redact

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

const (
	argsKey = attribute.Key("gcp.vertex.agent.tool_call_args")
	respKey = attribute.Key("gcp.vertex.agent.tool_response")
	secret  = "SECRET-stdout"
)

// exception is the event RecordError adds.
func exception(msg string) sdktrace.Event {
	return sdktrace.Event{Name: semconv.ExceptionEventName, Attributes: []attribute.KeyValue{
		semconv.ExceptionTypeKey.String("*errors.errorString"), semconv.ExceptionMessageKey.String(msg)}}
}

func TestSpan(t *testing.T) {
	other := attribute.String("gen_ai.tool.name", "run_skill_script")
	tests := []struct {
		name       string
		in         tracetest.SpanStub
		wantAttrs  []attribute.KeyValue
		wantStatus sdktrace.Status
		wantEvents []sdktrace.Event
		same       bool // nothing to elide: the span itself comes back
	}{{
		name: "a tool call",
		in: tracetest.SpanStub{Name: "execute_tool run_skill_script",
			Attributes: []attribute.KeyValue{other, argsKey.String(`{"stdin":"` + secret + `"}`), respKey.String(`{"stdout":"` + secret + `"}`)}},
		wantAttrs: []attribute.KeyValue{other, argsKey.String(Elided), respKey.String(Elided)},
	}, {
		name: "a failed tool call",
		in: tracetest.SpanStub{Name: "execute_tool load_skill_resource",
			Attributes: []attribute.KeyValue{argsKey.String(secret)},
			Status:     sdktrace.Status{Code: codes.Error, Description: "read " + secret},
			Events:     []sdktrace.Event{{Name: "note"}, exception("read " + secret)}},
		wantAttrs:  []attribute.KeyValue{argsKey.String(Elided)},
		wantStatus: sdktrace.Status{Code: codes.Error, Description: Elided},
		wantEvents: []sdktrace.Event{{Name: "note"}, {Name: semconv.ExceptionEventName, Attributes: []attribute.KeyValue{
			semconv.ExceptionTypeKey.String("*errors.errorString"), semconv.ExceptionMessageKey.String(Elided)}}},
	}, {
		name: "an error without content attributes",
		in: tracetest.SpanStub{Name: "execute_tool x", Status: sdktrace.Status{Code: codes.Error, Description: secret},
			Events: []sdktrace.Event{exception(secret)}},
		wantStatus: sdktrace.Status{Code: codes.Error, Description: Elided},
		wantEvents: []sdktrace.Event{{Name: semconv.ExceptionEventName, Attributes: []attribute.KeyValue{
			semconv.ExceptionTypeKey.String("*errors.errorString"), semconv.ExceptionMessageKey.String(Elided)}}},
	}, {
		name:      "parallel calls",
		in:        tracetest.SpanStub{Name: "execute_tool (merged)", Attributes: []attribute.KeyValue{argsKey.String("N/A"), respKey.String(secret)}},
		wantAttrs: []attribute.KeyValue{argsKey.String(Elided), respKey.String(Elided)},
	}, {
		name: "a model call keeps its error",
		in: tracetest.SpanStub{Name: "generate_content gemini",
			Attributes: []attribute.KeyValue{semconv.GenAIInputMessagesKey.String(secret), semconv.GenAIOutputMessagesKey.String(secret)},
			Status:     sdktrace.Status{Code: codes.Error, Description: "quota"}, Events: []sdktrace.Event{exception("quota")}},
		wantAttrs:  []attribute.KeyValue{semconv.GenAIInputMessagesKey.String(Elided), semconv.GenAIOutputMessagesKey.String(Elided)},
		wantStatus: sdktrace.Status{Code: codes.Error, Description: "quota"},
		wantEvents: []sdktrace.Event{exception("quota")},
	}, {
		name: "every content key",
		in: tracetest.SpanStub{Name: "invoke_agent a", Attributes: func() []attribute.KeyValue {
			var kvs []attribute.KeyValue
			for _, k := range ContentKeys {
				kvs = append(kvs, k.String(secret))
			}
			return kvs
		}()},
		wantAttrs: func() []attribute.KeyValue {
			var kvs []attribute.KeyValue
			for _, k := range ContentKeys {
				kvs = append(kvs, k.String(Elided))
			}
			return kvs
		}(),
	}, {
		name: "a script run holds no content",
		in: tracetest.SpanStub{Name: "run_script s scripts/a.py", Attributes: []attribute.KeyValue{attribute.String("adkskills.status", "error")},
			Status: sdktrace.Status{Code: codes.Error, Description: "the script could not be run"}, Events: []sdktrace.Event{exception("no bwrap")}},
		same: true,
	}, {
		name: "a tool span without content",
		in:   tracetest.SpanStub{Name: "execute_tool list_skills", Attributes: []attribute.KeyValue{other}},
		same: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in.Snapshot()
			before := append([]attribute.KeyValue(nil), in.Attributes()...)
			got := Span(in)
			assert.Equal(t, before, in.Attributes(), "the span itself is not changed")
			if tt.same {
				assert.Equal(t, in, got)
				_, copied := got.(*stripped)
				assert.False(t, copied, "the span itself comes back")
				return
			}
			assert.Equal(t, tt.wantAttrs, got.Attributes())
			assert.Equal(t, tt.wantStatus, got.Status())
			assert.Equal(t, tt.wantEvents, got.Events())
			assert.Equal(t, in.Name(), got.Name())
			assert.Equal(t, in.SpanContext(), got.SpanContext())
		})
	}
}

// recorder is a SpanProcessor that keeps what it is handed.
type recorder struct {
	startAttrs [][]attribute.KeyValue
	ended      []sdktrace.ReadOnlySpan
	calls      []string
	err        error
}

func (r *recorder) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	r.startAttrs = append(r.startAttrs, s.Attributes())
}
func (r *recorder) OnEnd(s sdktrace.ReadOnlySpan) { r.ended = append(r.ended, s) }
func (r *recorder) Shutdown(context.Context) error {
	r.calls = append(r.calls, "shutdown")
	return r.err
}
func (r *recorder) ForceFlush(context.Context) error {
	r.calls = append(r.calls, "flush")
	return r.err
}

// toolCall makes the spans ADK makes for a failed tool call.
func toolCall(tp trace.TracerProvider) {
	_, span := tp.Tracer("adk").Start(context.Background(), "execute_tool run_skill_script",
		trace.WithAttributes(argsKey.String(`{"stdin":"`+secret+`"}`)))
	span.SetAttributes(respKey.String(`{"error":"` + secret + `"}`))
	span.RecordError(errors.New(secret))
	span.SetStatus(codes.Error, secret)
	span.End()
}

func TestSpanProcessor(t *testing.T) {
	rec := &recorder{err: errors.New("downstream")}
	raw := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(NewSpanProcessor(rec)), sdktrace.WithSyncer(raw))
	toolCall(tp)
	require.Len(t, rec.ended, 1)
	require.Len(t, rec.startAttrs, 1)
	assert.Equal(t, []attribute.KeyValue{argsKey.String(Elided)}, rec.startAttrs[0], "a starting span reads without content")
	assert.NotContains(t, spanText(rec.ended[0]), secret)
	assert.Contains(t, spanText(raw.GetSpans().Snapshots()[0]), secret, "other processors see the span as it is")

	p := NewSpanProcessor(rec)
	assert.ErrorIs(t, p.ForceFlush(t.Context()), rec.err)
	assert.ErrorIs(t, p.Shutdown(t.Context()), rec.err)
	assert.Equal(t, []string{"flush", "shutdown"}, rec.calls)
}

func TestSpanExporter(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	exp := NewSpanExporter(mem)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	toolCall(tp)
	spans := mem.GetSpans().Snapshots()
	require.Len(t, spans, 1)
	assert.NotContains(t, spanText(spans[0]), secret)
	assert.Equal(t, codes.Error, spans[0].Status().Code, "the failure shows")
	require.NoError(t, exp.Shutdown(t.Context()))
	assert.Empty(t, mem.GetSpans(), "the exporter it wraps is shut down (and reset)")
}

// spanText is everything a span's attributes, status and events say.
func spanText(s sdktrace.ReadOnlySpan) string {
	text := s.Name() + " " + s.Status().Description
	for _, kv := range s.Attributes() {
		text += " " + kv.Value.String()
	}
	for _, ev := range s.Events() {
		for _, kv := range ev.Attributes {
			text += " " + kv.Value.String()
		}
	}
	return text
}
