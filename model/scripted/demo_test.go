package scripted

import (
	"context"
	"fmt"
	"os"
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
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// demoAgent is the demo model in an agent with the test skills, under ADK's
// runner with in-memory services.
type demoAgent struct {
	t         *testing.T
	r         *runner.Runner
	artifacts artifact.Service
	sessionID string
}

func newDemoAgent(t *testing.T, examples []string, opts ...skilltoolset.Option) *demoAgent {
	ctx := context.Background()
	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS("../../testdata/skills")), opts...)
	require.NoError(t, err)
	a, err := llmagent.New(llmagent.Config{Name: "demo", Model: NewDemo(examples...), Toolsets: []tool.Toolset{ts}})
	require.NoError(t, err)
	sessions := session.InMemoryService()
	d := &demoAgent{t: t, artifacts: artifact.InMemoryService()}
	d.r, err = runner.New(runner.Config{AppName: "app", Agent: a, SessionService: sessions, ArtifactService: d.artifacts})
	require.NoError(t, err)
	s, err := sessions.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u"})
	require.NoError(t, err)
	d.sessionID = s.Session.ID()
	return d
}

// turn runs one turn and returns its events.
func (d *demoAgent) turn(msg *genai.Content) []*session.Event {
	d.t.Helper()
	var events []*session.Event
	for ev, err := range d.r.Run(context.Background(), "u", d.sessionID, msg, agent.RunConfig{}) {
		require.NoError(d.t, err)
		events = append(events, ev)
	}
	return events
}

// summary is what a turn's events show: "call NAME", "response NAME
// STATUS|ERROR_CODE", "confirm" and the text, one entry per part.
func summary(events []*session.Event) []string {
	var out []string
	for _, ev := range events {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			switch {
			case p.FunctionCall != nil && p.FunctionCall.Name == toolconfirmation.FunctionCallName:
				out = append(out, "confirm")
			case p.FunctionCall != nil:
				out = append(out, "call "+p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				r := p.FunctionResponse.Response
				out = append(out, fmt.Sprintf("response %s %v%v", p.FunctionResponse.Name, r["status"], r["error_code"]))
			case p.Text != "":
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// confirmation approves or rejects the confirmation request a turn ended with.
func confirmation(t *testing.T, events []*session.Event, ok bool) *genai.Content {
	for _, ev := range events {
		for _, p := range ev.Content.Parts {
			if fc := p.FunctionCall; fc != nil && fc.Name == toolconfirmation.FunctionCallName {
				return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
					ID: fc.ID, Name: fc.Name, Response: map[string]any{"confirmed": ok}}}}}
			}
		}
	}
	t.Fatal("no confirmation request")
	return nil
}

// TestDemoTurns drives the demo through ADK's runner with the real toolset
// and executor: each message's events, and the text the turn ends with.
func TestDemoTurns(t *testing.T) {
	exe := skilltoolset.WithCodeExecutor(local.New())
	inline := skilltoolset.WithInlineScripts(true)
	tests := []struct {
		name     string
		opts     []skilltoolset.Option
		examples []string
		message  string
		events   []string // all but the last text
		text     []string // pieces of the last text, in order
		absent   []string
	}{
		{
			name: "a run", opts: []skilltoolset.Option{exe},
			message: "run report-writer scripts/report.py Ada",
			events:  []string{"call run_skill_script", "response run_skill_script success<nil>"},
			text:    []string{"`scripts/report.py` of `report-writer` ran: success, exit code 0.", "`dist∕data∕summary.json` (version 1)", "stdout:\n```\nreport for Ada: "},
			absent:  []string{"stderr:"},
		},
		{
			name: "a failing run quotes stderr's tail", opts: []skilltoolset.Option{exe},
			message: "run py-tools scripts/fail.py",
			events:  []string{"call run_skill_script", "response run_skill_script error<nil>"},
			text:    []string{"ran: error, exit code 1.", "stdout:\n```\nstarting\n```", "stderr:\n```\n", "[truncated ", "ValueError: the input table is empty: nothing to report\n```"},
		},
		{
			name: "stdin and quoted arguments", opts: []skilltoolset.Option{exe},
			message: "run py-tools scripts/upper.py 'a b' c\n```\nhello\n```",
			events:  []string{"call run_skill_script", "response run_skill_script success<nil>"},
			text:    []string{"HELLO\nargs: a b | c"},
		},
		{
			name: "a tool error", opts: []skilltoolset.Option{exe},
			message: "run no-such-skill scripts/x.py",
			events:  []string{"call run_skill_script", "response run_skill_script <nil>SKILL_NOT_FOUND"},
			text:    []string{"`scripts/x.py` of `no-such-skill` did not run: SKILL_NOT_FOUND: ", "report-writer"},
		},
		{
			name: "help lists the skills and the offered commands", opts: []skilltoolset.Option{exe, inline},
			examples: []string{"run report-writer scripts/report.py Ada", "run-inline bash\n```\necho ~~~\n```"},
			message:  "hello, what can you do?",
			text: []string{"no AI and no key", "Skills (5):\n", "- `node-tools`: Node.js scripts", "- `report-writer`: Writes a short report about a person (Markdown, JSON and a PNG badge) from the cards in its folder.\n",
				"`run SKILL SCRIPT [ARGS...]`", "`run-inline LANGUAGE [ARGS...]`", "For example:\n~~~\nrun report-writer scripts/report.py Ada\n~~~\n", "~~~~\nrun-inline bash\n```\necho ~~~\n```\n~~~~\n"},
			absent: []string{"Use it when the user asks"},
		},
		{
			name: "help offers only what is declared", opts: []skilltoolset.Option{exe},
			message: "hi",
			text:    []string{"Skills (5):", "`run SKILL SCRIPT [ARGS...]`"},
			absent:  []string{"run-inline", "For example"},
		},
		{
			name:    "no executor, no script tools",
			message: "run report-writer scripts/report.py",
			text:    []string{"This agent does not offer run_skill_script.", "Skills (5):", "offers no script tools"},
			absent:  []string{"Ask me"},
		},
		{
			name: "inline not offered", opts: []skilltoolset.Option{exe},
			message: "run-inline bash\n```\necho hi\n```",
			text:    []string{"This agent does not offer run_skill_inline_script.", "`run SKILL SCRIPT"},
		},
		{
			name: "a malformed command", opts: []skilltoolset.Option{exe},
			message: "run report-writer",
			text:    []string{"I could not read that: run needs a SKILL and a SCRIPT: run SKILL SCRIPT [ARGS...].\n\n", "Skills (5):"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDemoAgent(t, tt.examples, tt.opts...)
			got := summary(d.turn(genai.NewContentFromText(tt.message, genai.RoleUser)))
			require.NotEmpty(t, got)
			assert.Equal(t, append([]string{}, tt.events...), got[:len(got)-1], "events")
			text := got[len(got)-1]
			rest := text
			for _, piece := range tt.text {
				i := strings.Index(rest, piece)
				if !assert.GreaterOrEqual(t, i, 0, "the answer lacks %q (in order):\n%s", piece, text) {
					break
				}
				rest = rest[i+len(piece):]
			}
			for _, a := range tt.absent {
				assert.NotContains(t, text, a)
			}
		})
	}
}

// TestDemoInline: run-inline asks for approval through ADK's confirmation;
// an approved script runs and its file is saved, a rejected one does not.
func TestDemoInline(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprintf("approved=%v", approve), func(t *testing.T) {
			d := newDemoAgent(t, nil, skilltoolset.WithCodeExecutor(local.New()), skilltoolset.WithInlineScripts(true))
			first := d.turn(genai.NewContentFromText("run-inline bash greeting\n```bash\necho \"hi $1\" > out.txt\necho done\n```", genai.RoleUser))
			assert.Equal(t, []string{"call run_skill_inline_script", "response run_skill_inline_script <nil><nil>", "confirm"}, summary(first))
			got := summary(d.turn(confirmation(t, first, approve)))
			require.Len(t, got, 2)
			_, err := d.artifacts.Load(context.Background(), &artifact.LoadRequest{AppName: "app", UserID: "u", SessionID: d.sessionID, FileName: "out.txt"})
			if approve {
				assert.Equal(t, "response run_skill_inline_script success<nil>", got[0])
				assert.Contains(t, got[1], "Your bash script ran: success, exit code 0. Saved as artifacts: `out.txt` (version 1).\n\nstdout:\n```\ndone\n```")
				assert.NoError(t, err)
			} else {
				assert.Equal(t, "response run_skill_inline_script <nil>"+runscript.CodeConfirmationRejected, got[0])
				assert.Equal(t, "Your bash script did not run: you did not approve it.", got[1])
				assert.Error(t, err, "nothing ran, nothing was saved")
			}
		})
	}
}

func TestCatalogue(t *testing.T) {
	req := func(parts ...string) *model.LLMRequest {
		c := &genai.Content{}
		for _, p := range parts {
			c.Parts = append(c.Parts, genai.NewPartFromText(p))
		}
		return &model.LLMRequest{Config: &genai.GenerateContentConfig{SystemInstruction: c}}
	}
	adk := "Skills:\n<available_skills>\n<skill>\n<name>\na-b\n</name>\n<description>\nSays &lt;hi&gt; &amp; &#39;bye&#39; &#34;now&#34;.\n</description>\n</skill>\n<skill>\n<name>\nc\n</name>\n<description>\nd\n</description>\n</skill>\n</available_skills>\nmore"
	tests := []struct {
		name string
		req  *model.LLMRequest
		want []catalogued
	}{
		{"ADK's catalogue", req("You help.", adk), []catalogued{{"a-b", `Says <hi> & 'bye' "now".`}, {"c", "d"}}},
		{"after prose naming the tag", req("Skills are in <available_skills> below.\n\n" + adk), []catalogued{{"a-b", `Says <hi> & 'bye' "now".`}, {"c", "d"}}},
		{"an empty one", req("<available_skills>\n</available_skills>"), []catalogued{}},
		{"none", req("You help."), nil},
		{"not closed", req("<available_skills><skill><name>x</name>"), nil},
		{"not XML", req("<available_skills><skill><name>x</nme></skill></available_skills>"), nil},
		{"no instruction", &model.LLMRequest{}, nil},
		{"no request", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, catalogue(tt.req))
		})
	}
}

// FuzzCatalogue: no system instruction makes the catalogue reader fail or
// invent a skill whose name the instruction does not hold.
func FuzzCatalogue(f *testing.F) {
	f.Add("<available_skills>\n<skill>\n<name>\na\n</name>\n<description>\nb\n</description>\n</skill>\n</available_skills>")
	f.Add("<available_skills><skill><name>&lt;</name></skill></available_skills>")
	f.Add("<available_skills></available_skills>")
	f.Fuzz(func(t *testing.T, s string) {
		req := &model.LLMRequest{Config: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(s, genai.RoleUser)}}
		for _, sk := range catalogue(req) {
			if sk.Name != "" && !strings.Contains(s, sk.Name) && !strings.Contains(s, "&") {
				t.Fatalf("%q: skill %q", s, sk.Name)
			}
		}
	})
}

func TestFence(t *testing.T) {
	tests := []struct {
		s    string
		c    byte
		want string
	}{
		{"plain", '`', "```"},
		{"a ``` b", '`', "````"},
		{"`````", '`', "``````"},
		{"~~~ and ```", '~', "~~~~"},
		{"", '~', "~~~"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, fence(tt.s, tt.c), "%q", tt.s)
	}
}

func TestFirstSentence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"One. Two.", "One."},
		{"  v1.2 is out. Use it.", "v1.2 is out."},
		{"line one\nline two. x", "line one"},
		{"no stop", "no stop"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, firstSentence(tt.in), "%q", tt.in)
	}
}

// TestDemoReplyWithoutContents: a request with nothing to read gets help.
func TestDemoReplyWithoutContents(t *testing.T) {
	for _, req := range []*model.LLMRequest{nil, {}} {
		c, err := NewDemo().Reply(req)
		require.NoError(t, err)
		assert.Contains(t, c.Parts[0].Text, "No skills are loaded.")
		assert.Contains(t, c.Parts[0].Text, "offers no script tools")
	}
	assert.Equal(t, DemoName, NewDemo().Name())
}

// TestDemoReplies: the answers the runner tests do not reach, from requests
// built by hand.
func TestDemoReplies(t *testing.T) {
	var catalogueXML strings.Builder
	catalogueXML.WriteString("<available_skills>\n")
	for i := range demoListedSkills + 5 {
		fmt.Fprintf(&catalogueXML, "<skill><name>s%02d</name><description>Skill %d.</description></skill>\n", i, i)
	}
	catalogueXML.WriteString("</available_skills>")
	many := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(catalogueXML.String(), genai.RoleUser)}
	response := func(name string, resp map[string]any) *genai.Content {
		return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}}
	}
	call := func(name string, args map[string]any) *genai.Content {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}}}
	}
	ok := map[string]any{"status": "success", "exit_code": 0, "stdout": "", "stderr": "", "output_files": []any{}, "warning": "2 files not saved"}
	tests := []struct {
		name string
		req  *model.LLMRequest
		want []string // pieces of the text, in order
	}{
		{"many skills", &model.LLMRequest{Config: many, Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}},
			[]string{"Skills (25):\n", "- `s19`: Skill 19.\n- … and 5 more\n"}},
		{"another tool's response", &model.LLMRequest{Contents: []*genai.Content{call("list_skills", nil), response("list_skills", map[string]any{"skills": "x"})}},
			[]string{"`list_skills` answered."}},
		{"a response without its call", &model.LLMRequest{Contents: []*genai.Content{response(runscript.Name, ok)}},
			[]string{"`run_skill_script` ran: success, exit code 0. Warning: 2 files not saved"}},
		{"a call without a skill", &model.LLMRequest{Contents: []*genai.Content{call(runscript.Name, map[string]any{}), response(runscript.Name, ok)}},
			[]string{"`run_skill_script` ran: success"}},
		{"two calls", &model.LLMRequest{Contents: []*genai.Content{
			{Role: genai.RoleModel, Parts: []*genai.Part{
				{FunctionCall: &genai.FunctionCall{Name: runscript.Name, Args: map[string]any{"skill_name": "a", "script_path": "x.py"}}},
				{FunctionCall: &genai.FunctionCall{Name: runinline.Name, Args: map[string]any{"language": "bash"}}}}},
			{Role: genai.RoleUser, Parts: []*genai.Part{
				{FunctionResponse: &genai.FunctionResponse{Name: runscript.Name, Response: ok}},
				{FunctionResponse: &genai.FunctionResponse{Name: runinline.Name, Response: map[string]any{"error": "bad", "error_code": "INVALID_ARGUMENTS"}}}}}}},
			[]string{"`x.py` of `a` ran: success", "\n\nYour bash script did not run: INVALID_ARGUMENTS: bad"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewDemo().Reply(tt.req)
			require.NoError(t, err)
			text := c.Parts[0].Text
			rest := text
			for _, piece := range tt.want {
				i := strings.Index(rest, piece)
				if !assert.GreaterOrEqual(t, i, 0, "the answer lacks %q (in order):\n%s", piece, text) {
					break
				}
				rest = rest[i+len(piece):]
			}
		})
	}
}
