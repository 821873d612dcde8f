package confirmplugin_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/cmd/launcher"
	"google.golang.org/adk/cmd/launcher/console"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/plugin/confirmplugin"
	"github.com/adkskills/adkskills/skilltoolset"
)

// inlineCall asks to run a script that prints a marker.
var inlineCall = scripted.Call("run_skill_inline_script", map[string]any{"language": "bash", "script": "echo inline-ran"})

// report ends the turn saying what the model was given last: the tool's
// status or error code, or the user's text.
func report(req *model.LLMRequest) (*genai.Content, error) {
	last := req.Contents[len(req.Contents)-1]
	for _, p := range last.Parts {
		switch {
		case p.FunctionResponse != nil && p.FunctionResponse.Response["error_code"] != nil:
			return genai.NewContentFromText(fmt.Sprintf("model saw %v", p.FunctionResponse.Response["error_code"]), genai.RoleModel), nil
		case p.FunctionResponse != nil:
			return genai.NewContentFromText(fmt.Sprintf("model saw %v: %v", p.FunctionResponse.Response["status"], p.FunctionResponse.Response["stdout"]), genai.RoleModel), nil
		case p.Text != "":
			return genai.NewContentFromText(fmt.Sprintf("model saw the text %q", p.Text), genai.RoleModel), nil
		}
	}
	return nil, fmt.Errorf("nothing to report")
}

// newAgent is an agent with inline scripts and the scripted model.
func newAgent() (agent.Agent, error) {
	ts, err := skilltoolset.New(context.Background(), skilltoolset.NewFSSource(fstest.MapFS{}),
		skilltoolset.WithCodeExecutor(local.New()), skilltoolset.WithInlineScripts(true))
	if err != nil {
		return nil, err
	}
	return llmagent.New(llmagent.Config{Name: "confirm_test", Model: scripted.New("m", inlineCall, report), Toolsets: []tool.Toolset{ts}})
}

// textOf is the text of the turn's events.
func textOf(events []*session.Event) string {
	var b strings.Builder
	for _, ev := range events {
		if ev.Content != nil {
			for _, p := range ev.Content.Parts {
				b.WriteString(p.Text)
			}
		}
	}
	return b.String()
}

// webAnswer is adk-web's answer to a confirmation request: what the user
// typed, under "response".
func webAnswer(typed string) func(*genai.FunctionCall) *genai.Content {
	return func(fc *genai.FunctionCall) *genai.Content {
		return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
			ID: fc.ID, Name: toolconfirmation.FunctionCallName, Response: map[string]any{"response": typed}}}}}
	}
}

// typed is text typed after the request, as the console launcher sends it.
func typed(text string) func(*genai.FunctionCall) *genai.Content {
	return func(*genai.FunctionCall) *genai.Content { return genai.NewContentFromText(text, genai.RoleUser) }
}

func TestAnswers(t *testing.T) {
	tests := []struct {
		name     string
		noPlugin bool
		reply    func(*genai.FunctionCall) *genai.Content
		want     string // the model's last word
		err      string // the turn fails with it
	}{
		{name: "y typed on the console", reply: typed("y\n"), want: "model saw success: inline-ran\n"},
		{name: "YES typed on the console", reply: typed(" YES "), want: "model saw success: inline-ran\n"},
		{name: "n typed on the console", reply: typed("n\n"), want: "model saw CONFIRMATION_REJECTED"},
		{name: "other text goes to the model", reply: typed("what does it do?"), want: `model saw the text "what does it do?"`},
		{name: "yes in the web UI's box", reply: webAnswer("yes"), want: "model saw success: inline-ran\n"},
		{name: "No in the web UI's box", reply: webAnswer("No"), want: "model saw CONFIRMATION_REJECTED"},
		{name: "JSON in the web UI's box", reply: webAnswer(`{"confirmed": true}`), want: "model saw success: inline-ran\n"},
		{name: "without the plugin, y goes to the model", noPlugin: true, reply: typed("y"), want: `model saw the text "y"`},
		{name: "without the plugin, yes in the box fails the turn", noPlugin: true, reply: webAnswer("yes"), err: "failed unmarshalling confirmation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var plugins []*plugin.Plugin
			if !tt.noPlugin {
				p, err := confirmplugin.New(&out)
				require.NoError(t, err)
				plugins = append(plugins, p)
			}
			sessions := session.InMemoryService()
			a, err := newAgent()
			require.NoError(t, err)
			r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: sessions,
				ArtifactService: artifact.InMemoryService(), PluginConfig: runner.PluginConfig{Plugins: plugins}})
			require.NoError(t, err)
			created, err := sessions.Create(context.Background(), &session.CreateRequest{AppName: "app", UserID: "u"})
			require.NoError(t, err)
			send := func(msg *genai.Content) ([]*session.Event, error) {
				var events []*session.Event
				for ev, err := range r.Run(context.Background(), "u", created.Session.ID(), msg, agent.RunConfig{}) {
					if err != nil {
						return events, err
					}
					events = append(events, ev)
				}
				return events, nil
			}
			events, err := send(genai.NewContentFromText("run a script", genai.RoleUser))
			require.NoError(t, err)
			var request *genai.FunctionCall
			for _, ev := range events {
				for _, p := range ev.Content.Parts {
					if p.FunctionCall != nil && p.FunctionCall.Name == toolconfirmation.FunctionCallName {
						request = p.FunctionCall
					}
				}
			}
			require.NotNil(t, request, "the turn ends with a confirmation request")
			if !tt.noPlugin {
				assert.Contains(t, out.String(), "[approval] run_skill_inline_script needs your approval:")
				assert.Contains(t, out.String(), "    echo inline-ran")
				assert.Contains(t, out.String(), "Answer y to run it, n to refuse.")
			}

			events, err = send(tt.reply(request))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, textOf(events))
		})
	}
}

// consoleHelper is the environment variable that makes the test binary run
// ADK's console launcher (with the plugin when its value is "plugin").
const consoleHelper = "CONFIRMPLUGIN_CONSOLE"

// TestMain runs ADK's console launcher when the test binary is started as
// its helper process.
func TestMain(m *testing.M) {
	if mode := os.Getenv(consoleHelper); mode != "" {
		os.Exit(runConsole(mode == "plugin"))
	}
	os.Exit(m.Run())
}

// runConsole runs ADK's console launcher over the test agent on this
// process's stdin and stdout.
func runConsole(withPlugin bool) int {
	a, err := newAgent()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := &launcher.Config{AgentLoader: agent.NewSingleLoader(a), ArtifactService: artifact.InMemoryService()}
	if withPlugin {
		p, err := confirmplugin.New(os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cfg.PluginConfig = runner.PluginConfig{Plugins: []*plugin.Plugin{p}}
	}
	// full.NewLauncher() runs exactly this sublauncher for "console".
	l := console.NewLauncher()
	if _, err := l.Parse(nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := l.Run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// consoleWant is what the console shows, and does not show, for one run of
// the console launcher.
type consoleWant struct {
	want, notWant []string
}

// TestConsoleLauncher runs ADK's console launcher (full.NewLauncher()'s
// console mode) in a child process, types a request and then "y". Without
// the plugin, ADK v1's console shows the request as nothing and hands "y" to
// the model as text (plainConsole says what each ADK major does); with it
// the hint is shown and "y" runs the script.
func TestConsoleLauncher(t *testing.T) {
	tests := []struct {
		mode string
		consoleWant
	}{
		{"plain", plainConsole},
		{"plugin", consoleWant{[]string{"[approval] run_skill_inline_script needs your approval:", "echo inline-ran", "model saw success: inline-ran"}, []string{"model saw the text"}}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), consoleHelper+"="+tt.mode)
			cmd.Dir = t.TempDir()
			cmd.Stdin = strings.NewReader("run a script\ny\n")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
			t.Logf("the console showed:\n%s", stdout.String())
			for _, w := range tt.want {
				assert.Contains(t, stdout.String(), w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, stdout.String(), w)
			}
		})
	}
}
