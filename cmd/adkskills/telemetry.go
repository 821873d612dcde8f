package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
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

// telemetryOptions returns ADK's telemetry options for the OTLP exporters
// the OTEL_EXPORTER_OTLP_* variables ask for, built as ADK's launchers
// build them, with the span exporter behind redact unless content is
// asked for.
//
// From the same variables ADK's telemetry.New would build a span exporter
// of its own that nothing can wrap, so once read they are removed from the
// process's environment (scripts never see them: executors pass an
// allowlist).
func (c *cli) telemetryOptions(ctx context.Context, content bool) ([]telemetry.Option, error) {
	var opts []telemetry.Option
	set := func(k string) bool { return c.env.getenv(k) != "" }
	if set(otlpEndpoint) || set(otlpTracesEndpoint) {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
		}
		var p sdktrace.SpanProcessor = sdktrace.NewBatchSpanProcessor(exp)
		if !content {
			p = redact.NewSpanProcessor(p)
		}
		opts = append(opts, telemetry.WithSpanProcessors(p))
	}
	if set(otlpEndpoint) || set(otlpLogsEndpoint) {
		exp, err := otlploghttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("the OTLP log exporter: %w", err)
		}
		opts = append(opts, telemetry.WithLogRecordProcessors(sdklog.NewBatchProcessor(exp)))
	}
	for _, k := range []string{otlpEndpoint, otlpTracesEndpoint, otlpLogsEndpoint} {
		_ = os.Unsetenv(k)
	}
	return opts, nil
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
