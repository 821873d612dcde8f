package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/adk/telemetry"

	"github.com/adkskills/adkskills/redact"
)

// The variables from which ADK's telemetry.New builds OTLP exporters: the
// first for traces and logs, the others for one each.
const (
	otlpEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	otlpTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	otlpLogsEndpoint   = "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"
)

// telemetryShutdown bounds the flush of what is left to export when a
// command ends.
const telemetryShutdown = 10 * time.Second

// traceFlags are the telemetry flags of run, chat and web.
type traceFlags struct {
	content bool
}

func (f *traceFlags) register(fs *flagSet) {
	fs.BoolVar(&f.content, "trace-content", false, "export tool calls' arguments and results in trace spans (a script's args, stdin, stdout and stderr, a file's content); "+
		"by default they read <elided>. Traces are exported over OTLP when "+otlpEndpoint+" or "+otlpTracesEndpoint+" is set")
}

// telemetryOptions returns ADK's telemetry options for the span exporter
// the OTEL_EXPORTER_OTLP_* variables ask for, built as ADK's launchers build
// it, behind redact unless content is asked for.
//
// From the same variables ADK's telemetry.New would build a span exporter
// of its own that nothing can wrap, so once read the trace endpoints are
// removed from the process's environment; a shared endpoint stays the logs
// endpoint ADK reads (scripts never see any of them: executors pass an
// allowlist).
func (c *cli) telemetryOptions(ctx context.Context, content bool) ([]telemetry.Option, error) {
	endpoint := c.env.getenv(otlpEndpoint)
	if endpoint == "" && c.env.getenv(otlpTracesEndpoint) == "" {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	var p sdktrace.SpanProcessor = sdktrace.NewBatchSpanProcessor(exp)
	if !content {
		p = redact.NewSpanProcessor(p)
	}
	if endpoint != "" && c.env.getenv(otlpLogsEndpoint) == "" {
		// A signal's own endpoint is taken as it is; the shared one gets
		// the signal's path.
		_ = os.Setenv(otlpLogsEndpoint, strings.TrimSuffix(endpoint, "/")+"/v1/logs")
	}
	_ = os.Unsetenv(otlpEndpoint)
	_ = os.Unsetenv(otlpTracesEndpoint)
	return []telemetry.Option{telemetry.WithSpanProcessors(p)}, nil
}

// startTelemetry sets up what telemetryOptions asks for as ADK's console
// launcher does, and returns what flushes and stops it; both do nothing
// when no exporter is asked for.
func (c *cli) startTelemetry(ctx context.Context, content bool) (stop func(), err error) {
	opts, err := c.telemetryOptions(ctx, content)
	if err != nil || len(opts) == 0 {
		return func() {}, err
	}
	providers, err := telemetry.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	providers.SetGlobalOtelProviders()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryShutdown)
		defer cancel()
		if err := providers.Shutdown(sctx); err != nil && !errors.Is(err, context.Canceled) {
			c.errorf("telemetry: %v", err)
		}
	}, nil
}
