package redact_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/adkskills/adkskills/redact"
)

// A span as ADK records a tool call, through a processor in front of an
// exporter. With ADK's telemetry package, pass the processor to
// telemetry.WithSpanProcessors.
func ExampleNewSpanProcessor() {
	exp := tracetest.NewInMemoryExporter() // stands for an OTLP exporter
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(redact.NewSpanProcessor(sdktrace.NewSimpleSpanProcessor(exp))))
	_, span := tp.Tracer("example").Start(context.Background(), "execute_tool run_skill_script")
	span.SetAttributes(
		attribute.String("gen_ai.tool.name", "run_skill_script"),
		attribute.String("gcp.vertex.agent.tool_call_args", `{"stdin":"my password"}`),
		attribute.String("gcp.vertex.agent.tool_response", `{"stdout":"the customer list"}`),
	)
	span.End()
	for _, kv := range exp.GetSpans()[0].Attributes {
		fmt.Println(kv.Key, "=", kv.Value.String())
	}
	// Output:
	// gen_ai.tool.name = run_skill_script
	// gcp.vertex.agent.tool_call_args = <elided>
	// gcp.vertex.agent.tool_response = <elided>
}

// The same at the exporter: for sdktrace.WithBatcher.
func ExampleNewSpanExporter() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(redact.NewSpanExporter(exp)))
	_, span := tp.Tracer("example").Start(context.Background(), "execute_tool load_skill_resource")
	span.SetAttributes(attribute.String("gcp.vertex.agent.tool_response", `{"content":"a private file"}`))
	span.End()
	fmt.Println(exp.GetSpans()[0].Attributes[0].Value.String())
	// Output:
	// <elided>
}
