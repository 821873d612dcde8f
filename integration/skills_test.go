package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/loadartifactstool"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/internal/truncate"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// reportArgs runs report-writer's script as the README does.
var reportArgs = map[string]any{"skill_name": "report-writer", "script_path": "scripts/report.py", "args": []any{"ada lovelace", "--style", "bold"}}

// reportFiles are the files report.py writes, by path.
var reportFiles = []string{"badge.png", "dist/data/summary.json", "report.md"}

// directRun runs the report script through a bare executor, for the bytes
// the artifacts must hold.
func directRun(t *testing.T) map[string][]byte {
	t.Helper()
	var files []codeexec.File
	root := filepath.Join(skillsDir(t), "report-writer")
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, _ := filepath.Rel(root, p)
			files = append(files, codeexec.File{Path: filepath.ToSlash(rel), Data: data})
		}
		return nil
	}))
	res, err := local.New().Execute(context.Background(), &codeexec.Request{
		Files: files, Script: "scripts/report.py", Args: []string{"ada lovelace", "--style", "bold"},
	})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr.Text)
	out := map[string][]byte{}
	for _, f := range res.Files {
		out[f.Path] = f.Data
	}
	return out
}

func TestScriptOutputsBecomeArtifacts(t *testing.T) {
	h := newHarness(t, harnessConfig{steps: []scripted.Step{call("run_skill_script", reportArgs), say("done")}})
	events := h.say("write a report for ada")

	ev, resp := responseEvent(t, events, "run_skill_script")
	require.Equal(t, "success", resp["status"], jsonOf(t, resp))
	assert.Equal(t, 0, resp["exit_code"])
	assert.Equal(t, false, resp["timed_out"])
	assert.Contains(t, resp["stdout"], "report for Ada Lovelace")
	assert.Contains(t, resp["stderr"], "writing report", "stderr on a successful run is reported, and the run is still a success")

	want := directRun(t)
	manifest := resp["output_files"].([]map[string]any)
	require.Len(t, manifest, len(reportFiles))
	for i, entry := range manifest {
		name := reportFiles[i]
		art := runscript.ArtifactName(name)
		assert.Equal(t, name, entry["name"])
		assert.Equal(t, art, entry["artifact"])
		assert.Equal(t, int64(1), entry["version"])
		assert.Equal(t, int64(len(want[name])), entry["size_bytes"])
		assert.Equal(t, int64(1), ev.Actions.ArtifactDelta[art], "the response event carries the artifact delta")
		part := h.load(art, 0)
		require.NotNil(t, part.InlineData)
		assert.Equal(t, want[name], part.InlineData.Data, "artifact %s holds the script's bytes", art)
		assert.Equal(t, entry["mime_type"], part.InlineData.MIMEType)
	}
	img, err := png.Decode(bytes.NewReader(h.load("badge.png", 1).InlineData.Data))
	require.NoError(t, err)
	assert.Equal(t, 16, img.Bounds().Dx())
	assert.Equal(t, "image/png", manifest[0]["mime_type"])
	assert.True(t, strings.HasPrefix(manifest[2]["mime_type"].(string), "text/markdown"))

	// The persisted session event carries the delta too.
	var persisted bool
	for ev := range h.storedSession().Events().All() {
		if ev.Actions.ArtifactDelta[runscript.ArtifactName("dist/data/summary.json")] == 1 {
			persisted = true
		}
	}
	assert.True(t, persisted, "the stored session has the artifact delta")

	// The model's next request holds the manifest, never the bytes.
	next := h.request(1)
	got := lastResponse(t, next, "run_skill_script")
	assert.Equal(t, jsonOf(t, manifest), jsonOf(t, got["output_files"]))
	wire := jsonOf(t, next.Contents)
	for _, data := range want {
		enc, _ := json.Marshal(data) // how bytes would travel: base64 in JSON
		assert.NotContains(t, wire, strings.Trim(string(enc), `"`), "file bytes leaked into the model request")
	}
	for _, c := range next.Contents {
		for _, p := range c.Parts {
			assert.Nil(t, p.InlineData, "no inline data reaches the model")
		}
	}
}

func TestRepeatRunCreatesNewVersions(t *testing.T) {
	h := newHarness(t, harnessConfig{steps: []scripted.Step{
		call("run_skill_script", reportArgs), say("once"),
		call("run_skill_script", reportArgs), say("twice"),
	}})
	h.say("first")
	events := h.say("again")
	_, resp := responseEvent(t, events, "run_skill_script")
	for _, e := range resp["output_files"].([]map[string]any) {
		assert.Equal(t, int64(2), e["version"], "%v", e["name"])
	}
	list, err := h.artifacts.List(context.Background(), &artifact.ListRequest{AppName: appName, UserID: userID, SessionID: h.sessionID})
	require.NoError(t, err)
	want := make([]string, 0, len(reportFiles))
	for _, f := range reportFiles {
		want = append(want, runscript.ArtifactName(f))
	}
	slices.Sort(want)
	got := slices.Clone(list.FileNames)
	slices.Sort(got)
	assert.Equal(t, want, got, "a repeat run adds versions, never renamed copies")
}

// noisyOutput is what noisy.sh prints on one stream.
func noisyOutput(prefix string, lines int) string {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "%s line %d\n", prefix, i)
	}
	b.WriteString("END-OF-OUTPUT\n")
	return b.String()
}

func TestNoisyScriptIsCappedOnBothStreams(t *testing.T) {
	const maxChars = 2_000
	const lines = 5_000
	h := newHarness(t, harnessConfig{
		opts: []skilltoolset.Option{skilltoolset.WithMaxOutputChars(maxChars)},
		steps: []scripted.Step{call("run_skill_script", map[string]any{
			"skill_name": "shell-tools", "script_path": "scripts/noisy.sh", "args": []any{fmt.Sprint(lines)},
		}), say("done")},
	})
	_, resp := responseEvent(t, h.say("be noisy"), "run_skill_script")
	for stream, prefix := range map[string]string{"stdout": "out", "stderr": "err"} {
		full := noisyOutput(prefix, lines)
		got := resp[stream].(string)
		assert.Equal(t, truncate.String(full, maxChars), got, stream)
		total := len([]rune(full))
		marker := fmt.Sprintf("[truncated %d of %d characters: over the %d-character cap; head and tail kept]", total-maxChars, total, maxChars)
		assert.Contains(t, got, marker, stream)
		assert.True(t, strings.HasSuffix(got, "END-OF-OUTPUT\n"), "%s keeps its tail", stream)
	}
}

func TestFailingScriptKeepsTracebackTail(t *testing.T) {
	const maxChars = 500
	h := newHarness(t, harnessConfig{
		opts:  []skilltoolset.Option{skilltoolset.WithMaxOutputChars(maxChars)},
		steps: []scripted.Step{call("run_skill_script", map[string]any{"skill_name": "py-tools", "script_path": "scripts/fail.py"}), say("it failed")},
	})
	_, resp := responseEvent(t, h.say("fail"), "run_skill_script")
	assert.Equal(t, "error", resp["status"])
	assert.Equal(t, 1, resp["exit_code"])
	stderr := resp["stderr"].(string)
	assert.Contains(t, stderr, "truncated", "a 40-deep traceback is over the cap")
	assert.True(t, strings.HasSuffix(stderr, "ValueError: the input table is empty: nothing to report\n"), stderr)
	assert.Equal(t, "starting\n", resp["stdout"])
	_, isErr := resp["error_code"]
	assert.False(t, isErr, "a script that runs and fails is not a tool error")
}

func TestHangingScriptTimesOut(t *testing.T) {
	const timeout = time.Second
	h := newHarness(t, harnessConfig{
		opts:  []skilltoolset.Option{skilltoolset.WithScriptTimeout(timeout)},
		steps: []scripted.Step{call("run_skill_script", map[string]any{"skill_name": "shell-tools", "script_path": "scripts/hang.sh"}), say("it hung")},
	})
	start := time.Now()
	_, resp := responseEvent(t, h.say("hang"), "run_skill_script")
	assert.Less(t, time.Since(start), timeout+10*time.Second)
	assert.Equal(t, "timeout", resp["status"])
	assert.Equal(t, true, resp["timed_out"])
	assert.Equal(t, "started\n", resp["stdout"], "output produced before the time-out is kept")
}

func TestNonASCIIArgsAndStdin(t *testing.T) {
	args := []any{"héllo wörld", "你好", "🎉 party", "--flag=a b"}
	stdin := "línea 1 ✓\n第二行\n"
	h := newHarness(t, harnessConfig{steps: []scripted.Step{
		call("run_skill_script", map[string]any{"skill_name": "node-tools", "script_path": "scripts/echo.js", "args": args, "stdin": stdin}),
		say("echoed"),
	}})
	_, resp := responseEvent(t, h.say("echo"), "run_skill_script")
	require.Equal(t, "success", resp["status"], jsonOf(t, resp))
	argsJSON, _ := json.Marshal(args)
	want := fmt.Sprintf("args: %s\nstdin: %s\n", argsJSON, stdin)
	assert.Equal(t, want, resp["stdout"])
	assert.Equal(t, "node done ✓\n", resp["stderr"])
	files := resp["output_files"].([]map[string]any)
	require.Len(t, files, 1)
	assert.Equal(t, "out/echo.txt", files[0]["name"])
	assert.Equal(t, []byte(want), h.load(files[0]["artifact"].(string), 1).InlineData.Data)
}

func TestStdinAndSecretsThroughPython(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "parent-secret-must-not-leak")
	h := newHarness(t, harnessConfig{
		opts: []skilltoolset.Option{skilltoolset.WithCodeExecutor(local.New(local.WithEnv(map[string]string{"REPORT_TOKEN": "given-by-operator"})))},
		steps: []scripted.Step{
			call("run_skill_script", map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py", "args": []any{"a b", "c"}, "stdin": "quiet words\n"}),
			call("run_skill_script", map[string]any{"skill_name": "py-tools", "script_path": "scripts/env.py", "args": []any{"GOOGLE_API_KEY", "REPORT_TOKEN"}}),
			say("done"),
		},
	})
	h.say("go")
	upper := lastResponse(t, h.request(1), "run_skill_script")
	assert.Equal(t, "QUIET WORDS\nargs: a b | c\n", upper["stdout"])
	env := lastResponse(t, h.request(2), "run_skill_script")
	assert.Equal(t, "GOOGLE_API_KEY=<unset>\nREPORT_TOKEN=given-by-operator\n", env["stdout"])
}

func TestScriptNotFoundThenFatal(t *testing.T) {
	missing := map[string]any{"skill_name": "shell-tools", "script_path": "scripts/nope.sh"}
	h := newHarness(t, harnessConfig{steps: []scripted.Step{call("run_skill_script", missing), call("run_skill_script", missing), say("giving up")}})
	h.say("run nope")
	first := lastResponse(t, h.request(1), "run_skill_script")
	assert.Equal(t, "SCRIPT_NOT_FOUND", first["error_code"])
	assert.Contains(t, first["error"], "scripts/noisy.sh", "the miss lists the runnable files")
	second := lastResponse(t, h.request(2), "run_skill_script")
	assert.Equal(t, "SCRIPT_NOT_FOUND_FATAL", second["error_code"])

	// A new invocation starts counting again.
	h.model.Append(call("run_skill_script", missing), say("again"))
	h.say("try once more")
	assert.Equal(t, "SCRIPT_NOT_FOUND", lastResponse(t, h.request(4), "run_skill_script")["error_code"])
}

func TestNoArtifactServiceWarns(t *testing.T) {
	h := newHarness(t, harnessConfig{noArtifacts: true, steps: []scripted.Step{call("run_skill_script", reportArgs), say("done")}})
	ev, resp := responseEvent(t, h.say("report"), "run_skill_script")
	assert.Equal(t, "success", resp["status"])
	assert.Contains(t, resp["warning"], "no artifact service")
	files := resp["output_files"].([]map[string]any)
	require.Len(t, files, len(reportFiles))
	for _, f := range files {
		assert.NotContains(t, f, "artifact")
		assert.NotContains(t, f, "version")
	}
	assert.Empty(t, ev.Actions.ArtifactDelta)
}

func TestLoadSkillAndResourcesStillWork(t *testing.T) {
	h := newHarness(t, harnessConfig{steps: []scripted.Step{
		call("load_skill", map[string]any{"name": "report-writer"}),
		call("load_skill_resource", map[string]any{"skill_name": "report-writer", "resource_path": "cards/greeting.txt"}),
		call("list_skills", map[string]any{}),
		say("read"),
	}})
	h.say("read the skill")
	sk := lastResponse(t, h.request(1), "load_skill")
	assert.Contains(t, sk["instructions"], "# Report writer")
	res := lastResponse(t, h.request(2), "load_skill_resource")
	assert.Equal(t, "Hello, {name}! Ünïcödé 你好 🎉\n", res["content"], "files outside scripts/references/assets are readable")
	list := lastResponse(t, h.request(3), "list_skills")
	assert.Contains(t, list["skills"], "<name>\nnode-tools\n</name>")

	si := h.request(0).Config.SystemInstruction
	require.NotNil(t, si)
	text := jsonOf(t, si)
	assert.Contains(t, text, "run_skill_script")
	assert.Contains(t, text, "_FATAL")
	assert.NotContains(t, text, "via bash", "ADK's default instruction is replaced")
}

func TestLoadArtifactsToolReadsScriptOutputLater(t *testing.T) {
	art := runscript.ArtifactName("report.md")
	h := newHarness(t, harnessConfig{
		extraTools: []tool.Tool{loadartifactstool.New()},
		steps: []scripted.Step{
			call("run_skill_script", reportArgs), say("written"),
			call("load_artifacts", map[string]any{"artifact_names": []any{art}}), say("read it"),
		},
	})
	h.say("write")
	h.say("show me the report")
	req := h.request(3)
	var found bool
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.InlineData != nil && bytes.Contains(p.InlineData.Data, []byte("# Report for Ada Lovelace")) {
				found = true
			}
			if strings.Contains(p.Text, "# Report for Ada Lovelace") {
				found = true
			}
		}
	}
	assert.True(t, found, "load_artifacts put the script's report into the model request")
}

// confirmationCall finds the adk_request_confirmation call a turn ended with.
func confirmationCall(t *testing.T, events []*session.Event) *genai.FunctionCall {
	t.Helper()
	for _, ev := range events {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionCall != nil && p.FunctionCall.Name == toolconfirmation.FunctionCallName {
				return p.FunctionCall
			}
		}
	}
	t.Fatalf("no confirmation was requested")
	return nil
}

func confirm(h *harness, fc *genai.FunctionCall, ok bool) []*session.Event {
	return h.send(&genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: fc.ID, Name: toolconfirmation.FunctionCallName, Response: map[string]any{"confirmed": ok},
	}}}})
}

func TestInlineScriptNeedsApproval(t *testing.T) {
	script := "import sys\nopen('inline-out.txt', 'w').write('written by inline ' + sys.argv[1])\nprint('inline ran', sys.argv[1])\n"
	inline := map[string]any{"language": "python", "script": script, "args": []any{"✓"}, "skill_name": "report-writer"}
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprintf("approve=%v", approve), func(t *testing.T) {
			h := newHarness(t, harnessConfig{
				opts:  []skilltoolset.Option{skilltoolset.WithInlineScripts(true)},
				steps: []scripted.Step{call("run_skill_inline_script", inline), say("after confirmation")},
			})
			events := h.say("run this")
			fc := confirmationCall(t, events)
			tc := fc.Args["toolConfirmation"].(toolconfirmation.ToolConfirmation)
			assert.Contains(t, tc.Hint, script, "the hint shows the whole script")
			assert.Contains(t, tc.Hint, "python")
			assert.Contains(t, tc.Hint, `["✓"]`)
			payload := tc.Payload.(map[string]any)
			assert.Equal(t, script, payload["script"])
			assert.Equal(t, "python", payload["language"])
			assert.Len(t, h.model.Requests(), 1, "nothing ran before the answer")

			events = confirm(h, fc, approve)
			_, resp := responseEvent(t, events, "run_skill_inline_script")
			if !approve {
				assert.Equal(t, "CONFIRMATION_REJECTED", resp["error_code"])
				list, err := h.artifacts.List(context.Background(), &artifact.ListRequest{AppName: appName, UserID: userID, SessionID: h.sessionID})
				require.NoError(t, err)
				assert.Empty(t, list.FileNames, "a rejected script writes nothing")
				return
			}
			require.Equal(t, "success", resp["status"], jsonOf(t, resp))
			assert.Equal(t, "inline ran ✓\n", resp["stdout"])
			files := resp["output_files"].([]map[string]any)
			require.Len(t, files, 1, "only the file the script wrote, not the staged skill or the script itself")
			assert.Equal(t, "inline-out.txt", files[0]["name"])
			assert.Equal(t, []byte("written by inline ✓"), h.load("inline-out.txt", 1).InlineData.Data)
			assert.Equal(t, resp, lastResponse(t, h.request(1), "run_skill_inline_script"))
		})
	}
}

func TestInstructionReachesModelOnceWhenWrapped(t *testing.T) {
	wraps := map[string]func(tool.Toolset) tool.Toolset{
		"direct": nil,
		"filter": func(ts tool.Toolset) tool.Toolset {
			return tool.FilterToolset(ts, tool.AllowedToolsPredicate([]string{"load_skill", "run_skill_script"}))
		},
		"confirmation": func(ts tool.Toolset) tool.Toolset { return tool.WithConfirmation(ts, false, nil) },
	}
	for name, wrap := range wraps {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{wrap: wrap, steps: []scripted.Step{say("hi")}})
			h.say("hello")
			req := h.request(0)
			text := systemText(req)
			assert.Equal(t, 1, strings.Count(text, "<available_skills>\n<skill>"), text)
			assert.Equal(t, 1, strings.Count(text, "You can use Agent Skills"), text)
			assert.Contains(t, text, "<name>\nreport-writer\n</name>")
			assert.True(t, strings.HasPrefix(text, "You are a test agent."), "the agent's own instruction comes first")
		})
	}
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

func TestToolsFollowConfiguration(t *testing.T) {
	cases := []struct {
		name     string
		cfg      harnessConfig
		want     []string
		instruct string
	}{
		{"no executor", harnessConfig{noExecutor: true}, []string{"list_skills", "load_skill", "load_skill_resource"}, "Scripts cannot be run"},
		{"executor", harnessConfig{}, []string{"list_skills", "load_skill", "load_skill_resource", "run_skill_script"}, "run_skill_script"},
		{"inline", harnessConfig{opts: []skilltoolset.Option{skilltoolset.WithInlineScripts(true)}},
			[]string{"list_skills", "load_skill", "load_skill_resource", "run_skill_script", "run_skill_inline_script"}, "human must approve"},
		{"inline without executor", harnessConfig{noExecutor: true, opts: []skilltoolset.Option{skilltoolset.WithInlineScripts(true)}},
			[]string{"list_skills", "load_skill", "load_skill_resource"}, "Scripts cannot be run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.steps = []scripted.Step{say("hi")}
			h := newHarness(t, c.cfg)
			h.say("hello")
			req := h.request(0)
			var names []string
			for _, gt := range req.Config.Tools {
				for _, d := range gt.FunctionDeclarations {
					names = append(names, d.Name)
				}
			}
			assert.Equal(t, c.want, names)
			assert.Contains(t, systemText(req), c.instruct)
		})
	}
}
