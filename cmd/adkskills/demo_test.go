package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/tool/toolconfirmation"

	"github.com/adkskills/adkskills/tools/runscript"
)

// restSession is one session of adkskills web --demo, driven through ADK's
// REST API as any client of the web launcher's api drives it.
type restSession struct {
	t   *testing.T
	srv *webServer
	id  string
}

func newRESTSession(t *testing.T, srv *webServer) *restSession {
	var s struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal(restCall(t, http.MethodPost, srv.url+"/api/apps/adkskills/users/user/sessions", "{}"), &s))
	require.NotEmpty(t, s.ID)
	return &restSession{t: t, srv: srv, id: s.ID}
}

// restCall sends a request and returns the body of its 200 answer.
func restCall(t *testing.T, method, u, body string) []byte {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %s", method, u, out)
	return out
}

// restEvent is what this test reads of an event of /api/run.
type restEvent struct {
	Content *struct {
		Parts []struct {
			Text         string `json:"text"`
			FunctionCall *struct {
				ID   string         `json:"id"`
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				Name     string         `json:"name"`
				Response map[string]any `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"content"`
}

// run posts one message (a JSON content) to /api/run and returns the turn's
// events as "call NAME", "response NAME STATUS|ERROR_CODE" and the texts,
// with the ID of the confirmation request the turn ended with, if any.
func (s *restSession) run(message map[string]any) (got []string, confirmationID string) {
	s.t.Helper()
	body, err := json.Marshal(map[string]any{"appName": appName, "userId": "user", "sessionId": s.id, "newMessage": message})
	require.NoError(s.t, err)
	var events []restEvent
	require.NoError(s.t, json.Unmarshal(restCall(s.t, http.MethodPost, s.srv.url+"/api/run", string(body)), &events))
	for _, ev := range events {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			switch {
			case p.FunctionCall != nil && p.FunctionCall.Name == toolconfirmation.FunctionCallName:
				confirmationID = p.FunctionCall.ID
				got = append(got, "confirm")
			case p.FunctionCall != nil:
				got = append(got, "call "+p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				r := p.FunctionResponse.Response
				got = append(got, fmt.Sprintf("response %s %v", p.FunctionResponse.Name, r["status"]))
			case p.Text != "":
				got = append(got, p.Text)
			}
		}
	}
	return got, confirmationID
}

// say posts user text.
func (s *restSession) say(text string) ([]string, string) {
	return s.run(map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}})
}

// artifact reads the latest version of an artifact through the REST API.
func (s *restSession) artifact(name string) []byte {
	s.t.Helper()
	var part struct {
		InlineData struct {
			Data string `json:"data"`
		} `json:"inlineData"`
	}
	u := fmt.Sprintf("%s/api/apps/adkskills/users/user/sessions/%s/artifacts/%s", s.srv.url, s.id, url.PathEscape(name))
	require.NoError(s.t, json.Unmarshal(restCall(s.t, http.MethodGet, u, ""), &part))
	data, err := base64.StdEncoding.DecodeString(part.InlineData.Data)
	require.NoError(s.t, err)
	return data
}

// TestDemoThroughTheRESTAPI drives adkskills web --demo, with no key, through
// ADK's REST API: a greeting, a run and its artifacts, a malformed command,
// and an inline script approved and rejected through the confirmation.
func TestDemoThroughTheRESTAPI(t *testing.T) {
	srv := startWeb(t, nil, "--demo", "--skills", testSkills(t))
	s := newRESTSession(t, srv)

	got, _ := s.say("hello")
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "I am the adkskills demo model")
	assert.Contains(t, got[0], "`report-writer`: Writes a short report about a person")
	assert.Contains(t, got[0], "run-inline LANGUAGE")
	assert.Contains(t, got[0], "For example:\n~~~\nrun node-tools scripts/echo.js\n~~~\n", "the examples come from the skills")

	got, _ = s.say("run report-writer scripts/report.py Ada")
	require.Len(t, got, 3, "%q", got)
	assert.Equal(t, []string{"call run_skill_script", "response run_skill_script success"}, got[:2])
	assert.Contains(t, got[2], "ran: success, exit code 0. Saved as artifacts: `badge.png` (version 1), `dist∕data∕summary.json` (version 1), `report.md` (version 1).")
	var names []string
	require.NoError(t, json.Unmarshal(restCall(t, http.MethodGet, srv.url+"/api/apps/adkskills/users/user/sessions/"+s.id+"/artifacts", ""), &names))
	assert.ElementsMatch(t, []string{"badge.png", runscript.ArtifactName("dist/data/summary.json"), "report.md"}, names)
	assert.Contains(t, string(s.artifact(runscript.ArtifactName("dist/data/summary.json"))), `"Ada"`)

	got, _ = s.say("run report-writer")
	require.Len(t, got, 1)
	assert.True(t, strings.HasPrefix(got[0], "I could not read that: run needs a SKILL and a SCRIPT"), got[0])

	for _, approve := range []bool{true, false} {
		file := fmt.Sprintf("inline-%v.txt", approve)
		got, id := s.say(fmt.Sprintf("run-inline bash %s\n```bash\necho made > \"$1\"\n```", file))
		require.Equal(t, []string{"call run_skill_inline_script", "response run_skill_inline_script <nil>", "confirm"}, got)
		got, _ = s.run(map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{
			"id": id, "name": toolconfirmation.FunctionCallName, "response": map[string]any{"confirmed": approve}}}}})
		require.Len(t, got, 2, "%q", got)
		if approve {
			assert.Equal(t, "response run_skill_inline_script success", got[0])
			assert.Contains(t, got[1], "Your bash script ran: success, exit code 0. Saved as artifacts: `"+file+"` (version 1).")
			assert.Equal(t, "made\n", string(s.artifact(file)))
		} else {
			assert.Equal(t, "response run_skill_inline_script <nil>", got[0])
			assert.Equal(t, "Your bash script did not run: you did not approve it.", got[1])
		}
	}
}

// TestChatDemo: chat --demo needs no key; a run-inline message goes on over
// the lines of its code block, and the approval is asked in the terminal.
func TestChatDemo(t *testing.T) {
	vars, _ := store(t)
	var stdout, stderr bytes.Buffer
	input := "hello\nrun shell-tools scripts/echo_args.sh 'a b' c\nrun-inline bash\n```\necho hi > hi.txt\necho done\n```\ny\n/quit\n"
	code := run(context.Background(), []string{"chat", "--demo", "--skills", testSkills(t)}, strings.NewReader(input), &stdout, &stderr,
		env{getenv: func(k string) string { return vars[k] }})
	assert.Equal(t, exitOK, code, stderr.String())
	assert.Empty(t, stderr.String())
	out := stdout.String()
	for _, piece := range []string{
		"adkskills chat: the demo model (no key; say hello to see what it does), skills from ",
		"you> I am the adkskills demo model",
		"you>   [call] run_skill_script {\"args\":[\"a b\",\"c\"],\"script_path\":\"scripts/echo_args.sh\",\"skill_name\":\"shell-tools\"}\n",
		"`scripts/echo_args.sh` of `shell-tools` ran: success, exit code 0.\n\nstdout:\n```\n[a b]\n[c]\n```\n",
		"you> ...> ...> ...> ...>   [call] run_skill_inline_script",
		"Run it? [y/N]   [result] run_skill_inline_script: success, exit code 0, saved hi.txt v1\n",
		"Your bash script ran: success",
	} {
		i := strings.Index(out, piece)
		if !assert.GreaterOrEqual(t, i, 0, "stdout lacks %q (in order):\n%s", piece, stdout.String()) {
			break
		}
		out = out[i+len(piece):]
	}
	o := invoke(t, invocation{vars: vars, args: []string{"artifacts", "cat", "hi.txt"}})
	assert.Equal(t, "hi\n", o.stdout)
}
