package skilltoolset

import (
	"context"
	"log/slog"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adkskills/adkskills/codeexec"
)

var testSkills = fstest.MapFS{
	"demo/SKILL.md":        {Data: []byte("---\nname: demo\ndescription: Demo.\n---\n")},
	"demo/scripts/x.py":    {Data: []byte("print(1)\n")},
	"docs/SKILL.md":        {Data: []byte("---\nname: docs\ndescription: Only docs.\n---\n")},
	"docs/references/a.md": {Data: []byte("# a\n")},
}

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
		"nil executor":        WithCodeExecutor(nil),
		"zero chars":          WithMaxOutputChars(0),
		"negative chars":      WithMaxOutputChars(-1),
		"zero timeout":        WithScriptTimeout(0),
		"negative timeout":    WithScriptTimeout(-1),
		"empty name":          WithName(" "),
		"env with =":          WithEnv(map[string]string{"A=B": "x"}),
		"env empty name":      WithEnv(map[string]string{"": "x"}),
		"env NUL value":       WithEnv(map[string]string{"A": "x\x00"}),
		"negative limits":     WithOutputLimits(codeexec.OutputLimits{MaxFiles: -1}),
		"empty interpreters":  WithInterpreters(codeexec.Interpreters{}),
		"bad interpreter ext": WithInterpreters(codeexec.Interpreters{{Language: "ruby", Extensions: []string{"rb"}, Command: []string{"ruby"}}}),
		"nil logger":          WithLogger(nil),
	}
	for name, opt := range cases {
		_, err := New(context.Background(), NewFSSource(testSkills), opt)
		assert.Error(t, err, name)
	}
	_, err := New(context.Background(), nil)
	assert.Error(t, err)
}

func TestToolsFollowConfiguration(t *testing.T) {
	local := codeexec.NewLocal()
	onlyDocs := fstest.MapFS{"docs/SKILL.md": testSkills["docs/SKILL.md"], "docs/references/a.md": testSkills["docs/references/a.md"]}
	ruby := codeexec.Interpreters{{Language: "ruby", Extensions: []string{".rb"}, Command: []string{"ruby"}}}
	cases := []struct {
		name string
		fsys fstest.MapFS
		opts []Option
		want []string
	}{
		{"no executor", testSkills, nil, []string{"list_skills", "load_skill", "load_skill_resource"}},
		{"executor", testSkills, []Option{WithCodeExecutor(local)}, []string{"list_skills", "load_skill", "load_skill_resource", "run_skill_script"}},
		{"no scripts", onlyDocs, []Option{WithCodeExecutor(local)}, []string{"list_skills", "load_skill", "load_skill_resource"}},
		{"table without python", testSkills, []Option{WithCodeExecutor(local), WithInterpreters(ruby)}, []string{"list_skills", "load_skill", "load_skill_resource"}},
		{"inline", onlyDocs, []Option{WithCodeExecutor(local), WithInlineScripts(true)}, []string{"list_skills", "load_skill", "load_skill_resource", "run_skill_inline_script"}},
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
		WithCodeExecutor(codeexec.NewLocal()), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	assert.Equal(t, "mine", ts.Name())
	assert.Contains(t, ts.instruction, "EXTRA RULES")
	assert.Contains(t, ts.instruction, "run_skill_script")
	assert.NotContains(t, ts.instruction, "run_skill_inline_script")
	assert.NotContains(t, ts.instruction, "via bash")
}
