package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// TestRunOutcomes checks the exit-code contract and what each outcome
// prints.
func TestRunOutcomes(t *testing.T) {
	skills := testSkills(t)
	missing := filepath.Join(t.TempDir(), "none")
	stdinFile := filepath.Join(t.TempDir(), "in.txt")
	require.NoError(t, os.WriteFile(stdinFile, []byte("from a file"), 0o600))
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout []string // pieces of stdout, in order
		stderr string   // the whole of stderr, when not ""
	}{
		{
			name: "success",
			args: []string{"run", "--skills", skills, "report-writer", "scripts/report.py", "--", "Ada"},
			code: exitOK,
			stdout: []string{"== stdout ==\nreport for Ada: report.md, dist/data/summary.json, badge.png\n",
				"== stderr ==\nwriting report for Ada\n", "== output files ==\n",
				`badge.png -> artifact "badge.png" version 1 (`, "image/png)",
				`dist/data/summary.json -> artifact "dist∕data∕summary.json" version 1 (`, "application/json)",
				`report.md -> artifact "report.md" version 1 (`, "text/markdown)",
				"== report-writer scripts/report.py: success, exit code 0, ", "3 file(s) saved =="},
		},
		{
			name:   "script arguments keep their spaces and dashes",
			args:   []string{"run", "--skills", skills, "shell-tools", "scripts/echo_args.sh", "--", "a b", "--json", "", "-x"},
			code:   exitOK,
			stdout: []string{"== stdout ==\n[a b]\n[--json]\n[]\n[-x]\n== stderr ==\n(empty)\n"},
		},
		{
			name:   "flags after the positional arguments",
			args:   []string{"run", "shell-tools", "scripts/echo_args.sh", "--skills", skills, "--", "x"},
			code:   exitOK,
			stdout: []string{"[x]\n"},
		},
		{
			name:   "failure mirrors the exit code",
			args:   []string{"run", "--skills", skills, "shell-tools", "scripts/fail.sh", "--", "7"},
			code:   7,
			stdout: []string{"about to fail with 7\n", "fatal: something went wrong\n", "== shell-tools scripts/fail.sh: error, exit code 7, "},
		},
		{
			name:   "exit codes over 125 are clamped",
			args:   []string{"run", "--skills", skills, "shell-tools", "scripts/fail.sh", "--", "200"},
			code:   125,
			stdout: []string{"error, exit code 200"},
		},
		{
			name:   "a failing python script",
			args:   []string{"run", "--skills", skills, "py-tools", "scripts/fail.py"},
			code:   1,
			stdout: []string{"Traceback", "error, exit code 1"},
		},
		{
			name:   "timeout is 124",
			args:   []string{"run", "--skills", skills, "--timeout", "500ms", "shell-tools", "scripts/hang.sh"},
			code:   exitTimeout,
			stdout: []string{"started\n", ": timeout, exit code "},
		},
		{
			name:   "stdin from a file",
			args:   []string{"run", "--skills", skills, "--stdin", stdinFile, "py-tools", "scripts/upper.py"},
			code:   exitOK,
			stdout: []string{"FROM A FILE"},
		},
		{
			name:   "stdin from stdin",
			args:   []string{"run", "--skills", skills, "--stdin", "-", "py-tools", "scripts/upper.py", "--", "q"},
			stdin:  "piped in",
			code:   exitOK,
			stdout: []string{"PIPED IN", "args: q"},
		},
		{
			name:   "output is capped per stream",
			args:   []string{"run", "--skills", skills, "--max-output-chars", "100", "shell-tools", "scripts/noisy.sh", "--", "50"},
			code:   exitOK,
			stdout: []string{"out line 1\n", "... [truncated ", "over the 100-character cap", "END-OF-OUTPUT\n== stderr ==\nerr line 1\n"},
		},
		{
			name:   "unknown skill lists the skills",
			args:   []string{"run", "--skills", skills, "nope", "scripts/x.py"},
			code:   exitFailure,
			stderr: "adkskills: SKILL_NOT_FOUND: skill \"nope\" not found; available skills: [node-tools office-roundtrip py-tools report-writer shell-tools]\n",
		},
		{
			name:   "unknown script lists the runnable files",
			args:   []string{"run", "--skills", skills, "report-writer", "scripts/nope.py"},
			code:   exitFailure,
			stderr: "adkskills: SCRIPT_NOT_FOUND: script \"scripts/nope.py\" not found in skill \"report-writer\"; runnable files: scripts/fmt_helpers.py, scripts/report.py\n",
		},
		{
			name:   "a directory is not a script",
			args:   []string{"run", "--skills", skills, "report-writer", "scripts"},
			code:   exitFailure,
			stderr: "adkskills: SCRIPT_NOT_FOUND: \"scripts\" is a directory of skill \"report-writer\", not a script; runnable files: scripts/fmt_helpers.py, scripts/report.py\n",
		},
		{
			name:   "unsupported script type",
			args:   []string{"run", "--skills", badSkills(t), "unsupported-script", "scripts/tool.rb"},
			code:   exitFailure,
			stderr: "adkskills: UNSUPPORTED_SCRIPT_TYPE: \"scripts/tool.rb\" cannot be run: no interpreter runs its extension, and its #! line names ruby (supported: .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or node)\n",
		},
		{
			name:   "a script without an extension runs by its #! line",
			args:   []string{"run", "--skills", catalogueSkills(t), "shebang-tool", "scripts/greet", "--", "Ada"},
			code:   exitOK,
			stdout: []string{"== stdout ==\nhello, Ada\n", "== shebang-tool scripts/greet: success, exit code 0"},
		},
		{
			name:   "a path that leaves the skill",
			args:   []string{"run", "--skills", skills, "report-writer", "../py-tools/scripts/upper.py"},
			code:   exitFailure,
			stderr: "adkskills: INVALID_ARGUMENTS: argument \"script_path\": path \"../py-tools/scripts/upper.py\" leaves the skill folder with \"..\"\n",
		},
		{
			name:   "a skill that cannot be loaded says why",
			args:   []string{"run", "--skills", badSkills(t), "yaml-syntax", "scripts/x.py"},
			code:   exitFailure,
			stderr: "adkskills: SKILL_NOT_FOUND: skill \"yaml-syntax\" cannot be loaded: yaml-syntax/SKILL.md: line 4: invalid YAML: yaml: mapping values are not allowed in this context (adkskills validate shows every problem)\n",
		},
		{name: "missing script", args: []string{"run", "--skills", skills, "report-writer"}, code: exitUsage},
		{name: "arguments without --", args: []string{"run", "--skills", skills, "report-writer", "scripts/report.py", "Ada"}, code: exitUsage},
		{name: "zero timeout", args: []string{"run", "--skills", skills, "--timeout", "0s", "a", "b"}, code: exitUsage},
		{name: "negative cap", args: []string{"run", "--skills", skills, "--max-output-chars", "-1", "a", "b"}, code: exitUsage},
		{
			name:   "missing skills folder",
			args:   []string{"run", "--skills", missing, "a", "b.py"},
			code:   exitUsage,
			stderr: fmt.Sprintf("adkskills: skills folder %s does not exist (set --skills)\n", missing),
		},
		{
			name: "skills folder that is a skill",
			args: []string{"run", "--skills", filepath.Join(skills, "report-writer"), "report-writer", "scripts/report.py"},
			code: exitUsage,
		},
		{
			name: "missing stdin file",
			args: []string{"run", "--skills", skills, "--stdin", missing, "py-tools", "scripts/upper.py"},
			code: exitUsage,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := invoke(t, invocation{args: tt.args, stdin: tt.stdin})
			assert.Equal(t, tt.code, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
			rest := o.stdout
			for _, piece := range tt.stdout {
				i := strings.Index(rest, piece)
				if !assert.GreaterOrEqual(t, i, 0, "stdout lacks %q (in order):\n%s", piece, o.stdout) {
					break
				}
				rest = rest[i+len(piece):]
			}
			if tt.stderr != "" {
				assert.Equal(t, tt.stderr, o.stderr)
				assert.Empty(t, o.stdout, "a tool error prints nothing on stdout")
			}
			if tt.code == exitUsage {
				assert.Empty(t, o.stdout)
				assert.True(t, strings.HasPrefix(o.stderr, "adkskills: "), "stderr: %s", o.stderr)
			}
		})
	}
}

var pathLine = regexp.MustCompile(`(?m)^(\S+) -> artifact "([^"]+)" version (\d+) \(.*\n    (/.+)$`)

// printedFiles maps each output file of a run summary to its artifact,
// version and path on disk.
func printedFiles(t *testing.T, stdout string) map[string][3]string {
	t.Helper()
	out := map[string][3]string{}
	for _, m := range pathLine.FindAllStringSubmatch(stdout, -1) {
		out[m[1]] = [3]string{m[2], m[3], m[4]}
	}
	return out
}

// TestRunSavesToTheStore: each run adds a version, the summary points at
// the bytes on disk, and artifacts ls and cat show them in later
// invocations.
func TestRunSavesToTheStore(t *testing.T) {
	vars, dir := store(t)
	runReport := func(name string) map[string][3]string {
		o := invoke(t, invocation{vars: vars, args: []string{"run", "--skills", testSkills(t), "report-writer", "scripts/report.py", "--", name}})
		require.Equal(t, exitOK, o.code, o.stderr)
		return printedFiles(t, o.stdout)
	}
	first := runReport("Ada")
	second := runReport("Bob")
	require.Len(t, first, 3)
	for file, v := range second {
		assert.Equal(t, "2", v[1], file)
		assert.True(t, strings.HasPrefix(v[2], dir+string(filepath.Separator)), "%s is stored under the store folder %s: %s", file, dir, v[2])
		assert.Equal(t, first[file][0], v[0], "the same artifact name across runs")
	}
	assert.Contains(t, readAll(t, first["report.md"][2]), "Ada")
	assert.Contains(t, readAll(t, second["report.md"][2]), "Bob")
	assert.Equal(t, `{"name": "Bob", "style": "plain", "chars": 57}`, readAll(t, second["dist/data/summary.json"][2]))
	assert.True(t, strings.HasPrefix(readAll(t, second["badge.png"][2]), "\x89PNG"))

	ls := invoke(t, invocation{vars: vars, args: []string{"artifacts", "ls"}})
	require.Equal(t, exitOK, ls.code, ls.stderr)
	lines := strings.Split(strings.TrimSpace(ls.stdout), "\n")
	require.Len(t, lines, 4, ls.stdout)
	assert.Regexp(t, `^FILE\s+ARTIFACT\s+VERSIONS\s+LATEST\s+SIZE\s+MIME$`, lines[0])
	assert.Regexp(t, `^badge\.png\s+badge\.png\s+2\s+2\s+\d+ B\s+image/png$`, lines[1])
	assert.Regexp(t, `^dist/data/summary\.json\s+dist∕data∕summary\.json\s+2\s+2\s+46 B\s+application/json$`, lines[2])
	assert.Regexp(t, `^report\.md\s+report\.md\s+2\s+2\s+\d+ B\s+text/markdown$`, lines[3])

	cats := []struct {
		args []string
		want string
	}{
		{[]string{"artifacts", "cat", "dist∕data∕summary.json"}, `{"name": "Bob", "style": "plain", "chars": 57}`},
		{[]string{"artifacts", "cat", "dist/data/summary.json", "--version", "1"}, `{"name": "Ada", "style": "plain", "chars": 57}`},
		{[]string{"artifacts", "cat", "--version", "1", "report.md"}, readAll(t, first["report.md"][2])},
		{[]string{"artifacts", "cat", "badge.png"}, readAll(t, second["badge.png"][2])},
	}
	for _, c := range cats {
		o := invoke(t, invocation{vars: vars, args: c.args})
		assert.Equal(t, exitOK, o.code, "%v: %s", c.args, o.stderr)
		assert.Equal(t, c.want, o.stdout, "%v", c.args)
	}
}

// TestArtifactsCatReadsOldNames: a store written before artifact names
// changed ("dist%2Fdata%2Fsummary.json") still answers cat by name and by
// the file's path.
func TestArtifactsCatReadsOldNames(t *testing.T) {
	vars, dir := store(t)
	s, err := fileartifact.New(dir)
	require.NoError(t, err)
	for _, name := range []string{"dist%2Fdata%2Fsummary.json", "dist%2Fdata%2Fsummary.json", "report.md"} {
		_, err := s.Save(context.Background(), &artifact.SaveRequest{AppName: appName, UserID: "tester", SessionID: defaultSession, FileName: name,
			Part: genai.NewPartFromBytes([]byte("old "+name), "text/plain")})
		require.NoError(t, err)
	}
	for _, args := range [][]string{
		{"artifacts", "cat", "dist%2Fdata%2Fsummary.json"},
		{"artifacts", "cat", "dist/data/summary.json"},
		{"artifacts", "cat", "dist/data/summary.json", "--version", "2"},
	} {
		o := invoke(t, invocation{vars: vars, user: "tester", args: args})
		assert.Equal(t, exitOK, o.code, "%v: %s", args, o.stderr)
		assert.Equal(t, "old dist%2Fdata%2Fsummary.json", o.stdout, "%v", args)
	}
	o := invoke(t, invocation{vars: vars, user: "tester", args: []string{"artifacts", "cat", "dist/data/summary.json", "--version", "3"}})
	assert.Equal(t, exitFailure, o.code)
}

func TestArtifactsErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"empty store", []string{"artifacts"}, exitOK, `adkskills: no artifacts in session "cli" of `},
		{"unknown artifact", []string{"artifacts", "cat", "nope.txt"}, exitFailure, `adkskills: artifact "nope.txt" not found in session "cli" (see adkskills artifacts ls)`},
		{"unknown version", []string{"artifacts", "cat", "nope.txt", "--version", "3"}, exitFailure, `artifact "nope.txt" version 3 not found`},
		{"cat without a name", []string{"artifacts", "cat"}, exitUsage, "artifacts cat needs exactly one NAME"},
		{"unknown subcommand", []string{"artifacts", "rm", "x"}, exitUsage, `unknown subcommand "rm"`},
		{"--version with ls", []string{"artifacts", "ls", "--version", "2"}, exitUsage, "--version is for cat"},
		{"negative version", []string{"artifacts", "cat", "x", "--version", "-2"}, exitUsage, "--version must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := invoke(t, invocation{args: tt.args})
			assert.Equal(t, tt.code, o.code, o.stderr)
			assert.Contains(t, o.stderr, tt.stderr)
			assert.Empty(t, o.stdout)
		})
	}
}

// TestRunJSONIsWhatTheModelGets compares run --json with the function
// response a model receives from the same toolset under ADK's runner.
func TestRunJSONIsWhatTheModelGets(t *testing.T) {
	args := []string{"run", "--json", "--skills", testSkills(t), "report-writer", "scripts/report.py", "--", "Ada", "--style", "fancy"}
	o := invoke(t, invocation{args: args})
	require.Equal(t, exitOK, o.code, o.stderr)
	dec := json.NewDecoder(strings.NewReader(o.stdout))
	var got map[string]any
	require.NoError(t, dec.Decode(&got))
	assert.False(t, dec.More(), "nothing but the response on stdout")
	assert.Empty(t, o.stderr)

	want := modelSees(t, map[string]any{"skill_name": "report-writer", "script_path": "scripts/report.py", "args": []any{"Ada", "--style", "fancy"}})
	assert.Equal(t, want, got)
	assert.Equal(t, "success", got["status"])
	assert.Len(t, got["output_files"], 3)
}

// TestRunJSONToolError: --json prints the error response too, and the
// one-line error goes to stderr.
func TestRunJSONToolError(t *testing.T) {
	o := invoke(t, invocation{args: []string{"run", "--json", "--skills", testSkills(t), "nope", "scripts/x.py"}})
	assert.Equal(t, exitFailure, o.code)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &got), o.stdout)
	assert.Equal(t, "SKILL_NOT_FOUND", got["error_code"])
	assert.Equal(t, 1, strings.Count(o.stderr, "\n"), o.stderr)
}

// modelSees runs one run_skill_script call through an independent agent
// (in-memory artifacts) and returns the response the model's next request
// carries, as JSON values.
func modelSees(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	ctx := context.Background()
	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS(testSkills(t))), skilltoolset.WithCodeExecutor(local.New()))
	require.NoError(t, err)
	var seen map[string]any
	m := scripted.New("reference",
		scripted.Call(runscript.Name, args),
		func(req *model.LLMRequest) (*genai.Content, error) {
			last := req.Contents[len(req.Contents)-1]
			for _, p := range last.Parts {
				if p.FunctionResponse != nil {
					seen = p.FunctionResponse.Response
				}
			}
			return genai.NewContentFromText("ok", genai.RoleModel), nil
		},
	)
	a, err := llmagent.New(llmagent.Config{Name: "reference", Model: m, Toolsets: []tool.Toolset{ts}})
	require.NoError(t, err)
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: "ref", Agent: a, SessionService: sessions, ArtifactService: artifact.InMemoryService()})
	require.NoError(t, err)
	_, err = sessions.Create(ctx, &session.CreateRequest{AppName: "ref", UserID: "u", SessionID: "s"})
	require.NoError(t, err)
	for _, err := range r.Run(ctx, "u", "s", genai.NewContentFromText("go", genai.RoleUser), agent.RunConfig{}) {
		require.NoError(t, err)
	}
	require.NotNil(t, seen, "the model saw no function response")
	b, err := json.Marshal(seen)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// TestRunDefaults runs the README's first command with nothing set but
// HOME: the skills come from ./testdata/skills and the files land in the
// per-user state folder, not in the working directory.
func TestRunDefaults(t *testing.T) {
	home := t.TempDir()
	vars := map[string]string{"HOME": home}
	o := invoke(t, invocation{vars: vars, wd: repoRoot(t), args: []string{"run", "report-writer", "scripts/report.py", "--", "Ada"}})
	require.Equal(t, exitOK, o.code, o.stderr)
	files := printedFiles(t, o.stdout)
	require.Contains(t, files, "report.md")
	state := filepath.Join(home, ".local", "state", "adkskills", "artifacts") + string(filepath.Separator)
	assert.True(t, strings.HasPrefix(files["report.md"][2], state), files["report.md"][2])
	assert.Contains(t, readAll(t, files["report.md"][2]), "# Report for Ada")
}

// TestRunNoRunnableScripts: a skills folder whose skills have no script an
// interpreter runs does not get run_skill_script; run says so.
func TestRunNoRunnableScripts(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docs-only"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docs-only", "SKILL.md"), []byte("---\nname: docs-only\ndescription: Only words.\n---\n# Docs\n"), 0o644))
	o := invoke(t, invocation{args: []string{"run", "--skills", dir, "docs-only", "scripts/x.py"}})
	assert.Equal(t, exitFailure, o.code)
	assert.Equal(t, "adkskills: no skill has a script that can run (supported: .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or node), so run_skill_script is not offered\n", o.stderr)
}

func TestRunExitCodeMapping(t *testing.T) {
	tests := []struct {
		resp map[string]any
		want int
	}{
		{map[string]any{"status": "success", "exit_code": 0}, 0},
		{map[string]any{"status": "error", "exit_code": 3}, 3},
		{map[string]any{"status": "error", "exit_code": 125}, 125},
		{map[string]any{"status": "error", "exit_code": 137}, 125},
		{map[string]any{"status": "error", "exit_code": -1}, 1},
		{map[string]any{"status": "error", "exit_code": float64(4)}, 4},
		{map[string]any{"status": "timeout", "exit_code": 137}, 124},
	}
	for _, tt := range tests {
		res, err := runscript.ParseResponse(tt.resp)
		require.NoError(t, err)
		assert.Equal(t, tt.want, runExitCode(res), "%v", tt.resp)
	}
}

// TestRunSandbox runs the bundled skill with --sandbox where bubblewrap can
// isolate.
func TestRunSandbox(t *testing.T) {
	if err := sandbox.New().Probe(context.Background()); err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	o := invoke(t, invocation{args: []string{"run", "--sandbox", "--skills", testSkills(t), "report-writer", "scripts/report.py", "--", "Ada"}})
	require.Equal(t, exitOK, o.code, o.stderr)
	files := printedFiles(t, o.stdout)
	require.Len(t, files, 3, o.stdout)
	assert.Contains(t, readAll(t, files["report.md"][2]), "Ada")
}

// TestAllowHostNeedsSandbox: --allow-host is refused, with the reason,
// without --sandbox and with a malformed entry, by every command that runs
// scripts, before anything opens.
func TestAllowHostNeedsSandbox(t *testing.T) {
	for _, cmd := range []string{"run", "web", "chat", "mcp"} {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--allow-host", "api.example.com:443"}, "--allow-host needs --sandbox"},
			{[]string{"--sandbox", "--allow-host", "api.example.com"}, `--allow-host: egress: invalid allowlist entry "api.example.com": `},
			{[]string{"--sandbox", "--allow-host", "a.example.com:443", "--allow-host", "*.com:443"}, `--allow-host: egress: invalid allowlist entry "*.com:443": *.com covers a whole public suffix`},
		} {
			t.Run(cmd+strings.Join(tt.args, " "), func(t *testing.T) {
				args := append([]string{cmd}, tt.args...)
				if cmd == "run" {
					args = append(args, "a", "b.py")
				}
				o := invoke(t, invocation{args: args})
				assert.Equal(t, exitUsage, o.code, o.stderr)
				assert.Contains(t, o.stderr, tt.want)
			})
		}
	}
}

// TestRunSandboxAllowHost: run --sandbox --allow-host lets the script reach
// that host:port of the host's loopback and no other; the model's response
// (--json) names the refused one in its warning.
func TestRunSandboxAllowHost(t *testing.T) {
	if err := sandbox.New().Probe(context.Background()); err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello through the proxy") }))
	defer allowed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the unlisted server was reached") }))
	defer other.Close()
	dir := filepath.Join(t.TempDir(), "skills")
	for p, c := range map[string]string{
		"net/SKILL.md":       "---\nname: net\ndescription: Fetches.\n---\n",
		"net/scripts/get.sh": "curl -sS --max-time 20 \"$1\"; echo; curl -s --max-time 20 \"$2\"\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	host := strings.TrimPrefix(allowed.URL, "http://")
	o := invoke(t, invocation{args: []string{"run", "--json", "--sandbox", "--allow-host", host, "--skills", dir, "net", "scripts/get.sh", "--", allowed.URL, other.URL}})
	require.Equal(t, exitOK, o.code, o.stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &got), o.stdout)
	assert.Contains(t, got["stdout"], "hello through the proxy\n")
	assert.Contains(t, got["stdout"], strings.TrimPrefix(other.URL, "http://")+" is not on the egress allowlist")
	assert.Contains(t, got["warning"], "the sandbox's network refused: "+strings.TrimPrefix(other.URL, "http://")+" (is not on the egress allowlist")
}
