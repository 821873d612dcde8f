package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/skilltoolset/skill"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/encoding"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/internal/valid"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

const runAbout = `Runs SCRIPT (a path relative to the skill's folder, e.g. scripts/report.py)
of the skill SKILL exactly as an agent would: through the SkillToolset's
run_skill_script tool, called once by a scripted model under ADK's runner,
with the files the script writes saved in the artifact store.

ARGS after -- are passed to the script as argv, never through a shell.
--input FILE saves a local file into the session first (as the artifact
named after the file) and passes it in: the script finds it in its working
directory under the file's name. --input-artifact passes in what the
session already has: an artifact name, a file path an earlier run wrote, or
a glob over those paths (unpacked/**), as the model's input_files does.
A file passed in that the script deletes, renames or moves away is listed
under deleted files and leaves the session's tree (artifacts ls): later
--input-artifact paths and globs no longer pass it in.
Exit status: 0 success; the script's exit code (1..125) when it failed;
124 on timeout; 1 when the tool refused the call; 2 for a usage error.`

func runCommand(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet("run", "adkskills run [flags] SKILL SCRIPT [-- ARGS...]", runAbout)
	fs.rest, fs.restSynopsis = "the script's own arguments", "adkskills run SKILL SCRIPT"
	skills := skillsFlag(fs)
	var st storeFlags
	st.register(fs)
	ex := execFlags{oneRun: true}
	ex.register(fs)
	var tf traceFlags
	tf.register(fs)
	stdinArg := fs.String("stdin", "", "the script's standard input: a `FILE`, or - for this command's stdin")
	var inputs, inputArtifacts repeated
	fs.Var(&inputs, "input", "save the local `FILE` into the session and pass it in, under its file name (repeatable)")
	fs.Var(&inputArtifacts, "input-artifact", "pass in the session's files: an artifact name, a file path or a glob such as 'unpacked/**' (an `ENTRY` of input_files; repeatable)")
	asJSON := fs.Bool("json", false, "print exactly the function response the model gets, as JSON, and nothing else on stdout")
	pos, scriptArgs, code, done := c.parse(fs, args)
	if done {
		return code
	}
	switch {
	case len(pos) < 2:
		return c.usageError(fs, "run needs a SKILL and a SCRIPT, e.g. adkskills run report-writer scripts/report.py -- Ada")
	case len(pos) > 2:
		return c.usageError(fs, "run: unexpected argument %q: the script's arguments go after --", pos[2])
	}
	if err := ex.check(); err != nil {
		return c.usageError(fs, "run: %v", err)
	}
	call := scriptCall{skill: pos[0], script: pos[1], args: scriptArgs}
	uploads, err := c.readInputs(inputs)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	if err := c.stdinFor(&call, *stdinArg); err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	wb, code := c.open(ctx, *skills, st.dir, &ex)
	if wb == nil {
		return code
	}
	defer wb.close()
	root, store, exe := wb.root, wb.store, wb.exe
	saved, err := c.saveInputs(ctx, store, st.session, uploads)
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	for _, u := range saved {
		call.inputs = append(call.inputs, u.artifact)
	}
	call.inputs = append(call.inputs, inputArtifacts...)
	stop, err := c.startTelemetry(ctx, tf.content)
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	defer stop()
	timed := &timedExecutor{Executor: exe}
	// The toolset's log (executor and save failures) is held back until the
	// outcome is known, so a failure is explained once.
	var logs bytes.Buffer
	defer func() { c.stderr.Write(logs.Bytes()) }()
	res, err := c.callRunScript(ctx, toolRun{
		logger:   slog.New(&lineHandler{w: &logs, mu: &sync.Mutex{}, min: slog.LevelError}),
		source:   skilltoolset.NewFSSource(root.FS()),
		store:    store,
		session:  st.session,
		executor: timed,
		opts:     []skilltoolset.Option{skilltoolset.WithScriptTimeout(ex.timeout), skilltoolset.WithMaxOutputChars(ex.maxChars)},
	}, call)
	if ctx.Err() != nil {
		c.errorf("interrupted")
		return exitInterrupted
	}
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	return c.reportRun(res, root, call, &logs, *asJSON, func() {
		c.printInputs(saved, inputArtifacts, timed.staged())
		c.printRun(store, st.session, call, res, timed.duration())
	})
}

// stdinFor sets call's stdin from arg (a file, or - for this command's own
// standard input) when arg is set.
func (c *cli) stdinFor(call *scriptCall, arg string) error {
	if arg == "" {
		return nil
	}
	in, err := c.readStdin(arg, runscript.MaxStdinBytes)
	if err != nil {
		return err
	}
	call.stdin = &in
	return nil
}

// reportRun prints a run's response: as JSON when asJSON, then, for a tool
// error, the held-back log and one line saying what went wrong, and for a
// run, the summary print gives. It returns the command's exit code.
func (c *cli) reportRun(res *runscript.Response, root *os.Root, call scriptCall, logs *bytes.Buffer, asJSON bool, print func()) int {
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			c.errorf("printing the response: %v", err)
			return exitFailure
		}
	}
	if res.Failed() {
		msg := res.Error
		if reason := brokenSkill(root, call.skill); reason != nil {
			// The log says the same; this line says it better.
			logs.Reset()
			msg = fmt.Sprintf("skill %q cannot be loaded: %v (adkskills validate shows every problem)", call.skill, reason)
		}
		c.stderr.Write(logs.Bytes()) // the details first
		logs.Reset()
		c.errorf("%s: %s", res.ErrorCode, msg)
		return exitFailure
	}
	if !asJSON {
		print()
	}
	return runExitCode(res)
}

// brokenSkill returns why the skill folder name cannot be loaded, or nil
// when there is no such folder.
func brokenSkill(root *os.Root, name string) error {
	skills, err := skillfs.New(root.FS(), nil).Scan()
	if err != nil {
		return nil
	}
	for _, sk := range skills {
		if sk.Dir == name {
			return sk.Err
		}
	}
	return nil
}

// runExitCode mirrors a run's outcome: 0, the script's exit code clamped to
// 1..125, or 124 for a timeout.
func runExitCode(res *runscript.Response) int {
	switch res.Status {
	case runscript.StatusSuccess:
		return exitOK
	case runscript.StatusTimeout:
		return exitTimeout
	}
	return min(max(res.ExitCode, 1), exitMaxScript)
}

// scriptCall is what the user asked run to do.
type scriptCall struct {
	skill, script string
	args          []string
	stdin         *string
	inputs        []string // input_files
}

// functionCall is the run_skill_script call a model would make.
func (s scriptCall) functionCall() *genai.FunctionCall {
	argv := make([]any, 0, len(s.args))
	for _, a := range s.args {
		argv = append(argv, a)
	}
	args := map[string]any{"skill_name": s.skill, "script_path": s.script, "args": argv}
	if s.stdin != nil {
		args["stdin"] = *s.stdin
	}
	if len(s.inputs) > 0 {
		in := make([]any, 0, len(s.inputs))
		for _, e := range s.inputs {
			in = append(in, e)
		}
		args["input_files"] = in
	}
	return &genai.FunctionCall{Name: runscript.Name, Args: args}
}

// toolRun is the agent set-up of one run.
type toolRun struct {
	source   skill.Source
	store    artifact.Service
	session  string
	executor codeexec.Executor
	opts     []skilltoolset.Option
	// logger receives the toolset's log (nil: errors on stderr). Skills
	// left out are not a run's business, so warnings are best dropped.
	logger *slog.Logger
}

// callRunScript runs the call the way an agent does: the SkillToolset from
// skilltoolset.New in an llmagent, a scripted model that calls
// run_skill_script once and then ends its turn, ADK's runner with an
// in-memory session and the artifact store. It returns the function response
// from the event stream.
func (c *cli) callRunScript(ctx context.Context, tr toolRun, call scriptCall) (*runscript.Response, error) {
	logger := tr.logger
	if logger == nil {
		logger = c.logger(slog.LevelError)
	}
	opts := append([]skilltoolset.Option{
		skilltoolset.WithCodeExecutor(tr.executor),
		skilltoolset.WithLogger(logger),
	}, tr.opts...)
	ts, err := skilltoolset.New(ctx, tr.source, opts...)
	if err != nil {
		return nil, err
	}
	tools, err := ts.Tools(nil)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(tools, func(t tool.Tool) bool { return t.Name() == runscript.Name }) {
		return nil, fmt.Errorf("no skill has a script that can run (%s), so %s is not offered", codeexec.InterpretersOf(tr.executor).Supported(), runscript.Name)
	}
	// The model calls run_skill_script once, then ends its turn.
	m := scripted.New("adkskills-run", declared(call.functionCall()), scripted.Say("Done."))
	a, err := llmagent.New(llmagent.Config{
		Name:        "adkskills_cli",
		Description: "Runs one skill script for the adkskills command line.",
		Model:       m,
		Toolsets:    []tool.Toolset{ts},
	})
	if err != nil {
		return nil, err
	}
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: sessions, ArtifactService: tr.store})
	if err != nil {
		return nil, err
	}
	userID := c.userID()
	if _, err := sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: tr.session}); err != nil {
		return nil, err
	}
	msg := genai.NewContentFromText(fmt.Sprintf("Run %s of the skill %s.", call.script, call.skill), genai.RoleUser)
	var resp map[string]any
	for ev, err := range r.Run(ctx, userID, tr.session, msg, agent.RunConfig{}) {
		if err != nil {
			return nil, err
		}
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionResponse != nil && p.FunctionResponse.Name == runscript.Name {
				resp = p.FunctionResponse.Response
			}
		}
	}
	if resp == nil {
		return nil, errors.New("the agent produced no run_skill_script response")
	}
	return runscript.ParseResponse(resp)
}

// declared is the first step of run's scripted model: the call, once the
// toolset has declared the tool it names.
func declared(fc *genai.FunctionCall) scripted.Step {
	return func(req *model.LLMRequest) (*genai.Content, error) {
		if _, ok := req.Tools[fc.Name]; !ok {
			return nil, fmt.Errorf("the toolset did not declare %s", fc.Name)
		}
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: fc}}}, nil
	}
}

// timedExecutor records the duration of the run it passes on, which the
// response the model gets has not, and the files staged over the skill:
// for run_skill_script, the input files.
type timedExecutor struct {
	codeexec.Executor

	mu     sync.Mutex
	last   time.Duration
	inputs []stagedFile
}

// stagedFile is a file a request staged over the skill folder.
type stagedFile struct {
	path string
	size int64
}

// Interpreters is the wrapped executor's table, so the tools run what it
// runs.
func (t *timedExecutor) Interpreters() codeexec.Interpreters {
	return codeexec.InterpretersOf(t.Executor)
}

// Err is the wrapped executor's configuration error.
func (t *timedExecutor) Err() error { return codeexec.ConfigError(t.Executor) }

func (t *timedExecutor) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	inputs := make([]stagedFile, 0, len(req.Files))
	for _, f := range req.Files {
		inputs = append(inputs, stagedFile{path: f.Path, size: int64(len(f.Data))})
	}
	t.mu.Lock()
	t.inputs = inputs
	t.mu.Unlock()
	res, err := t.Executor.Execute(ctx, req)
	if res != nil {
		t.mu.Lock()
		t.last = res.Duration
		t.mu.Unlock()
	}
	return res, err
}

func (t *timedExecutor) duration() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// staged returns the files the last run staged over the skill folder.
func (t *timedExecutor) staged() []stagedFile {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.inputs
}

// printRun prints the readable summary of a run.
func (c *cli) printRun(store *fileartifact.Service, sessionID string, call scriptCall, res *runscript.Response, d time.Duration) {
	w := c.stdout
	section := func(title, text string) {
		fmt.Fprintf(w, "== %s ==\n", title)
		switch {
		case text == "":
			fmt.Fprintln(w, "(empty)")
		case text[len(text)-1] != '\n':
			fmt.Fprintln(w, text)
		default:
			io.WriteString(w, text)
		}
	}
	section("stdout", res.Stdout)
	section("stderr", res.Stderr)

	if len(res.OutputFiles) > 0 {
		fmt.Fprintf(w, "== output files ==\n")
	}
	userID := c.userID()
	saved := 0
	for _, f := range res.OutputFiles {
		if f.Artifact == "" {
			fmt.Fprintf(w, "%s (%s, %s): not saved\n", f.Name, humanSize(f.SizeBytes), f.MIMEType)
			continue
		}
		saved++
		fmt.Fprintf(w, "%s -> artifact %q version %d (%s, %s)\n", f.Name, f.Artifact, f.Version, humanSize(f.SizeBytes), f.MIMEType)
		if p, err := store.Path(appName, userID, sessionID, f.Artifact, f.Version); err == nil {
			fmt.Fprintf(w, "    %s\n", p)
		} else {
			fmt.Fprintf(w, "    (no path: %v)\n", err)
		}
	}
	if len(res.DeletedFiles) > 0 {
		fmt.Fprintf(w, "== deleted files ==\n")
	}
	for _, f := range res.DeletedFiles {
		fmt.Fprintf(w, "%s (artifact %q keeps its versions)\n", f.Name, f.Artifact)
	}
	if res.Message != "" {
		fmt.Fprintf(w, "message: %s\n", res.Message)
	}
	if res.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", res.Warning)
	}
	line := fmt.Sprintf("== %s %s: %s, exit code %d", call.skill, call.script, res.Status, res.ExitCode)
	if d > 0 {
		line += ", " + d.Round(time.Millisecond).String()
	}
	if len(res.OutputFiles) > 0 {
		line += fmt.Sprintf(", %d file(s) saved", saved)
	}
	if len(res.DeletedFiles) > 0 {
		line += fmt.Sprintf(", %d file(s) deleted", len(res.DeletedFiles))
	}
	fmt.Fprintln(w, line+" ==")
}

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ", ") }

// Set implements flag.Value.
func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// upload is one --input file: read, then saved into the session.
type upload struct {
	file     string // as given
	path     string // where the script finds it: the file's name
	data     []byte
	artifact string // the artifact it was saved as
	version  int64
}

// readInputs reads the --input files, each within the input file limit
// the toolset applies, refusing two that would land at one path.
func (c *cli) readInputs(files []string) ([]upload, error) {
	limit := codeexec.Limits{}.WithDefaults().Output.MaxFileBytes
	var out []upload
	seen := map[string]string{}
	for _, file := range files {
		name := filepath.Base(file)
		if _, err := valid.Path(name); err != nil || name == "." || name == string(filepath.Separator) {
			return nil, fmt.Errorf("--input %s: not a file name a script can be given", file)
		}
		if prev, ok := seen[name]; ok {
			return nil, fmt.Errorf("--input %s and %s: both would be %s in the script's folder", prev, file, name)
		}
		seen[name] = file
		f, err := os.Open(c.abs(file))
		if err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
		data, err := io.ReadAll(io.LimitReader(f, limit+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--input %s: %w", file, err)
		}
		if int64(len(data)) > limit {
			return nil, fmt.Errorf("--input %s: over %s, the limit of one input file", file, humanSize(limit))
		}
		out = append(out, upload{file: file, path: name, data: data})
	}
	return out, nil
}

// saveInputs saves the --input files into the session, as the artifact
// each one's path maps to: a new version when the session has it already,
// and back in the session's tree when a run had deleted it.
func (c *cli) saveInputs(ctx context.Context, store artifact.Service, sessionID string, uploads []upload) ([]upload, error) {
	paths := make([]string, 0, len(uploads))
	for i, u := range uploads {
		name := runscript.ArtifactName(u.path)
		part := &genai.Part{InlineData: &genai.Blob{Data: u.data, MIMEType: encoding.MIMEType(u.path, u.data)}}
		resp, err := store.Save(ctx, &artifact.SaveRequest{AppName: appName, UserID: c.userID(), SessionID: sessionID, FileName: name, Part: part})
		if err != nil {
			return nil, fmt.Errorf("--input %s: saving it into the session: %w", u.file, err)
		}
		uploads[i].artifact, uploads[i].version, uploads[i].data = name, resp.Version, nil
		paths = append(paths, u.path)
	}
	if err := runscript.Restore(ctx, adkglue.SessionArtifacts(store, appName, c.userID(), sessionID), paths...); err != nil {
		return nil, fmt.Errorf("--input: %w", err)
	}
	return uploads, nil
}

// printInputs lists the --input files as saved, then the files the
// --input-artifact entries passed in (what the run staged besides them).
func (c *cli) printInputs(saved []upload, entries []string, staged []stagedFile) {
	if len(saved) == 0 && len(entries) == 0 {
		return
	}
	fmt.Fprintf(c.stdout, "== input files ==\n")
	uploaded := map[string]bool{}
	for _, u := range saved {
		uploaded[u.path] = true
		fmt.Fprintf(c.stdout, "%s -> artifact %q version %d, passed in as %s\n", u.file, u.artifact, u.version, runscript.DisplayPath(u.path))
	}
	if len(entries) == 0 {
		return
	}
	var found []stagedFile
	for _, f := range staged {
		if !uploaded[f.path] {
			found = append(found, f)
		}
	}
	quoted := make([]string, len(entries))
	for i, e := range entries {
		quoted[i] = shellWord(e)
	}
	fmt.Fprintf(c.stdout, "--input-artifact %s passed in %s:\n", strings.Join(quoted, ", "), plural(len(found), "file", "files"))
	for _, f := range found {
		fmt.Fprintf(c.stdout, "    %s (%s)\n", runscript.DisplayPath(f.path), humanSize(f.size))
	}
}
