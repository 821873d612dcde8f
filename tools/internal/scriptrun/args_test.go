package scriptrun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/internal/adktest"
	"github.com/adkskills/adkskills/internal/skillfs"
)

func TestCleanPath(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{in: "scripts/x.py", want: "scripts/x.py"},
		{in: "./scripts/x.py", want: "scripts/x.py"},
		{in: "scripts//x.py", want: "scripts/x.py"},
		{in: "x.sh", want: "x.sh"},
		{in: "", err: "must not be empty"},
		{in: "/etc/passwd", err: "is absolute"},
		{in: "../other/x.py", err: "leaves the skill folder"},
		{in: "scripts/../../x.py", err: "leaves the skill folder"},
		{in: "scripts/..", err: "leaves the skill folder"},
		{in: `scripts\x.py`, err: "backslash"},
		{in: "scripts/x\x00.py", err: "NUL"},
		{in: "scripts/\xff.py", err: "not valid UTF-8"},
		{in: ".", err: "must name a file"},
		{in: "./", err: "must name a file"},
	}
	for _, c := range cases {
		got, err := CleanPath("script_path", c.in)
		if c.err != "" {
			require.Error(t, err, c.in)
			assert.Contains(t, err.Error(), c.err, c.in)
			assert.Contains(t, err.Error(), `"script_path"`, "the error names the argument")
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got)
	}
}

func TestArgs(t *testing.T) {
	known := []string{"s", "list"}
	tooMany := make([]any, MaxArgs+1)
	for i := range tooMany {
		tooMany[i] = "x"
	}
	big := strings.Repeat("a", MaxArgEntryBytes) // the largest one argument may be
	tooBig := big + "a"
	cases := []struct {
		name    string
		args    any
		str     string
		list    []string
		wantErr string
	}{
		{name: "ok", args: map[string]any{"s": "v", "list": []any{"a", "b c"}}, str: "v", list: []string{"a", "b c"}},
		{name: "absent list", args: map[string]any{"s": "v"}, str: "v"},
		{name: "null list", args: map[string]any{"s": "v", "list": nil}, str: "v"},
		{name: "not an object", args: "x", wantErr: "must be a JSON object"},
		{name: "unknown key", args: map[string]any{"s": "v", "bogus": 1}, wantErr: `unknown argument "bogus"`},
		{name: "missing", args: map[string]any{}, wantErr: `argument "s" is required`},
		{name: "empty", args: map[string]any{"s": ""}, wantErr: `argument "s" must not be empty`},
		{name: "number", args: map[string]any{"s": 3.0}, wantErr: `argument "s" must be a string, got a number`},
		{name: "nul", args: map[string]any{"s": "a\x00b"}, wantErr: "NUL"},
		{name: "invalid utf8", args: map[string]any{"s": "a\xffb"}, wantErr: "not valid UTF-8"},
		{name: "too long", args: map[string]any{"s": strings.Repeat("a", 65)}, wantErr: "the limit is 64"},
		{name: "list not array", args: map[string]any{"s": "v", "list": "a b"}, wantErr: `argument "list" must be an array of strings, got a string`},
		{name: "list item", args: map[string]any{"s": "v", "list": []any{"a", true}}, wantErr: `argument "list[1]" must be a string, got a boolean`},
		{name: "list at the limit", args: map[string]any{"s": "v", "list": tooMany[:MaxArgs]}, str: "v", list: strings.Fields(strings.Repeat("x ", MaxArgs))},
		{name: "list too many", args: map[string]any{"s": "v", "list": tooMany}, wantErr: fmt.Sprintf("at most %d", MaxArgs)},
		{name: "one argument at the limit", args: map[string]any{"s": "v", "list": []any{big}}, str: "v", list: []string{big}},
		{name: "one argument over the limit", args: map[string]any{"s": "v", "list": []any{"ok", tooBig}}, wantErr: fmt.Sprintf(`argument "list[1]" is %d bytes; the limit is %d`, len(tooBig), MaxArgEntryBytes)},
		{name: "all arguments over the limit", args: map[string]any{"s": "v", "list": manyBig(MaxArgBytes/MaxArgEntryBytes + 1)}, wantErr: fmt.Sprintf(`argument "list[%d]"`, MaxArgBytes/MaxArgEntryBytes)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := ParseArgs(c.args, known...)
			var s string
			var l []string
			if err == nil {
				s, err = a.String("s", true, 64)
			}
			if err == nil {
				l, err = a.Strings("list")
			}
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.str, s)
			assert.Equal(t, c.list, l)
		})
	}
}

// manyBig is n arguments of MaxArgEntryBytes each.
func manyBig(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = strings.Repeat("b", MaxArgEntryBytes)
	}
	return out
}

func testSource() skill.Source {
	return skillfs.New(fstest.MapFS{
		"demo/SKILL.md":          {Data: []byte("---\nname: demo\ndescription: A demo.\n---\nbody\n")},
		"demo/scripts/run.py":    {Data: []byte("print(1)\n")},
		"demo/cards/c.bin":       {Data: []byte{0, 1, 2, 255}},
		"demo/references/doc.md": {Data: []byte("# doc\n")},
		"big/SKILL.md":           {Data: []byte("---\nname: big\ndescription: Big.\n---\n")},
		"big/assets/blob":        {Data: make([]byte, 1024)},
	}, nil)
}

func TestLoadSkillListsWholeFolder(t *testing.T) {
	r := &Runner{Config: Config{Source: testSource()}}
	sk, resp := r.LoadSkill(context.Background(), "demo")
	require.Nil(t, resp)
	assert.Equal(t, "demo", sk.Name)
	assert.Equal(t, []string{"SKILL.md", "cards/c.bin", "references/doc.md", "scripts/run.py"}, sk.Paths)
	data, err := fs.ReadFile(sk.FS, "cards/c.bin")
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 2, 255}, data, "binary files are read byte for byte")
	assert.True(t, sk.Has("scripts/run.py"))
	assert.False(t, sk.Has("scripts/nope.py"))

	_, resp = r.LoadSkill(context.Background(), "nope")
	assert.Equal(t, CodeSkillNotFound, resp.ErrorCode)
	assert.Contains(t, resp.Error, "available skills: [big demo]")

	_, resp = r.LoadSkill(context.Background(), "../demo")
	assert.Equal(t, CodeSkillNotFound, resp.ErrorCode)

	broken := &Runner{Config: Config{Source: skillfs.New(fstest.MapFS{"bad/SKILL.md": {Data: []byte("---\nname: bad\n")}}, nil), Logger: slog.New(slog.DiscardHandler)}}
	_, resp = broken.LoadSkill(context.Background(), "bad")
	assert.Equal(t, CodeSkillNotFound, resp.ErrorCode, "a skill the catalogue leaves out is not found, not an infrastructure failure")
	assert.Contains(t, resp.Error, "SKILL.md is invalid")
}

// plainSource hides skillfs.Source's own type: the tool must then read the
// skill through ListResources and LoadResource.
type plainSource struct{ skill.Source }

func TestLoadSkillFromAnySource(t *testing.T) {
	r := &Runner{Config: Config{Source: plainSource{testSource()}}}
	sk, resp := r.LoadSkill(context.Background(), "demo")
	require.Nil(t, resp)
	var walked []string
	require.NoError(t, fs.WalkDir(sk.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			walked = append(walked, p)
		}
		return err
	}))
	assert.Equal(t, sk.Paths, walked, "the folder walks as the source lists it")
	data, err := fs.ReadFile(sk.FS, "cards/c.bin")
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 2, 255}, data)
	_, err = sk.FS.Open("../demo/SKILL.md")
	assert.Error(t, err)
}

func TestScriptMissBecomesFatal(t *testing.T) {
	r := &Runner{}
	tc, _ := adktest.ToolContext(t, nil, "inv-a")
	first := r.ScriptMiss(r.ToolSession(tc), "demo", "scripts/x.py", `script "scripts/x.py" not found in skill "demo"`, "scripts/run.py")
	assert.Equal(t, CodeScriptNotFound, first.ErrorCode)
	assert.Equal(t, `script "scripts/x.py" not found in skill "demo"; runnable files: scripts/run.py`, first.Error)
	other0, _ := adktest.ToolContext(t, nil, "inv-0")
	assert.NotContains(t, r.ScriptMiss(r.ToolSession(other0), "demo", "scripts/x.py", "not found", "").Error, "runnable files", "no empty list is offered")
	second := r.ScriptMiss(r.ToolSession(tc), "demo", "scripts/x.py", "not found", "")
	assert.Equal(t, CodeScriptNotFoundFatal, second.ErrorCode)
	assert.Contains(t, second.Error, "stop retrying")
	other, _ := adktest.ToolContext(t, nil, "inv-b")
	assert.Equal(t, CodeScriptNotFound, r.ScriptMiss(r.ToolSession(other), "demo", "scripts/x.py", "not found", "").ErrorCode, "counts are per invocation")
}

// errExecutor fails every run with err.
type errExecutor struct{ err error }

func (e errExecutor) Execute(context.Context, *codeexec.Request) (*codeexec.Result, error) {
	return nil, e.err
}

func TestRunMapsExecutorErrors(t *testing.T) {
	cases := []struct {
		err      error
		code     string
		contains string
	}{
		{fmt.Errorf("x: %w", codeexec.ErrUnsupportedScript), CodeUnsupportedScriptType, "no interpreter"},
		{fmt.Errorf("bwrap: %w", codeexec.ErrSandboxUnavailable), CodeExecutionError, "sandbox is not available"},
		{fmt.Errorf("exec /usr/bin/python3: %w", codeexec.ErrStart), CodeExecutionError, "interpreter could not be started"},
		{fmt.Errorf("mkdir /tmp/x: %w", codeexec.ErrWorkspace), CodeExecutionError, "workspace could not be prepared"},
		{fmt.Errorf("over /tmp limit: %w", codeexec.ErrInvalidRequest), CodeExecutionError, "could not be staged"},
		{context.Canceled, CodeExecutionError, "cancelled"},
		{errors.New("/secret/host/path exploded"), CodeExecutionError, "could not be run"},
	}
	for _, c := range cases {
		var logs strings.Builder
		r := &Runner{Config: Config{Executor: errExecutor{c.err}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}}
		tc, _ := adktest.ToolContext(t, nil, "inv")
		resp := r.Run(tc, r.ToolSession(tc), Call{Tool: "run_skill_script"}, &codeexec.Request{Script: "s.py"}, nil)
		assert.Equal(t, c.code, resp.ErrorCode, c.err)
		assert.Contains(t, resp.Error, c.contains)
		assert.NotContains(t, resp.Error, "/", "no host detail reaches the model: %v", resp.Error)
		assert.Contains(t, logs.String(), c.err.Error(), "the detail is logged")
	}
	resp := (&Runner{}).Run(context.Background(), nil, Call{Tool: "run_skill_script"}, &codeexec.Request{}, nil)
	assert.Equal(t, CodeNoCodeExecutor, resp.ErrorCode)
}

// capture records the request it is given.
type capture struct{ req *codeexec.Request }

func (c *capture) Execute(_ context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	c.req = req
	return &codeexec.Result{}, nil
}

func TestRunFillsLimits(t *testing.T) {
	c := &capture{}
	lim := codeexec.Limits{MaxOutputChars: 7, Timeout: 3, Output: codeexec.FileLimits{MaxFiles: 2}, MaxSkillBytes: 9}
	r := &Runner{Config: Config{Executor: c, Limits: lim}}
	tc, _ := adktest.ToolContext(t, nil, "inv")
	r.Run(tc, r.ToolSession(tc), Call{Tool: "t"}, &codeexec.Request{Env: map[string]string{"B": "request"}, Limits: codeexec.Limits{Timeout: 99}}, nil)
	assert.Equal(t, lim, c.req.Limits, "the operator's limits, whatever the request said")
	assert.Equal(t, map[string]string{"B": "request"}, c.req.Env, "the request's variables pass through")
}

func TestNewValidatesConfig(t *testing.T) {
	bad := map[string]Config{
		"negative chars":     {Limits: codeexec.Limits{MaxOutputChars: -1}},
		"negative timeout":   {Limits: codeexec.Limits{Timeout: -1}},
		"negative staging":   {Limits: codeexec.Limits{MaxSkillBytes: -1}},
		"negative files":     {Limits: codeexec.Limits{Output: codeexec.FileLimits{MaxFiles: -1}}},
		"negative file size": {Limits: codeexec.Limits{Output: codeexec.FileLimits{MaxFileBytes: -1}}},
		"negative total":     {Limits: codeexec.Limits{Output: codeexec.FileLimits{MaxTotalBytes: -1}}},
		"invalid executor":   {Executor: local.New(local.WithEnv(map[string]string{"A=B": "x"}))},
	}
	for name, cfg := range bad {
		_, err := New(cfg)
		assert.Error(t, err, name)
		assert.Error(t, cfg.Validate(), name)
	}
	r, err := New(Config{Limits: codeexec.Limits{MaxOutputChars: 1}})
	require.NoError(t, err)
	assert.Equal(t, 1, r.Limits.MaxOutputChars)
}

func TestTableIsTheExecutors(t *testing.T) {
	perl := codeexec.Interpreters{{Language: "perl", Extensions: []string{".pl"}, Command: []string{"perl"}}}
	assert.Equal(t, codeexec.DefaultInterpreters(), (&Runner{}).Table(), "no executor: the default table")
	r := &Runner{Config: Config{Executor: local.New(local.WithInterpreters(perl))}}
	assert.Equal(t, perl, r.Table())
}

func TestJSONTypeNames(t *testing.T) {
	for v, want := range map[any]string{"s": "a string", 1.5: "a number", true: "a boolean", nil: "<nil>"} {
		assert.Equal(t, want, jsonType(v))
	}
	assert.Equal(t, "an array", jsonType([]any{}))
	assert.Equal(t, "an object", jsonType(map[string]any{}))
}

// TestSkillListIsBounded: SKILL_NOT_FOUND names the skills that fit in
// maxListedSkillsChars and counts the rest.
func TestSkillListIsBounded(t *testing.T) {
	const name = "skill-with-a-long-name-0000" // 27 characters
	n := 3 * maxListedSkillsChars / len(name)
	fsys := fstest.MapFS{}
	for i := range n {
		nm := fmt.Sprintf("%s%04d", name[:len(name)-4], i)
		fsys[nm+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + nm + "\ndescription: D.\n---\n")}
	}
	r := &Runner{Config: Config{Source: skillfs.New(fsys, nil)}}
	_, resp := r.LoadSkill(context.Background(), "nope")
	require.Equal(t, CodeSkillNotFound, resp.ErrorCode)
	assert.LessOrEqual(t, len(resp.Error), maxListedSkillsChars+100, resp.Error)
	listed := strings.Count(resp.Error, name[:len(name)-4])
	assert.Greater(t, listed, 0)
	assert.True(t, strings.HasSuffix(resp.Error, fmt.Sprintf("] and %d more (list_skills lists them)", n-listed)), resp.Error)
}

// integritySource fails its integrity check where told.
type integritySource struct {
	skill.Source
	onList, onFrontmatter bool
}

func (s integritySource) ListResources(ctx context.Context, name, sub string) ([]string, error) {
	if s.onList {
		return nil, fmt.Errorf("file scripts/run.py: %w: sha256:aa advertised, sha256:bb served", ErrIntegrity)
	}
	return s.Source.ListResources(ctx, name, sub)
}

func (s integritySource) LoadFrontmatter(ctx context.Context, name string) (*skill.Frontmatter, error) {
	if s.onFrontmatter {
		return nil, fmt.Errorf("%w: no digests", ErrIntegrity)
	}
	return s.Source.LoadFrontmatter(ctx, name)
}

func TestLoadSkillRefusesWhatFailsItsIntegrityCheck(t *testing.T) {
	for _, src := range []integritySource{{Source: testSource(), onList: true}, {Source: testSource(), onFrontmatter: true}} {
		var logs strings.Builder
		r := &Runner{Config: Config{Source: src, Logger: slog.New(slog.NewTextHandler(&logs, nil))}}
		_, resp := r.LoadSkill(context.Background(), "demo")
		require.NotNil(t, resp)
		assert.Equal(t, CodeExecutionError, resp.ErrorCode)
		assert.Contains(t, resp.Error, `skill "demo" was refused, and nothing ran`)
		assert.Contains(t, logs.String(), "integrity")
	}
}
