package scriptrun

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/adkskills/adkskills/codeexec"
)

// TracerName is the instrumentation scope of the script-run spans.
const TracerName = "github.com/adkskills/adkskills"

// tracer is taken from the global tracer provider when the package loads,
// exactly as ADK takes its own (internal/telemetry): both follow the first
// provider a program sets with otel.SetTracerProvider, as ADK's launchers do,
// so the run spans always land beside ADK's.
var tracer = otel.GetTracerProvider().Tracer(TracerName)

// Attribute keys of a script-run span. No key holds a script's output, its
// arguments, its stdin or a file's content.
const (
	AttrTool          = attribute.Key("adkskills.tool")
	AttrSkill         = attribute.Key("adkskills.skill")
	AttrScript        = attribute.Key("adkskills.script")
	AttrLanguage      = attribute.Key("adkskills.language")
	AttrInline        = attribute.Key("adkskills.inline")
	AttrExecutor      = attribute.Key("adkskills.executor")
	AttrStatus        = attribute.Key("adkskills.status")
	AttrExitCode      = attribute.Key("adkskills.exit_code")
	AttrTimedOut      = attribute.Key("adkskills.timed_out")
	AttrDurationMs    = attribute.Key("adkskills.duration_ms")
	AttrStdoutBytes   = attribute.Key("adkskills.stdout.bytes")
	AttrStdoutChars   = attribute.Key("adkskills.stdout.chars")
	AttrStdoutCut     = attribute.Key("adkskills.stdout.truncated")
	AttrStderrBytes   = attribute.Key("adkskills.stderr.bytes")
	AttrStderrChars   = attribute.Key("adkskills.stderr.chars")
	AttrStderrCut     = attribute.Key("adkskills.stderr.truncated")
	AttrFilesSaved    = attribute.Key("adkskills.files.saved")
	AttrFilesNotSaved = attribute.Key("adkskills.files.not_saved")
	AttrFilesOmitted  = attribute.Key("adkskills.files.omitted")
	AttrFilesInput    = attribute.Key("adkskills.files.input")
)

// Call says what one script run is, for its span and logs.
type Call struct {
	// Tool is the tool's name (run_skill_script, run_skill_inline_script).
	Tool string
	// Skill is the skill the script runs in; empty for an inline script
	// outside any skill.
	Skill string
	// Script is the path of a skill's script; empty for an inline script.
	Script string
	// Language is an inline script's language; empty for a skill's script.
	Language string
	// Inputs counts the input files staged for the run.
	Inputs int
}

// spanName is "run_script SKILL SCRIPT" or "run_inline_script LANGUAGE".
func (c Call) spanName() string {
	if c.Language != "" {
		return "run_inline_script " + c.Language
	}
	return "run_script " + c.Skill + " " + c.Script
}

// startSpan starts the span of one run on ADK's tracer provider (see
// tracer), so it is a child of ADK's execute_tool span and shows wherever
// ADK's traces go.
func startSpan(ctx context.Context, c Call, e codeexec.Executor) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		AttrTool.String(c.Tool),
		AttrInline.Bool(c.Language != ""),
		AttrExecutor.String(executorName(e)),
		AttrFilesInput.Int(c.Inputs),
	}
	if c.Skill != "" {
		attrs = append(attrs, AttrSkill.String(c.Skill))
	}
	if c.Script != "" {
		attrs = append(attrs, AttrScript.String(c.Script))
	}
	if c.Language != "" {
		attrs = append(attrs, AttrLanguage.String(c.Language))
	}
	return tracer.Start(ctx, c.spanName(),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// executorName is the executor's type without its pointer: "local.Executor".
func executorName(e codeexec.Executor) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", e), "*")
}

// endSpanError records a run that could not start: the error and its status.
func endSpanError(span trace.Span, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, "the script could not be run")
	span.End()
}

// endSpan records what a run did, counting the files its response lists, and
// ends the span. A run that failed or timed out has an error status.
func endSpan(span trace.Span, res *codeexec.Result, resp *Response) {
	saved := 0
	for _, f := range resp.OutputFiles {
		if f.Artifact != "" {
			saved++
		}
	}
	st := status(res)
	span.SetAttributes(
		AttrStatus.String(st),
		AttrExitCode.Int(res.ExitCode),
		AttrTimedOut.Bool(res.TimedOut),
		AttrDurationMs.Float64(float64(res.Duration.Microseconds())/1000),
		AttrStdoutBytes.Int64(res.Stdout.TotalBytes),
		AttrStdoutChars.Int64(res.Stdout.TotalChars),
		AttrStdoutCut.Bool(res.Stdout.Truncated),
		AttrStderrBytes.Int64(res.Stderr.TotalBytes),
		AttrStderrChars.Int64(res.Stderr.TotalChars),
		AttrStderrCut.Bool(res.Stderr.Truncated),
		AttrFilesSaved.Int(saved),
		AttrFilesNotSaved.Int(len(res.Files)-saved),
		AttrFilesOmitted.Int(len(res.Omitted)),
	)
	switch st {
	case StatusTimeout:
		span.SetStatus(codes.Error, "the script timed out")
	case StatusError:
		span.SetStatus(codes.Error, fmt.Sprintf("the script exited with code %d", res.ExitCode))
	}
	span.End()
}
