// Package skilltoolset is adkskills' entry point: an ADK Go toolset that
// lists and loads Agent Skills (list_skills, load_skill and
// load_skill_resource, as ADK's own skill toolset declares them, with every
// answer bounded) and runs their scripts (run_skill_script and, when
// enabled, run_skill_inline_script) through a codeexec.Executor, with capped
// output and every file a script writes saved as a session artifact.
//
// Plug it into an agent:
//
//	exe := sandbox.New()
//	if err := exe.Probe(ctx); err != nil { ... } // bubblewrap missing: say so now
//	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS("skills")),
//		skilltoolset.WithCodeExecutor(exe))
//	...
//	a, err := llmagent.New(llmagent.Config{Name: "helper", Model: m, Toolsets: []tool.Toolset{ts}})
//
// and give the runner an artifact service (runner.Config.ArtifactService) so
// output files are kept.
package skilltoolset

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"sync"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/skilltoolset/skill"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// SkillToolset gives an agent Agent Skills and a way to run their scripts.
// It implements tool.Toolset and ADK's request processor
// (ProcessRequest), through which it adds its system instruction and the
// skill catalogue to each model request.
type SkillToolset struct {
	name   string
	source skill.Source
	table  codeexec.Interpreters
	inline bool
	logger *slog.Logger

	// variants[1] is used when some skill has a script, variants[0] when not.
	variants [2]variant

	base      []tool.Tool // ADK's skill tools, wrapped
	runScript tool.Tool   // nil without an executor
	runInline tool.Tool   // nil unless inline scripts are on

	// hasScripts' answer for the invocation scriptsInv.
	scriptsMu  sync.Mutex
	scriptsInv string
	scriptsHas bool
}

// variant is one system instruction, which ProcessRequest adds with the
// catalogue.
type variant struct {
	instruction string
}

// NewFSSource returns a skill.Source over fsys, whose immediate subfolders
// holding a SKILL.md are skills. Compared with ADK's
// skill.NewFileSystemSource:
//   - scripts see the skill's whole folder (data in cards/ or templates/,
//     sibling modules), not only scripts/, references/ and assets/, and
//     load_skill_resource can read any file of it;
//   - frontmatter keys outside the specification (argument-hint,
//     user-invocable, version, …) are tolerated, and a malformed SKILL.md
//     leaves that one skill out with a logged warning instead of failing the
//     whole catalogue;
//   - symbolic links inside a skill are never listed, staged or opened.
//
// With a plain skill.Source (ADK's, or your own) a script run stages only
// what its ListResources(ctx, name, "") returns: for ADK's file system
// source, the scripts/, references/ and assets/ folders.
//
// Prefer an fs.FS that cannot be escaped, such as (*os.Root).FS(). The
// source of an os.DirFS names its folder in errors ("the skills folder
// skills cannot be read: open skills: no such file or directory"); other
// file systems say only what failed. (*os.Root).FS() needs no name: a
// folder that cannot be read fails os.OpenRoot, which names it.
func NewFSSource(fsys fs.FS) skill.Source {
	return skillfs.New(fsys, nil).WithDir(dirFSName(fsys))
}

// dirFSType is the type os.DirFS returns: a string, the folder's name.
var dirFSType = reflect.TypeOf(os.DirFS(""))

// dirFSName is the folder an os.DirFS was made for, or "" for any other
// file system.
func dirFSName(fsys fs.FS) string {
	if v := reflect.ValueOf(fsys); v.IsValid() && v.Type() == dirFSType {
		return v.String()
	}
	return ""
}

// New returns a SkillToolset over source. The script tools are declared only
// when a code executor is configured (WithCodeExecutor): run_skill_script
// when some skill has a script the executor's interpreter table can run
// (checked on every invocation, so a skill added later counts), and
// run_skill_inline_script with WithInlineScripts(true).
//
// New refuses a source that cannot list its skills (a missing skills
// folder, a file where the folder should be) and a NewFSSource folder that
// is itself a skill, here rather than at the model's first request; a
// folder with no skills yet is fine.
func New(ctx context.Context, source skill.Source, opts ...Option) (*SkillToolset, error) {
	if source == nil {
		return nil, fmt.Errorf("skilltoolset: a skill source is required")
	}
	if err := checkSource(ctx, source); err != nil {
		return nil, fmt.Errorf("skilltoolset: %w", err)
	}
	cfg := config{name: DefaultName}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("skilltoolset: %w", err)
		}
	}
	if cfg.maxReadChars == 0 {
		cfg.maxReadChars = DefaultMaxReadChars
	}
	if err := cfg.tool.Validate(); err != nil {
		return nil, fmt.Errorf("skilltoolset: %w", err)
	}
	if s, ok := source.(*skillfs.Source); ok && cfg.tool.Logger != nil {
		source = s.WithLogger(cfg.tool.Logger)
	}
	cfg.tool.Source = source
	ts := &SkillToolset{name: cfg.name, source: source, table: codeexec.InterpretersOf(cfg.tool.Executor), logger: cfg.tool.Logger}
	if ts.logger == nil {
		ts.logger = slog.Default()
	}
	hasExecutor := cfg.tool.Executor != nil
	ts.inline = hasExecutor && cfg.inline
	// One instruction per answer to "does some skill have a script?";
	// ProcessRequest picks per request.
	for i, runScript := range []bool{false, true} {
		ts.variants[i] = variant{instruction: buildInstruction(instructionConfig{
			hasExecutor: hasExecutor,
			runScript:   hasExecutor && runScript,
			inline:      ts.inline,
			languages:   ts.table.Languages(),
			extra:       cfg.instruction,
		})}
	}
	rd := &reader{source: source, maxChars: cfg.maxReadChars}
	readTools, err := rd.tools()
	if err != nil {
		return nil, fmt.Errorf("skilltoolset: %w", err)
	}
	for _, t := range readTools {
		w, err := ts.wrap(t)
		if err != nil {
			return nil, err
		}
		ts.base = append(ts.base, w)
	}
	if hasExecutor {
		rs, err := runscript.New(cfg.tool)
		if err != nil {
			return nil, fmt.Errorf("skilltoolset: %w", err)
		}
		if ts.runScript, err = ts.wrap(rs); err != nil {
			return nil, err
		}
	}
	if ts.inline {
		ri, err := runinline.New(cfg.tool)
		if err != nil {
			return nil, fmt.Errorf("skilltoolset: %w", err)
		}
		if ts.runInline, err = ts.wrap(ri); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// checkSource reports a source that cannot list its skills.
func checkSource(ctx context.Context, source skill.Source) error {
	if s, ok := source.(*skillfs.Source); ok {
		return s.Check()
	}
	if _, err := source.ListFrontmatters(ctx); err != nil {
		return fmt.Errorf("the skill source cannot list its skills: %w", err)
	}
	return nil
}

// wrap makes t one of the toolset's tools: it declares itself and adds the
// toolset's instruction to the request.
func (ts *SkillToolset) wrap(t tool.Tool) (tool.Tool, error) {
	rt, ok := t.(runnable)
	if !ok {
		return nil, fmt.Errorf("skilltoolset: tool %q cannot be wrapped", t.Name())
	}
	return &instructed{runnable: rt, ts: ts}, nil
}

// hasScripts reports whether some skill now has a script the table runs.
// An error listing the skills counts as no scripts: the catalogue shows
// the same error through ADK's ProcessRequest.
//
// The answer is kept for the invocation it was asked in: Tools and every
// model request of one invocation then agree, and the skill folders are
// walked once per invocation, not once per model call.
func (ts *SkillToolset) hasScripts(ctx context.Context) bool {
	if ts.runScript == nil {
		return false
	}
	inv := ""
	if ic, ok := ctx.(interface{ InvocationID() string }); ok {
		inv = ic.InvocationID()
	}
	ts.scriptsMu.Lock()
	defer ts.scriptsMu.Unlock()
	if inv != "" && inv == ts.scriptsInv {
		return ts.scriptsHas
	}
	ok, err := anyScripts(ctx, ts.source, ts.table)
	ts.scriptsInv, ts.scriptsHas = inv, err == nil && ok
	return ts.scriptsHas
}

// anyScripts reports whether some skill has a file the interpreter table
// runs, by extension or by #! line (skillfs.AnyScript).
func anyScripts(ctx context.Context, source skill.Source, table codeexec.Interpreters) (bool, error) {
	fms, err := source.ListFrontmatters(ctx)
	if err != nil {
		return false, err
	}
	for _, fm := range fms {
		// A skill whose files cannot be listed has no scripts.
		if ok, err := skillfs.AnyScript(ctx, source, fm.Name, table); err == nil && ok {
			return true, nil
		}
	}
	return false, nil
}

// Name implements tool.Toolset.
func (ts *SkillToolset) Name() string { return ts.name }

// Tools implements tool.Toolset: list_skills, load_skill and
// load_skill_resource (ADK's tools, bounded: see DefaultMaxReadChars), then run_skill_script and run_skill_inline_script
// when configured.
func (ts *SkillToolset) Tools(ctx agent.ReadonlyContext) ([]tool.Tool, error) {
	tools := slices.Clone(ts.base)
	var c context.Context = context.Background()
	if ctx != nil {
		c = ctx
	}
	if ts.hasScripts(c) {
		tools = append(tools, ts.runScript)
	}
	if ts.runInline != nil {
		tools = append(tools, ts.runInline)
	}
	return tools, nil
}

// processRequest is ProcessRequest, for either ADK major's context.
func (ts *SkillToolset) processRequest(ctx adkglue.ToolContext, req *model.LLMRequest) error {
	for _, v := range ts.variants {
		if adkglue.HasInstruction(req, v.instruction) {
			return nil
		}
	}
	v := ts.variants[0]
	scripts := ts.hasScripts(ctx)
	if scripts {
		v = ts.variants[1]
	}
	// As ADK's own skill toolset: the instruction and the catalogue, or
	// nothing when there are no skills; the catalogue is bounded.
	fms, err := ts.source.ListFrontmatters(ctx)
	if err != nil {
		return err
	}
	if len(fms) > 0 {
		adkglue.AppendInstructions(req, v.instruction+"\n\n"+catalogue(fms, 0))
	}
	if ts.inline && !adkglue.HasInstruction(req, v.instruction) {
		// Without skills there is no catalogue; inline scripts still need
		// the instruction.
		adkglue.AppendInstructions(req, v.instruction)
	}
	if (scripts || ts.inline) && adkglue.HasInstruction(req, v.instruction) {
		ts.listSessionFiles(ctx, req)
	}
	return nil
}

// listSessionFiles adds to the request the files of the session that
// input_files can pass in, within maxListedFilesChars. The model sees each
// run's files in its response, but not the user's uploads by path, and not
// what an earlier turn's history no longer shows. A listing that fails is
// logged and left out: the model can still pass names it knows.
func (ts *SkillToolset) listSessionFiles(ctx adkglue.ToolContext, req *model.LLMRequest) {
	if ctx == nil {
		return
	}
	files, err := runscript.SessionFiles(ctx, adkglue.Artifacts(ctx))
	if err != nil {
		ts.logger.Error("adkskills: listing the session's files for the instruction", "error", err)
		return
	}
	adkglue.AppendInstructions(req, sessionFilesNote(files))
}

// runnable is what ADK's flow needs of a function tool.
type runnable interface {
	tool.Tool
	Declaration() *genai.FunctionDeclaration
	Run(ctx adkglue.ToolContext, args any) (map[string]any, error)
}

// instructed is one of the toolset's tools: it packs itself and makes sure
// the toolset's instruction is in the request.
type instructed struct {
	runnable
	ts *SkillToolset
}

// ProcessRequest adds the toolset's instruction (once) and declares the tool.
func (t *instructed) ProcessRequest(ctx adkglue.ToolContext, req *model.LLMRequest) error {
	if err := t.ts.processRequest(ctx, req); err != nil {
		return err
	}
	return adkglue.PackTool(req, t)
}
