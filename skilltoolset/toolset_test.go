package skilltoolset

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool/skilltoolset/skill"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/internal/adktest"
	"github.com/adkskills/adkskills/tools/runscript"
)

var testSkills = fstest.MapFS{
	"demo/SKILL.md":        {Data: []byte("---\nname: demo\ndescription: Demo.\n---\n")},
	"demo/scripts/x.py":    {Data: []byte("print(1)\n")},
	"docs/SKILL.md":        {Data: []byte("---\nname: docs\ndescription: Only docs.\n---\n")},
	"docs/references/a.md": {Data: []byte("# a\n")},
}

// onlyDocsSkills is one skill without scripts (two files).
var onlyDocsSkills = fstest.MapFS{"docs/SKILL.md": testSkills["docs/SKILL.md"], "docs/references/a.md": testSkills["docs/references/a.md"]}

func toolNames(t *testing.T, ts *SkillToolset) []string {
	tools, err := ts.Tools(nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name())
	}
	return names
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	cases := map[string]Option{
		"nil executor":          WithCodeExecutor(nil),
		"negative chars":        WithMaxOutputChars(-1),
		"negative read chars":   WithMaxReadChars(-1),
		"negative timeout":      WithScriptTimeout(-1),
		"empty name":            WithName(" "),
		"negative limits":       WithOutputLimits(codeexec.FileLimits{MaxFiles: -1}),
		"negative staging":      WithStagingLimit(-1),
		"negative inputs":       WithInputLimits(codeexec.FileLimits{MaxTotalBytes: -1}),
		"nil logger":            WithLogger(nil),
		"invalid executor":      WithCodeExecutor(local.New(local.WithWorkspaceDir("relative"))),
		"invalid sandbox":       WithCodeExecutor(sandbox.New(sandbox.WithTmpSize(-1))),
		"invalid executor env":  WithCodeExecutor(local.New(local.WithEnv(map[string]string{"A=B": "x"}))),
		"invalid executor wait": WithCodeExecutor(local.New(local.WithWaitDelay(-1))),
	}
	for name, opt := range cases {
		_, err := New(context.Background(), NewFSSource(testSkills), opt)
		assert.Error(t, err, name)
	}
	for name, opt := range map[string]Option{"zero chars": WithMaxOutputChars(0), "zero read chars": WithMaxReadChars(0), "zero timeout": WithScriptTimeout(0), "zero staging": WithStagingLimit(0)} {
		_, err := New(context.Background(), NewFSSource(testSkills), opt)
		assert.NoError(t, err, "%s keeps the default", name)
	}
	_, err := New(context.Background(), nil)
	assert.Error(t, err)
}

func TestToolsFollowConfiguration(t *testing.T) {
	exe := local.New()
	onlyDocs := onlyDocsSkills
	ruby := codeexec.Interpreters{{Language: "ruby", Extensions: []string{".rb"}, Command: []string{"ruby"}}}
	rubySkills := fstest.MapFS{"gem/SKILL.md": {Data: []byte("---\nname: gem\ndescription: Ruby.\n---\n")}, "gem/scripts/x.rb": {Data: []byte("puts 1\n")}}
	shebangSkills := fstest.MapFS{"docs/SKILL.md": onlyDocs["docs/SKILL.md"], "docs/bin/greet": {Data: []byte("#!/usr/bin/env python3\nprint(1)\n")}}
	cases := []struct {
		name string
		fsys fstest.MapFS
		opts []Option
		want []string
	}{
		{"no executor", testSkills, nil, []string{"list_skills", "load_skill", "load_skill_resource"}},
		{"executor", testSkills, []Option{WithCodeExecutor(exe)}, []string{"list_skills", "load_skill", "load_skill_resource", "run_skill_script"}},
		{"no scripts", onlyDocs, []Option{WithCodeExecutor(exe)}, []string{"list_skills", "load_skill", "load_skill_resource"}},
		{"table without python", testSkills, []Option{WithCodeExecutor(local.New(local.WithInterpreters(ruby)))}, []string{"list_skills", "load_skill", "load_skill_resource"}},
		{"a script without an extension", shebangSkills, []Option{WithCodeExecutor(exe)}, []string{"list_skills", "load_skill", "load_skill_resource", "run_skill_script"}},
		{"a #! line the table does not run", fstest.MapFS{"gem/SKILL.md": rubySkills["gem/SKILL.md"], "gem/bin/rake": {Data: []byte("#!/usr/bin/env ruby\n")}},
			[]Option{WithCodeExecutor(exe)}, []string{"list_skills", "load_skill", "load_skill_resource"}},
		{"table with ruby", rubySkills, []Option{WithCodeExecutor(local.New(local.WithInterpreters(ruby)))}, []string{"list_skills", "load_skill", "load_skill_resource", "run_skill_script"}},
		{"inline", onlyDocs, []Option{WithCodeExecutor(exe), WithInlineScripts(true)}, []string{"list_skills", "load_skill", "load_skill_resource", "run_skill_inline_script"}},
		{"inline no executor", testSkills, []Option{WithInlineScripts(true)}, []string{"list_skills", "load_skill", "load_skill_resource"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, err := New(context.Background(), NewFSSource(c.fsys), c.opts...)
			require.NoError(t, err)
			assert.Equal(t, c.want, toolNames(t, ts))
		})
	}
}

func TestNameAndInstruction(t *testing.T) {
	ts, err := New(context.Background(), NewFSSource(testSkills), WithName("mine"), WithInstruction("EXTRA RULES"),
		WithCodeExecutor(local.New()), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	assert.Equal(t, "mine", ts.Name())
	text := ts.variants[1].instruction
	assert.Contains(t, text, "EXTRA RULES")
	assert.Contains(t, text, "run_skill_script")
	assert.NotContains(t, text, "run_skill_inline_script")
	assert.NotContains(t, text, "via bash")
	assert.Contains(t, text, "`input_files`", "the model is told how to pass files in")
	assert.Contains(t, text, "`unpacked/**`")
	assert.NotContains(t, ts.variants[0].instruction, "run_skill_script", "without scripts the instruction does not offer them")
}

func TestRunScriptFollowsTheFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docs", "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docs", "SKILL.md"), []byte("---\nname: docs\ndescription: Docs.\n---\n"), 0o644))
	ts, err := New(context.Background(), NewFSSource(os.DirFS(dir)), WithCodeExecutor(local.New()))
	require.NoError(t, err)
	assert.NotContains(t, toolNames(t, ts), "run_skill_script")
	req := &model.LLMRequest{}
	require.NoError(t, ts.ProcessRequest(nil, req))
	assert.NotContains(t, systemText(req), "run_skill_script")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "docs", "scripts", "new.sh"), []byte("echo hi\n"), 0o644))
	assert.Contains(t, toolNames(t, ts), "run_skill_script", "a script added after New is runnable")
	req = &model.LLMRequest{}
	require.NoError(t, ts.ProcessRequest(nil, req))
	assert.Contains(t, systemText(req), "run_skill_script")
	require.NoError(t, ts.ProcessRequest(nil, req))
	assert.Equal(t, 1, strings.Count(systemText(req), "You can use Agent Skills"), "once per request")
}

func TestInlineInstructionWithoutSkills(t *testing.T) {
	ts, err := New(context.Background(), NewFSSource(fstest.MapFS{}), WithCodeExecutor(local.New()), WithInlineScripts(true))
	require.NoError(t, err)
	assert.Equal(t, []string{"list_skills", "load_skill", "load_skill_resource", "run_skill_inline_script"}, toolNames(t, ts))
	req := &model.LLMRequest{}
	require.NoError(t, ts.ProcessRequest(nil, req))
	assert.Contains(t, systemText(req), "run_skill_inline_script", "inline scripts are explained even with no skills")

	plain, err := New(context.Background(), NewFSSource(fstest.MapFS{}), WithCodeExecutor(local.New()))
	require.NoError(t, err)
	req = &model.LLMRequest{}
	require.NoError(t, plain.ProcessRequest(nil, req))
	assert.Empty(t, systemText(req), "no skills and no inline scripts: nothing to say")
}

func systemText(req *model.LLMRequest) string {
	var b strings.Builder
	if req.Config != nil && req.Config.SystemInstruction != nil {
		for _, p := range req.Config.SystemInstruction.Parts {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// countingSource counts how often the skill folders are walked.
type countingSource struct {
	skill.Source
	walks atomic.Int32
}

func (s *countingSource) ListResources(ctx context.Context, name, dir string) ([]string, error) {
	s.walks.Add(1)
	return s.Source.ListResources(ctx, name, dir)
}

func TestScriptsAreLookedForOncePerInvocation(t *testing.T) {
	src := &countingSource{Source: NewFSSource(onlyDocsSkills)}
	ts, err := New(context.Background(), src, WithCodeExecutor(local.New()))
	require.NoError(t, err)
	skills := int32(len(onlyDocsSkills) / 2)
	for _, inv := range []string{"inv-a", "inv-b"} {
		before := src.walks.Load()
		tc, _ := adktest.ToolContext(t, nil, inv)
		for range 3 { // Tools, then the model requests of one invocation
			_, err := ts.Tools(tc)
			require.NoError(t, err)
			require.NoError(t, ts.ProcessRequest(tc, &model.LLMRequest{}))
		}
		assert.Equal(t, skills, src.walks.Load()-before, "%s: one walk of each skill per invocation", inv)
	}
}

// TestInstructionListsSessionFiles: the model sees, by path, the files
// input_files can pass in (a session's user-scoped artifacts aside), within
// maxListedFilesChars however many there are.
func TestInstructionListsSessionFiles(t *testing.T) {
	cases := []struct {
		name  string
		saved []string
		want  string
	}{
		{name: "none", want: ""},
		{name: "some", saved: []string{"artifact_e-1_0", runscript.ArtifactName("unpacked/word/document.xml"), "user:profile.txt", "ok\x1b[2J.txt"},
			want: "Files of this session that `input_files` can pass in, by path (3): \"artifact_e-1_0\", \"ok\\x1b[2J.txt\", \"unpacked/word/document.xml\"."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := artifact.InMemoryService()
			tc, sessionID := adktest.ToolContext(t, svc, "inv")
			for _, n := range c.saved {
				_, err := svc.Save(context.Background(), &artifact.SaveRequest{AppName: adktest.App, UserID: adktest.User, SessionID: sessionID, FileName: n, Part: &genai.Part{Text: "x"}})
				require.NoError(t, err)
			}
			ts, err := New(context.Background(), NewFSSource(testSkills), WithCodeExecutor(local.New()))
			require.NoError(t, err)
			req := &model.LLMRequest{}
			require.NoError(t, ts.ProcessRequest(tc, req))
			text := systemText(req)
			if c.want == "" {
				assert.NotContains(t, text, "Files of this session")
				return
			}
			assert.True(t, strings.HasSuffix(text, "\n\n"+c.want), text)
		})
	}

	svc := artifact.InMemoryService()
	tc, sessionID := adktest.ToolContext(t, svc, "inv")
	const n = 1_000
	for i := range n {
		_, err := svc.Save(context.Background(), &artifact.SaveRequest{AppName: adktest.App, UserID: adktest.User, SessionID: sessionID,
			FileName: runscript.ArtifactName(fmt.Sprintf("many/f%04d.txt", i)), Part: &genai.Part{Text: "x"}})
		require.NoError(t, err)
	}
	ts, err := New(context.Background(), NewFSSource(testSkills), WithCodeExecutor(local.New()))
	require.NoError(t, err)
	req := &model.LLMRequest{}
	require.NoError(t, ts.ProcessRequest(tc, req))
	text := systemText(req)
	note := text[strings.LastIndex(text, "Files of this session"):]
	assert.LessOrEqual(t, len(note), maxListedFilesChars+200, "the list is bounded")
	assert.Contains(t, note, fmt.Sprintf("by path (%d): \"many/f0000.txt\"", n))
	assert.Regexp(t, `… and \d+ more \(select them with a glob\)\.$`, note)

	noFiles, err := New(context.Background(), NewFSSource(onlyDocsSkills), WithCodeExecutor(local.New()))
	require.NoError(t, err)
	req = &model.LLMRequest{}
	require.NoError(t, noFiles.ProcessRequest(tc, req))
	assert.NotContains(t, systemText(req), "Files of this session", "no script tool, no list")
}

// brokenSource cannot list its skills.
type brokenSource struct{ skill.Source }

func (brokenSource) ListFrontmatters(context.Context) ([]*skill.Frontmatter, error) {
	return nil, fmt.Errorf("the catalogue service is down")
}

// TestNewRefusesAnUnreadableSource: a skills folder that cannot be listed
// fails New, naming the folder of an os.DirFS, instead of the model's first
// request; a folder with no skills yet does not.
func TestNewRefusesAnUnreadableSource(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "skills")
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	oneSkill := filepath.Join(dir, "one")
	require.NoError(t, os.MkdirAll(oneSkill, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(oneSkill, "SKILL.md"), []byte("---\nname: one\ndescription: One.\n---\n"), 0o644))
	empty := t.TempDir()
	root, err := os.OpenRoot(empty)
	require.NoError(t, err)
	defer root.Close()
	tests := []struct {
		name   string
		source skill.Source
		err    string // the start of the error; "" when New succeeds
		is     error
	}{
		{"a missing folder", NewFSSource(os.DirFS(missing)),
			"skilltoolset: the skills folder " + missing + " cannot be read: open " + missing + ": no such file or directory", os.ErrNotExist},
		{"a file", NewFSSource(os.DirFS(file)),
			"skilltoolset: the skills folder " + file + " cannot be read: open " + file + ": ", nil},
		{"a skill, not a folder of skills", NewFSSource(os.DirFS(oneSkill)),
			"skilltoolset: the skills folder " + oneSkill + " is itself a skill (it holds a SKILL.md): give the folder that contains it", nil},
		{"a skill in another file system", NewFSSource(fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: x\n---\n")}}),
			"skilltoolset: the skills folder is itself a skill (it holds a SKILL.md): give the folder that contains it", nil},
		{"another source", brokenSource{NewFSSource(testSkills)},
			"skilltoolset: the skill source cannot list its skills: the catalogue service is down", nil},
		{"ADK's source over a missing folder", skill.NewFileSystemSource(os.DirFS(missing)), "skilltoolset: the skill source cannot list its skills: ", os.ErrNotExist},
		{"an empty folder", NewFSSource(os.DirFS(empty)), "", nil},
		{"an empty root", NewFSSource(root.FS()), "", nil},
		{"skills", NewFSSource(os.DirFS(dir)), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := New(context.Background(), tt.source, WithCodeExecutor(local.New()))
			if tt.err == "" {
				require.NoError(t, err)
				assert.NotNil(t, ts)
				return
			}
			require.Error(t, err)
			assert.Nil(t, ts)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.True(t, strings.HasPrefix(err.Error(), tt.err), "%s\nwant %s", err, tt.err)
		})
	}
}

func TestDirFSName(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	require.NoError(t, err)
	defer root.Close()
	assert.Equal(t, "some/dir", dirFSName(os.DirFS("some/dir")))
	assert.Equal(t, "", dirFSName(root.FS()))
	assert.Equal(t, "", dirFSName(fstest.MapFS{}))
	assert.Equal(t, "", dirFSName(nil))
}
