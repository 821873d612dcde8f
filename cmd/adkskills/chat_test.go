package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/model/scripted"
)

func TestWithoutCredentials(t *testing.T) {
	for _, args := range [][]string{{"chat"}, {"chat", "--inline", "--model", "gemini-2.5-pro"}, {"web"}, {"web", "--inline", "--port", "9999"}} {
		o := invoke(t, invocation{args: args})
		assert.Equal(t, exitUsage, o.code)
		assert.Equal(t, fmt.Sprintf(credentialsHelp, args[0]), o.stderr)
		assert.Contains(t, o.stderr, "export GOOGLE_API_KEY=")
		assert.Contains(t, o.stderr, "https://aistudio.google.com/apikey")
		assert.Contains(t, o.stderr, "GOOGLE_GENAI_USE_VERTEXAI=true")
		assert.Contains(t, o.stderr, "adkskills "+args[0]+" --demo\n")
		assert.Empty(t, o.stdout)
	}
}

// TestMissingCredentials reads the environment as the genai client does.
func TestMissingCredentials(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want string // "", "key" (credentialsHelp) or "vertex" (vertexHelp)
	}{
		{"nothing", nil, "key"},
		{"GOOGLE_API_KEY", map[string]string{"GOOGLE_API_KEY": "k"}, ""},
		{"GEMINI_API_KEY", map[string]string{"GEMINI_API_KEY": "k"}, ""},
		{"Vertex AI", map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"}, ""},
		{"Vertex AI, region", map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_REGION": "europe-west4"}, ""},
		{"Vertex AI express", map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "TRUE", "GOOGLE_API_KEY": "k"}, ""},
		{"Vertex AI without a location", map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"}, "vertex"},
		{"Vertex AI, enterprise", map[string]string{"GOOGLE_GENAI_USE_ENTERPRISE": "true"}, "vertex"},
		{"enterprise off wins", map[string]string{"GOOGLE_GENAI_USE_ENTERPRISE": "false", "GOOGLE_GENAI_USE_VERTEXAI": "true"}, "key"},
		{"Vertex AI off", map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "false", "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "l"}, "key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cli{env: env{getenv: func(k string) string { return tt.vars[k] }}}
			want := map[string]string{"": "", "key": fmt.Sprintf(credentialsHelp, "web"), "vertex": fmt.Sprintf(vertexHelp, "web")}[tt.want]
			assert.Equal(t, want, c.missingCredentials("web"))
		})
	}
}

// lastFunctionResponse is the response the request ends with, or nil.
func lastFunctionResponse(req *model.LLMRequest) map[string]any {
	last := req.Contents[len(req.Contents)-1]
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			return p.FunctionResponse.Response
		}
	}
	return nil
}

// replyStep ends the turn with text that quotes the tool's status, so the
// test sees what the model was given.
func replyStep(text string) scripted.Step {
	return func(req *model.LLMRequest) (*genai.Content, error) {
		resp := lastFunctionResponse(req)
		return genai.NewContentFromText(text+" (model saw: "+statusOf(resp)+")", genai.RoleModel), nil
	}
}

func statusOf(resp map[string]any) string {
	if code, ok := resp["error_code"].(string); ok {
		return code
	}
	if s, ok := resp["status"].(string); ok {
		return s
	}
	return "nothing"
}

const inlineScript = "print('inline says hi')\nopen('out.txt', 'w').write('made inline')\n"

// TestChat drives chat with a scripted model in place of Gemini: the same
// runner, toolset, store and confirmation round trip.
func TestChat(t *testing.T) {
	inlineCall := scripted.Call("run_skill_inline_script", map[string]any{"language": "python", "script": inlineScript})
	tests := []struct {
		name   string
		flags  []string
		steps  []scripted.Step
		input  string
		stdout []string // pieces, in order
		stderr string
		absent []string
		saved  string // an artifact the turn saved, read back with artifacts cat
	}{
		{
			name:  "skill script",
			steps: []scripted.Step{scripted.Call("run_skill_script", map[string]any{"skill_name": "report-writer", "script_path": "scripts/report.py", "args": []any{"Ada"}}), replyStep("Your report is ready.")},
			input: "write a report about Ada\n",
			stdout: []string{"adkskills chat: test-model, skills from ", "you> ",
				`  [call] run_skill_script {"args":["Ada"],"script_path":"scripts/report.py","skill_name":"report-writer"}`,
				"  [result] run_skill_script: success, exit code 0, saved badge.png v1, dist∕data∕summary.json v1, report.md v1\n",
				"Your report is ready. (model saw: success)\n", "you> "},
			saved: "report.md",
		},
		{
			name:  "inline script approved",
			flags: []string{"--inline"},
			steps: []scripted.Step{inlineCall, replyStep("Done.")},
			input: "say hi\ny\n",
			stdout: []string{`  [call] run_skill_inline_script {"language":"python"`,
				"  [result] run_skill_inline_script: waiting for your approval\n",
				"  [approval] run_skill_inline_script needs your approval:\n", "    print('inline says hi')\n", "Run it? [y/N] ",
				"  [result] run_skill_inline_script: success, exit code 0, saved out.txt v1\n",
				"Done. (model saw: success)\n"},
			saved: "out.txt",
		},
		{
			name:   "inline script rejected",
			flags:  []string{"--inline"},
			steps:  []scripted.Step{inlineCall, replyStep("Fine.")},
			input:  "say hi\nn\n",
			stdout: []string{"Run it? [y/N] ", "  [approval] rejected\n", "  [result] run_skill_inline_script: CONFIRMATION_REJECTED: ", "Fine. (model saw: CONFIRMATION_REJECTED)\n"},
			absent: []string{"saved out.txt"},
		},
		{
			name:   "end of input at the approval prompt rejects",
			flags:  []string{"--inline"},
			steps:  []scripted.Step{inlineCall, replyStep("Fine.")},
			input:  "say hi\n",
			stdout: []string{"Run it? [y/N] \n", "  [approval] rejected\n", "(model saw: CONFIRMATION_REJECTED)"},
		},
		{
			name: "a model error is one line and the chat goes on",
			steps: []scripted.Step{
				func(*model.LLMRequest) (*genai.Content, error) { return nil, errors.New("quota exceeded\nretry later") },
				func(*model.LLMRequest) (*genai.Content, error) {
					return genai.NewContentFromText("Back again.", genai.RoleModel), nil
				},
			},
			input:  "first\nsecond\n/quit\nnever read\n",
			stdout: []string{"you> ", "you> ", "Back again.\n", "you> \n"},
			stderr: "adkskills: quota exceeded …\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars, _ := store(t)
			vars["GOOGLE_API_KEY"] = "test-key"
			m := scripted.New("chat-test", tt.steps...)
			var gotName string
			var stdout, stderr bytes.Buffer
			e := env{
				getenv: func(k string) string { return vars[k] },
				newModel: func(_ context.Context, name string) (model.LLM, error) {
					gotName = name
					return m, nil
				},
			}
			args := append([]string{"chat", "--skills", testSkills(t), "--model", "test-model"}, tt.flags...)
			code := run(context.Background(), args, strings.NewReader(tt.input), &stdout, &stderr, e)
			assert.Equal(t, exitOK, code, stderr.String())
			assert.Equal(t, "test-model", gotName)
			assert.Equal(t, len(tt.steps), len(m.Requests()), "model calls")
			rest := stdout.String()
			for _, piece := range tt.stdout {
				i := strings.Index(rest, piece)
				if !assert.GreaterOrEqual(t, i, 0, "stdout lacks %q (in order):\n%s", piece, stdout.String()) {
					break
				}
				rest = rest[i+len(piece):]
			}
			for _, a := range tt.absent {
				assert.NotContains(t, stdout.String(), a)
			}
			assert.Equal(t, tt.stderr, stderr.String())
			if tt.saved != "" {
				o := invoke(t, invocation{vars: vars, args: []string{"artifacts", "cat", tt.saved}})
				assert.Equal(t, exitOK, o.code, o.stderr)
				assert.NotEmpty(t, o.stdout)
			}
		})
	}
}
