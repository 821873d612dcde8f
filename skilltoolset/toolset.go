// Package skilltoolset is adkskills' entry point: an ADK Go toolset that
// lists and loads Agent Skills (ADK's own list_skills, load_skill and
// load_skill_resource) and runs their scripts (run_skill_script and, when
// enabled, run_skill_inline_script) through a codeexec.Executor, with capped
// output and every file a script writes saved as a session artifact.
//
// Plug it into an agent:
//
//	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS("skills")),
//		skilltoolset.WithCodeExecutor(codeexec.NewSandbox()))
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
	"slices"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	adkskills "google.golang.org/adk/tool/skilltoolset"
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
	name        string
	inner       *adkskills.SkillToolset
	instruction string
	tools       []tool.Tool
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
// Prefer an fs.FS that cannot be escaped, such as (*os.Root).FS().
func NewFSSource(fsys fs.FS) skill.Source {
	return skillfs.New(fsys, nil)
}

// New returns a SkillToolset over source. The script tools are declared only
// when a code executor is configured (WithCodeExecutor); run_skill_script
// only when some skill has a script the interpreter table can run, and
// run_skill_inline_script only with WithInlineScripts(true).
func New(ctx context.Context, source skill.Source, opts ...Option) (*SkillToolset, error) {
	if source == nil {
		return nil, fmt.Errorf("skilltoolset: a skill source is required")
	}
	cfg := config{name: DefaultName}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("skilltoolset: %w", err)
		}
	}
	if s, ok := source.(*skillfs.Source); ok && cfg.logger != nil {
		source = s.WithLogger(cfg.logger)
	}
	rcfg := runscript.Config{
		Source:         source,
		Executor:       cfg.executor,
		Interpreters:   cfg.interpreters,
		MaxOutputChars: cfg.maxChars,
		Timeout:        cfg.timeout,
		Env:            cfg.env,
		OutputLimits:   cfg.limits,
		Logger:         cfg.logger,
	}
	runner, err := rcfg.Runner()
	if err != nil {
		return nil, fmt.Errorf("skilltoolset: %w", err)
	}
	table := runner.Table()

	hasScripts := false
	if cfg.executor != nil {
		if hasScripts, err = anyScripts(ctx, source, table); err != nil {
			return nil, fmt.Errorf("skilltoolset: listing skills: %w", err)
		}
	}
	withInline := cfg.executor != nil && cfg.inline
	instruction := buildInstruction(instructionConfig{
		hasExecutor: cfg.executor != nil,
		runScript:   hasScripts,
		inline:      withInline,
		languages:   table.Languages(),
		extra:       cfg.instruction,
	})
	inner, err := adkskills.New(ctx, adkskills.Config{Source: source, Name: cfg.name, SystemInstruction: instruction})
	if err != nil {
		return nil, fmt.Errorf("skilltoolset: %w", err)
	}
	ts := &SkillToolset{name: cfg.name, inner: inner, instruction: instruction}

	adkTools, err := inner.Tools(nil)
	if err != nil {
		return nil, fmt.Errorf("skilltoolset: %w", err)
	}
	tools := slices.Clone(adkTools)
	if hasScripts {
		t, err := runscript.New(rcfg)
		if err != nil {
			return nil, fmt.Errorf("skilltoolset: %w", err)
		}
		tools = append(tools, t)
	}
	if withInline {
		t, err := runinline.New(rcfg)
		if err != nil {
			return nil, fmt.Errorf("skilltoolset: %w", err)
		}
		tools = append(tools, t)
	}
	for _, t := range tools {
		rt, ok := t.(runnable)
		if !ok {
			return nil, fmt.Errorf("skilltoolset: tool %q cannot be wrapped", t.Name())
		}
		ts.tools = append(ts.tools, &instructed{runnable: rt, ts: ts})
	}
	return ts, nil
}

// anyScripts reports whether some skill has a file the interpreter table
// can run.
func anyScripts(ctx context.Context, source skill.Source, table codeexec.Interpreters) (bool, error) {
	fms, err := source.ListFrontmatters(ctx)
	if err != nil {
		return false, err
	}
	for _, fm := range fms {
		files, err := source.ListResources(ctx, fm.Name, "")
		if err != nil {
			continue // a skill without listable files has no scripts
		}
		for _, f := range files {
			if _, err := table.ForScript(f); err == nil {
				return true, nil
			}
		}
	}
	return false, nil
}

// Name implements tool.Toolset.
func (ts *SkillToolset) Name() string { return ts.name }

// Tools implements tool.Toolset: ADK's list_skills, load_skill and
// load_skill_resource, then run_skill_script and run_skill_inline_script
// when configured.
func (ts *SkillToolset) Tools(agent.ReadonlyContext) ([]tool.Tool, error) {
	return slices.Clone(ts.tools), nil
}

// ProcessRequest adds the toolset's system instruction and the catalogue of
// skills to the request, once. ADK calls it only when the toolset sits
// directly in llmagent.Config.Toolsets; each of the toolset's tools does the
// same from its own ProcessRequest, so the instruction still reaches the
// model when the toolset is wrapped (tool.FilterToolset,
// tool.WithConfirmation), and never twice.
func (ts *SkillToolset) ProcessRequest(ctx agent.ToolContext, req *model.LLMRequest) error {
	if adkglue.HasInstruction(req, ts.instruction) {
		return nil
	}
	return ts.inner.ProcessRequest(ctx, req)
}

// runnable is what ADK's flow needs of a function tool.
type runnable interface {
	tool.Tool
	Declaration() *genai.FunctionDeclaration
	Run(ctx agent.ToolContext, args any) (map[string]any, error)
}

// instructed is one of the toolset's tools: it packs itself and makes sure
// the toolset's instruction is in the request.
type instructed struct {
	runnable
	ts *SkillToolset
}

// ProcessRequest adds the toolset's instruction (once) and declares the tool.
func (t *instructed) ProcessRequest(ctx agent.ToolContext, req *model.LLMRequest) error {
	if err := t.ts.ProcessRequest(ctx, req); err != nil {
		return err
	}
	return adkglue.PackTool(req, t)
}
