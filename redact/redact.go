// Package redact keeps tool content out of exported OpenTelemetry spans.
//
// ADK Go's execute_tool spans, the parents of adkskills' run_script spans,
// record a tool call's whole arguments and whole response: for
// run_skill_script the args and stdin the model passed and the stdout and
// stderr the script printed, for run_skill_inline_script the script
// itself, for load_skill_resource a file's content. ADK's own log records
// elide message content unless asked (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT);
// its spans do not. Put a [SpanProcessor] (or a [SpanExporter]) between the
// SDK and an exporter, and what reaches the exporter has every content
// attribute ([ContentKeys]) replaced by [Elided], and the error of a failed
// tool call, which is part of its response, too. Everything else (span
// names, tool names, call IDs, durations, status codes, adkskills' own
// attributes, which never hold content) passes unchanged.
//
// With ADK's telemetry package:
//
//	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url))
//	...
//	providers, err := telemetry.New(ctx,
//		telemetry.WithSpanProcessors(redact.NewSpanProcessor(sdktrace.NewBatchSpanProcessor(exp))))
//
// Give the endpoint to the exporter, not through OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: from those variables telemetry.New
// builds an exporter of its own, which this package cannot wrap. Leave the
// processor out to export content.
package redact

import (
	"context"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Elided replaces a value this package keeps out, as ADK's own log records
// show elided content.
const Elided = "<elided>"

// ContentKeys are the span attributes that hold content: a tool call's
// arguments and response, and a model's messages. ADK Go v1.7.0 (and
// v2.2.0) sets the first two, on execute_tool spans and on the
// "execute_tool (merged)" span of parallel calls; the others are adk-python's
// and the OpenTelemetry GenAI conventions' names for the same content, which
// a later ADK may set.
var ContentKeys = []attribute.Key{
	"gcp.vertex.agent.tool_call_args",
	"gcp.vertex.agent.tool_response",
	"gcp.vertex.agent.llm_request",
	"gcp.vertex.agent.llm_response",
	semconv.GenAIInputMessagesKey,
	semconv.GenAIOutputMessagesKey,
	semconv.GenAISystemInstructionsKey,
	semconv.GenAIToolCallArgumentsKey,
	semconv.GenAIToolCallResultKey,
}

// toolSpanPrefix starts the name of ADK's tool spans: "execute_tool NAME"
// and "execute_tool (merged)". Their error is the tool's response.
const toolSpanPrefix = "execute_tool"

// Span returns s as an exporter should see it: every ContentKeys attribute
// holds Elided, and, on a tool span (named "execute_tool …"), the status
// description and the exception events' messages too. A span with nothing
// to elide is returned as it is.
func Span(s sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	attrs, changed := attributes(s.Attributes())
	tool := strings.HasPrefix(s.Name(), toolSpanPrefix)
	var events []sdktrace.Event
	status := s.Status()
	if tool {
		var evChanged bool
		events, evChanged = toolEvents(s.Events())
		changed = changed || evChanged
		if status.Description != "" {
			status.Description, changed = Elided, true
		}
	}
	if !changed {
		return s
	}
	return &stripped{ReadOnlySpan: s, attrs: attrs, events: events, status: status, tool: tool}
}

// attributes returns attrs with every content value replaced by Elided,
// and whether it replaced any; attrs itself when none.
func attributes(attrs []attribute.KeyValue) ([]attribute.KeyValue, bool) {
	var out []attribute.KeyValue
	for i, kv := range attrs {
		if !slices.Contains(ContentKeys, kv.Key) {
			continue
		}
		if out == nil {
			out = slices.Clone(attrs)
		}
		out[i] = kv.Key.String(Elided)
	}
	if out == nil {
		return attrs, false
	}
	return out, true
}

// toolEvents returns a tool span's events with each exception message
// replaced by Elided, and whether it replaced any.
func toolEvents(events []sdktrace.Event) ([]sdktrace.Event, bool) {
	out := slices.Clone(events)
	changed := false
	for i, ev := range out {
		if ev.Name != semconv.ExceptionEventName {
			continue
		}
		ev.Attributes = slices.Clone(ev.Attributes)
		for j, kv := range ev.Attributes {
			if kv.Key == semconv.ExceptionMessageKey {
				ev.Attributes[j] = kv.Key.String(Elided)
				changed = true
			}
		}
		out[i] = ev
	}
	return out, changed
}

// stripped is a span seen without its content.
type stripped struct {
	sdktrace.ReadOnlySpan
	attrs  []attribute.KeyValue
	events []sdktrace.Event
	status sdktrace.Status
	tool   bool
}

func (s *stripped) Attributes() []attribute.KeyValue { return s.attrs }

func (s *stripped) Status() sdktrace.Status { return s.status }

func (s *stripped) Events() []sdktrace.Event {
	if !s.tool {
		return s.ReadOnlySpan.Events()
	}
	return s.events
}

// startView is a span being started, whose attributes read without content.
type startView struct {
	sdktrace.ReadWriteSpan
}

func (s startView) Attributes() []attribute.KeyValue {
	attrs, _ := attributes(s.ReadWriteSpan.Attributes())
	return attrs
}

// SpanProcessor hands the processor it wraps every span without content
// (see Span). Make one with [NewSpanProcessor].
type SpanProcessor struct {
	next sdktrace.SpanProcessor
}

var _ sdktrace.SpanProcessor = (*SpanProcessor)(nil)

// NewSpanProcessor returns a SpanProcessor in front of next, typically a
// batch processor of the exporter that must not see content.
func NewSpanProcessor(next sdktrace.SpanProcessor) *SpanProcessor {
	return &SpanProcessor{next: next}
}

// OnStart implements sdktrace.SpanProcessor: next sees the starting span's
// attributes without content.
func (p *SpanProcessor) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	p.next.OnStart(ctx, startView{s})
}

// OnEnd implements sdktrace.SpanProcessor: next gets Span(s).
func (p *SpanProcessor) OnEnd(s sdktrace.ReadOnlySpan) { p.next.OnEnd(Span(s)) }

// Shutdown implements sdktrace.SpanProcessor.
func (p *SpanProcessor) Shutdown(ctx context.Context) error { return p.next.Shutdown(ctx) }

// ForceFlush implements sdktrace.SpanProcessor.
func (p *SpanProcessor) ForceFlush(ctx context.Context) error { return p.next.ForceFlush(ctx) }

// SpanExporter exports through the exporter it wraps every span without
// content (see Span). Make one with [NewSpanExporter].
type SpanExporter struct {
	next sdktrace.SpanExporter
}

var _ sdktrace.SpanExporter = (*SpanExporter)(nil)

// NewSpanExporter returns a SpanExporter in front of next, for
// sdktrace.WithBatcher and the like.
func NewSpanExporter(next sdktrace.SpanExporter) *SpanExporter {
	return &SpanExporter{next: next}
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *SpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		out[i] = Span(s)
	}
	return e.next.ExportSpans(ctx, out)
}

// Shutdown implements sdktrace.SpanExporter.
func (e *SpanExporter) Shutdown(ctx context.Context) error { return e.next.Shutdown(ctx) }
