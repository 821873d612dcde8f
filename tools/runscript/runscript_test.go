package runscript_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/adktest"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

type runner interface {
	Run(adkglue.ToolContext, any) (map[string]any, error)
	ProcessRequest(adkglue.ToolContext, *model.LLMRequest) error
}

// skillDir writes a skill with a script, a data file, a non-script and a
// symlinked script pointing outside the skill.
func skillDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "skills")
	write := func(p, content string) {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	write("demo/SKILL.md", "---\nname: demo\ndescription: Demo.\n---\n")
	write("demo/scripts/hello.sh", "echo \"hello $1\"; cat data/in.txt\n")
	write("demo/data/in.txt", "data\n")
	write("demo/references/doc.md", "# doc\n")
	write("demo/scripts/rake", "#!/usr/bin/env ruby\nputs 1\n")
	outside := filepath.Join(base, "evil.sh")
	require.NoError(t, os.WriteFile(outside, []byte("echo escaped\n"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "demo", "scripts", "evil.sh")))
	return dir
}

func newTool(t *testing.T, exec codeexec.Executor) runner {
	t.Helper()
	tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(skillDir(t))), Executor: exec})
	require.NoError(t, err)
	return tl.(runner)
}

func TestRunScriptAnswers(t *testing.T) {
	tl := newTool(t, local.New())
	cases := []struct {
		name string
		args any
		code string
		msg  string
	}{
		{"missing skill_name", map[string]any{"script_path": "scripts/hello.sh"}, runscript.CodeInvalidArguments, `"skill_name"`},
		{"missing script_path", map[string]any{"skill_name": "demo"}, runscript.CodeInvalidArguments, `"script_path"`},
		{"args not a list", map[string]any{"skill_name": "demo", "script_path": "scripts/hello.sh", "args": "x y"}, runscript.CodeInvalidArguments, `"args"`},
		{"stdin not a string", map[string]any{"skill_name": "demo", "script_path": "scripts/hello.sh", "stdin": 1.0}, runscript.CodeInvalidArguments, `"stdin"`},
		{"unknown argument", map[string]any{"skill_name": "demo", "script_path": "scripts/hello.sh", "shell": true}, runscript.CodeInvalidArguments, `"shell"`},
		{"traversal", map[string]any{"skill_name": "demo", "script_path": "../demo/scripts/hello.sh"}, runscript.CodeInvalidArguments, `".."`},
		{"absolute", map[string]any{"skill_name": "demo", "script_path": "/bin/sh"}, runscript.CodeInvalidArguments, "absolute"},
		{"unknown skill", map[string]any{"skill_name": "nope", "script_path": "scripts/hello.sh"}, runscript.CodeSkillNotFound, "available skills: [demo]"},
		{"skill traversal", map[string]any{"skill_name": "../skills", "script_path": "x.sh"}, runscript.CodeSkillNotFound, `skill "../skills" cannot be used`},
		{"missing script", map[string]any{"skill_name": "demo", "script_path": "scripts/nope.sh"}, runscript.CodeScriptNotFound, "scripts/hello.sh"},
		{"symlinked script", map[string]any{"skill_name": "demo", "script_path": "scripts/evil.sh"}, runscript.CodeScriptNotFound, `script "scripts/evil.sh" not found`},
		{"a directory", map[string]any{"skill_name": "demo", "script_path": "scripts/"}, runscript.CodeScriptNotFound, `"scripts/" is a directory of skill "demo", not a script; runnable files: scripts/hello.sh`},
		{"not a script", map[string]any{"skill_name": "demo", "script_path": "references/doc.md"}, runscript.CodeUnsupportedScriptType,
			`"references/doc.md" cannot be run: no interpreter runs its extension, and it has no #! line naming one (supported: .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or node)`},
		{"a #! line no interpreter runs", map[string]any{"skill_name": "demo", "script_path": "scripts/rake"}, runscript.CodeUnsupportedScriptType, "its #! line names ruby (supported: .py"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc, _ := adktest.ToolContext(t, nil, "inv-"+c.name)
			resp, err := tl.Run(tc, c.args)
			require.NoError(t, err)
			assert.Equal(t, []string{"error", "error_code"}, keys(resp))
			assert.Equal(t, c.code, resp["error_code"], resp["error"])
			assert.Contains(t, resp["error"], c.msg)
		})
	}
}

func keys(m map[string]any) []string {
	var out []string
	for _, k := range []string{"error", "error_code", "exit_code", "output_files", "status", "stderr", "stdout", "timed_out", "warning"} {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

func TestRunScriptRuns(t *testing.T) {
	tl := newTool(t, local.New())
	tc, _ := adktest.ToolContext(t, artifact.InMemoryService(), "inv")
	resp, err := tl.Run(tc, map[string]any{"skill_name": "demo", "script_path": "./scripts/hello.sh", "args": []any{"wörld; rm -rf /"}})
	require.NoError(t, err)
	assert.Equal(t, "success", resp["status"], resp)
	assert.Equal(t, "hello wörld; rm -rf /\ndata\n", resp["stdout"], "args are argv, never a shell; data next to the script is staged")
	assert.Empty(t, resp["output_files"])
}

// catalogueTool is run_skill_script over testdata/catalogue, skills shaped
// like the public catalogues'.
func catalogueTool(t *testing.T) runner {
	t.Helper()
	tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS("../../testdata/catalogue")), Executor: local.New()})
	require.NoError(t, err)
	return tl.(runner)
}

// TestRunScriptByShebang: a script without an extension runs with the
// interpreter its #! line names.
func TestRunScriptByShebang(t *testing.T) {
	tc, _ := adktest.ToolContext(t, artifact.InMemoryService(), "inv")
	resp, err := catalogueTool(t).Run(tc, map[string]any{"skill_name": "shebang-tool", "script_path": "scripts/greet", "args": []any{"Ada"}})
	require.NoError(t, err)
	assert.Equal(t, "success", resp["status"], resp)
	assert.Equal(t, "hello, Ada\n", resp["stdout"])
}

// TestScriptNotFoundNamesEntryPointsFirst: the runnable files a miss names
// start with the entry points, then helper modules.
func TestScriptNotFoundNamesEntryPointsFirst(t *testing.T) {
	tc, _ := adktest.ToolContext(t, nil, "inv")
	resp, err := catalogueTool(t).Run(tc, map[string]any{"skill_name": "office-docs", "script_path": "scripts/pack.py"})
	require.NoError(t, err)
	assert.Equal(t, runscript.CodeScriptNotFound, resp["error_code"])
	assert.Equal(t, `script "scripts/pack.py" not found in skill "office-docs"; runnable files: `+
		"scripts/accept.py, scripts/office/unpack.py, scripts/__init__.py, scripts/office/helpers/__init__.py, scripts/office/helpers/runs.py", resp["error"])
}

func TestHostileOutputFileNames(t *testing.T) {
	dir := t.TempDir()
	for p, content := range map[string]string{
		"names/SKILL.md": "---\nname: names\ndescription: Names.\n---\n",
		"names/scripts/w.py": "import os\nfor n in [b'a\\xff.txt', b'a\\xfe.txt', b'ok\\x1b[2K\\rFINE.txt', b'user:steal.txt']:\n" +
			"    open(n, 'wb').write(n)\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
	}
	tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(dir)), Executor: local.New()})
	require.NoError(t, err)
	svc := artifact.InMemoryService()
	tc, sessionID := adktest.ToolContext(t, svc, "inv")
	resp, err := tl.(runner).Run(tc, map[string]any{"skill_name": "names", "script_path": "scripts/w.py"})
	require.NoError(t, err)
	require.Equal(t, "success", resp["status"], resp)
	got := map[string]string{}
	for _, e := range resp["output_files"].([]map[string]any) {
		got[e["name"].(string)] = e["artifact"].(string)
	}
	assert.Equal(t, map[string]string{
		"a%FE.txt":            "a~FE.txt",
		"a%FF.txt":            "a~FF.txt",
		"ok%1B[2K%0DFINE.txt": "ok~1B[2K~0DFINE.txt",
		"user:steal.txt":      "user~3Asteal.txt",
	}, got, "distinct, printable names the model can load by")
	for _, art := range got {
		loaded, err := svc.Load(context.Background(), &artifact.LoadRequest{AppName: adktest.App, UserID: adktest.User, SessionID: sessionID, FileName: art})
		require.NoError(t, err, art)
		assert.NotEmpty(t, loaded.Part.InlineData.Data)
	}
}

func TestRunScriptWithoutExecutor(t *testing.T) {
	tl := newTool(t, nil)
	tc, _ := adktest.ToolContext(t, nil, "inv")
	resp, err := tl.Run(tc, map[string]any{"skill_name": "demo", "script_path": "scripts/hello.sh"})
	require.NoError(t, err)
	assert.Equal(t, runscript.CodeNoCodeExecutor, resp["error_code"])
}

func TestDeclaration(t *testing.T) {
	tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(skillDir(t)))})
	require.NoError(t, err)
	req := &model.LLMRequest{}
	require.NoError(t, tl.(runner).ProcessRequest(nil, req))
	assert.Same(t, tl, req.Tools[runscript.Name])
	decl := req.Config.Tools[0].FunctionDeclarations[0]
	assert.Equal(t, runscript.Name, decl.Name)
	assert.Equal(t, []string{"skill_name", "script_path"}, decl.Parameters.Required)
	assert.ElementsMatch(t, []string{"skill_name", "script_path", "args", "stdin", "input_files"}, mapKeys(decl.Parameters.Properties))
	assert.Contains(t, decl.Parameters.Properties["input_files"].Description, "** any number of folders", "the glob syntax is declared")
	assert.True(t, strings.Contains(decl.Parameters.Properties["script_path"].Description, ".py, .sh, .bash, .js, .mjs, .cjs"))
	assert.Error(t, tl.(runner).ProcessRequest(nil, req), "a duplicate declaration is refused")
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestConfigValidation(t *testing.T) {
	src := skilltoolset.NewFSSource(os.DirFS(t.TempDir()))
	bad := []runscript.Config{
		{},
		{Source: src, Limits: codeexec.Limits{MaxOutputChars: -1}},
		{Source: src, Limits: codeexec.Limits{Timeout: -1}},
		{Source: src, Limits: codeexec.Limits{MaxSkillBytes: -1}},
		{Source: src, Limits: codeexec.Limits{Output: codeexec.FileLimits{MaxTotalBytes: -1}}},
		{Source: src, Executor: local.New(local.WithEnv(map[string]string{"A=B": "x"}))},
	}
	for i, c := range bad {
		_, err := runscript.New(c)
		assert.Error(t, err, "case %d", i)
	}
}

// TestRunEndsTheExecutorImposed: a run over its memory bound answers
// out_of_memory with the bound in its message (where the host lets runs
// have cgroups), and a skill over the staging limit is an error that says
// so.
func TestRunEndsTheExecutorImposed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skills")
	for p, c := range map[string]string{
		"demo/SKILL.md":       "---\nname: demo\ndescription: Demo.\n---\n",
		"demo/scripts/hog.py": "import os\nfd = os.memfd_create('hog')\nfor _ in range(512):\n    os.write(fd, b'x' * (1 << 20))\n",
		"demo/data/big.bin":   strings.Repeat("x", 4<<10),
		"demo/scripts/dep.py": "# /// script\n# dependencies = [\"nosuchdep>=2\"]\n# ///\nprint('ran')\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	args := map[string]any{"skill_name": "demo", "script_path": "scripts/hog.py"}
	t.Run("OutOfMemory", func(t *testing.T) {
		const limit = 64 << 20
		tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(dir)), Executor: local.New(local.WithMemoryLimit(limit))})
		require.NoError(t, err)
		tc, _ := adktest.ToolContext(t, artifact.InMemoryService(), "inv-oom")
		resp, err := tl.(runner).Run(tc, args)
		require.NoError(t, err)
		if resp["status"] != runscript.StatusOutOfMemory && resp["exit_code"] == 0 {
			t.Skip("runs get no cgroup here, so the memory bound does not apply")
		}
		assert.Equal(t, runscript.StatusOutOfMemory, resp["status"], resp)
		assert.Equal(t, 137, resp["exit_code"])
		assert.Equal(t, "out of memory: the run used its 64 MiB", resp["message"])
	})
	t.Run("DependenciesUnavailable", func(t *testing.T) {
		exe := local.New(local.WithDependencies(false), local.WithDependencyStore(t.TempDir(), 0))
		tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(dir)), Executor: exe})
		require.NoError(t, err)
		tc, _ := adktest.ToolContext(t, nil, "inv-dep")
		resp, err := tl.(runner).Run(tc, map[string]any{"skill_name": "demo", "script_path": "scripts/dep.py"})
		require.NoError(t, err)
		assert.Equal(t, runscript.CodeExecutionError, resp["error_code"])
		assert.Contains(t, resp["error"], "the script's declared dependencies are not available, so it did not run: ")
		assert.Contains(t, resp["error"], "nosuchdep")
		assert.NotContains(t, resp["error"], "codeexec:")
	})
	t.Run("OverTheStagingLimit", func(t *testing.T) {
		const limit = 1 << 10
		tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(dir)), Executor: local.New(),
			Limits: codeexec.Limits{MaxSkillBytes: limit}})
		require.NoError(t, err)
		tc, _ := adktest.ToolContext(t, nil, "inv-big")
		resp, err := tl.(runner).Run(tc, args)
		require.NoError(t, err)
		assert.Equal(t, runscript.CodeExecutionError, resp["error_code"])
		assert.Equal(t, "the skill and its input files are over the 1024-byte staging limit, so the script did not run", resp["error"])
	})
}

// TestRunScriptRefusedHosts: the hosts the sandbox's egress allowlist
// refused a run are in the response's warning, which the model reads, with
// the files' warnings after them.
func TestRunScriptRefusedHosts(t *testing.T) {
	if err := sandbox.New().Probe(context.Background()); err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "skills")
	for p, c := range map[string]string{
		"demo/SKILL.md": "---\nname: demo\ndescription: Demo.\n---\n",
		"demo/scripts/get.sh": "curl -s -o /dev/null --max-time 20 http://pypi.org/simple/\n" +
			"curl -s -o /dev/null --max-time 20 https://files.pythonhosted.org/\nln -s /etc/passwd link\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(dir)), Executor: sandbox.New(sandbox.WithEgress("api.example.com:443"))})
	require.NoError(t, err)
	tc, _ := adktest.ToolContext(t, artifact.InMemoryService(), "inv-egress")
	resp, err := tl.(runner).Run(tc, map[string]any{"skill_name": "demo", "script_path": "scripts/get.sh"})
	require.NoError(t, err)
	assert.Equal(t, "success", resp["status"], resp)
	assert.Regexp(t, `^the sandbox's network refused: pypi\.org:80 \(is not on the egress allowlist\); files\.pythonhosted\.org:443 \(is not on the egress allowlist\)\. `+
		`Only the hosts on the egress allowlist are reachable; the operator can add HOST:PORT entries\.; link was not saved: `, resp["warning"])
}

func TestRunnerWithoutSkills(t *testing.T) {
	r, err := runscript.NewRunner(runscript.Config{Executor: local.New()})
	require.NoError(t, err)
	resp := r.RunScript(context.Background(), nil, map[string]any{"skill_name": "x", "script_path": "a.py"})
	assert.Equal(t, runscript.CodeSkillNotFound, resp.ErrorCode)
	_, err = runscript.NewRunner(runscript.Config{Limits: codeexec.Limits{Timeout: -1}})
	assert.Error(t, err)
	assert.Equal(t, runscript.Name, r.ScriptDeclaration().Name)
	assert.Equal(t, codeexec.DefaultInterpreters(), r.Interpreters())
}
