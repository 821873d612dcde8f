// Package confirmplugin lets a human answer a tool's confirmation request
// (run_skill_inline_script's, or any tool's that calls RequestConfirmation)
// with a plain "yes" or "no", where ADK's own clients cannot:
//
//   - ADK v1's console launcher (v1.7.0) prints only the text of events, so
//     a confirmation request shows as an empty line, and what the user types
//     next goes to the model as text. With this plugin the request's hint is
//     printed, and a "y" or "n" typed next becomes the answer. (ADK v2's
//     console asks for the answer itself; the plugin adds the hint, which it
//     does not show.)
//   - adk-web's confirmation box sends what is typed as the answer, and ADK
//     accepts only the JSON {"confirmed": true}; "yes" fails the turn. With
//     this plugin "yes" and "no" are answers too.
//
// Add it to the launcher's or the runner's plugins:
//
//	p, err := confirmplugin.New(os.Stdout)
//	...
//	cfg := &launcher.Config{
//		AgentLoader:  agent.NewSingleLoader(a),
//		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}},
//	}
//	err = full.NewLauncher().Execute(ctx, cfg, os.Args[1:])
//
// A typed answer goes to the agent the runner picks for a text message; with
// one agent that is always the agent that asked.
package confirmplugin

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"
)

// Name is the plugin's name.
const Name = "adkskills_confirm"

// New returns the plugin. Each confirmation request is printed on out (the
// console's standard output; nil prints nothing, as a web server wants).
func New(out io.Writer) (*plugin.Plugin, error) {
	c := &confirmer{out: out}
	return plugin.New(plugin.Config{
		Name:                  Name,
		OnEventCallback:       c.onEvent,
		OnUserMessageCallback: c.onUserMessage,
	})
}

type confirmer struct {
	mu  sync.Mutex // serializes printing
	out io.Writer
}

// requests are the confirmation requests among ev's function calls.
func requests(ev *session.Event) []*genai.FunctionCall {
	if ev == nil || ev.Content == nil {
		return nil
	}
	var out []*genai.FunctionCall
	for _, p := range ev.Content.Parts {
		if p.FunctionCall != nil && p.FunctionCall.Name == toolconfirmation.FunctionCallName {
			out = append(out, p.FunctionCall)
		}
	}
	return out
}

// confirmationOf reads the request's ToolConfirmation, a Go value in memory
// and a JSON object once a session service has stored it.
func confirmationOf(fc *genai.FunctionCall) toolconfirmation.ToolConfirmation {
	var tc toolconfirmation.ToolConfirmation
	if b, err := json.Marshal(fc.Args["toolConfirmation"]); err == nil {
		_ = json.Unmarshal(b, &tc)
	}
	return tc
}

// onEvent prints each confirmation request: the tool, its hint, and how to
// answer.
func (c *confirmer) onEvent(_ agent.InvocationContext, ev *session.Event) (*session.Event, error) {
	if c.out == nil {
		return nil, nil
	}
	for _, fc := range requests(ev) {
		name := "a tool"
		if orig, err := toolconfirmation.OriginalCallFrom(fc); err == nil {
			name = orig.Name
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n[approval] %s needs your approval:\n", name)
		for _, l := range strings.Split(strings.TrimRight(confirmationOf(fc).Hint, "\n"), "\n") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		b.WriteString("Answer y to run it, n to refuse.\n")
		c.mu.Lock()
		_, err := io.WriteString(c.out, b.String())
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// answer reads a yes or a no; ok is false for anything else.
func answer(s string) (yes, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes", "ok", "approve", "true":
		return true, true
	case "n", "no", "reject", "deny", "false":
		return false, true
	}
	return false, false
}

// onUserMessage turns a yes or a no into the answer ADK expects: in adk-web's
// form ({"response": "yes"}, which ADK would refuse) or as the text typed
// after a confirmation request (which ADK would hand to the model).
func (c *confirmer) onUserMessage(ctx agent.InvocationContext, msg *genai.Content) (*genai.Content, error) {
	if msg == nil {
		return nil, nil
	}
	if fixed, ok := fixWebAnswers(msg); ok {
		return fixed, nil
	}
	var text strings.Builder
	for _, p := range msg.Parts {
		if p.Text == "" || p.Thought {
			return nil, nil // not just typed text
		}
		text.WriteString(p.Text)
	}
	yes, ok := answer(text.String())
	if !ok || ctx.Session() == nil {
		return nil, nil
	}
	var last *session.Event
	for ev := range ctx.Session().Events().All() {
		last = ev
	}
	pending := requests(last)
	if len(pending) == 0 {
		return nil, nil
	}
	reply := &genai.Content{Role: genai.RoleUser}
	for _, fc := range pending {
		reply.Parts = append(reply.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
			ID:       fc.ID,
			Name:     toolconfirmation.FunctionCallName,
			Response: map[string]any{"confirmed": yes, "payload": confirmationOf(fc).Payload},
		}})
	}
	return reply, nil
}

// fixWebAnswers rewrites adk-web's answers that are a yes or a no
// ({"response": "yes"}) as {"confirmed": true}; ok reports a change. An
// answer that is already JSON is left for ADK to read.
func fixWebAnswers(msg *genai.Content) (*genai.Content, bool) {
	var fixed *genai.Content
	for i, p := range msg.Parts {
		fr := p.FunctionResponse
		if fr == nil || fr.Name != toolconfirmation.FunctionCallName || len(fr.Response) != 1 {
			continue
		}
		s, isString := fr.Response["response"].(string)
		yes, ok := answer(s)
		if !isString || !ok {
			continue
		}
		if fixed == nil {
			fixed = &genai.Content{Role: msg.Role, Parts: append([]*genai.Part(nil), msg.Parts...)}
		}
		resp := *fr
		resp.Response = map[string]any{"confirmed": yes}
		part := *p
		part.FunctionResponse = &resp
		fixed.Parts[i] = &part
	}
	return fixed, fixed != nil
}
