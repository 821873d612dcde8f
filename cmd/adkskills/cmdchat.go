package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/tools/runscript"
)

const chatAbout = `Starts an interactive agent in the terminal: ADK's runner with a Gemini
model, the skills toolset and the artifact store. It prints the model's
text and one line per tool call and result. With --inline the model may
also write its own scripts; each one is shown to you and runs only if you
answer y. Type /quit or press Ctrl-D to leave.

With --demo the model is a built-in one that needs no key and no network:
the message "run SKILL SCRIPT [ARGS...]" runs that script, "run-inline
LANGUAGE" followed by the code in a ` + "```" + ` block (typed over several lines)
runs that code once you approve it, and any other message lists the skills.

Needs Gemini credentials, unless --demo: GOOGLE_API_KEY or GEMINI_API_KEY (a
Gemini API key from https://aistudio.google.com/apikey), or Vertex AI
(GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and
GOOGLE_CLOUD_LOCATION, and application default credentials).`

const chatInstruction = "You are a helpful assistant working in the user's terminal. " +
	"Use the skills when they fit the request, run their scripts with the tools you have, " +
	"and tell the user which artifacts (files) a run saved, by name."

func chatCommand(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet("chat", "adkskills chat [flags]", chatAbout)
	skills := skillsFlag(fs)
	modelName := fs.String("model", defaultModel, "the Gemini `MODEL`")
	inline := fs.Bool("inline", false, "offer run_skill_inline_script: the model may write scripts, each run only after you approve it")
	demo := fs.Bool("demo", false, "use the built-in demo model, which needs no key: a message 'run SKILL SCRIPT [ARGS...]' runs that script (implies --inline)")
	var st storeFlags
	st.register(fs)
	var ex execFlags
	ex.register(fs)
	var tf traceFlags
	tf.register(fs)
	pos, _, code, done := c.parse(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.usageError(fs, "chat: unexpected argument %q", pos[0])
	}
	if err := ex.check(); err != nil {
		return c.usageError(fs, "chat: %v", err)
	}
	if *demo && fs.given("model") {
		return c.usageError(fs, "chat: --demo is the built-in demo model: leave out --model")
	}
	if msg := c.missingCredentials("chat"); msg != "" && !*demo {
		io.WriteString(c.stderr, msg)
		return exitUsage
	}
	wb, code := c.open(ctx, *skills, st.dir, &ex)
	if wb == nil {
		return code
	}
	defer wb.close()
	a, err := c.newAgent(ctx, wb, agentConfig{name: "adkskills_chat", description: "A terminal assistant that uses Agent Skills.",
		instruction: chatInstruction, model: *modelName, inline: *inline || *demo, demo: *demo, exec: ex})
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	stop, err := c.startTelemetry(ctx, tf.content)
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	defer stop()
	dir, store, storeDir := wb.skillsDir, wb.store, wb.storeDir
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: sessions, ArtifactService: store})
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	userID := c.userID()
	if _, err := sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: st.session}); err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	fmt.Fprintf(c.stdout, "adkskills chat: %s, skills from %s, scripts run %s, files saved to %s (session %q). /quit or Ctrl-D to leave.\n",
		modelLabel(*modelName, *demo), dir, wb.where, storeDir, st.session)
	return c.chatLoop(ctx, r, userID, st.session, *demo)
}

// chatLoop reads the user's lines and runs a turn for each (and one more
// for each answer to a confirmation request) until /quit, /exit, the end
// of input or an interrupt. For the demo model, a message that is not
// complete yet (scripted.NeedsMore: a run-inline command before its code, a
// code block not closed) goes on over the next lines.
func (c *cli) chatLoop(ctx context.Context, r *runner.Runner, userID, sessionID string, demo bool) int {
	in := bufio.NewReader(c.stdin)
	for {
		fmt.Fprint(c.stdout, "you> ")
		line, readErr := in.ReadString('\n')
		for demo && readErr == nil && scripted.NeedsMore(line) {
			fmt.Fprint(c.stdout, "...> ")
			var more string
			more, readErr = in.ReadString('\n')
			line += more
		}
		text := strings.TrimSpace(line)
		if text == "/quit" || text == "/exit" || (text == "" && readErr != nil) {
			fmt.Fprintln(c.stdout)
			return exitOK
		}
		if text == "" {
			continue
		}
		msg := genai.NewContentFromText(text, genai.RoleUser)
		for msg != nil && ctx.Err() == nil {
			pending, err := c.chatTurn(ctx, r, userID, sessionID, msg)
			if err != nil {
				c.errorf("%s", oneLine(err.Error(), 300))
				break
			}
			msg = c.confirm(in, pending)
		}
		if ctx.Err() != nil {
			fmt.Fprintln(c.stdout)
			return exitInterrupted
		}
		if readErr != nil {
			return exitOK
		}
	}
}

// chatTurn runs one turn and prints it: the model's text, and one line per
// tool call and result. It returns the confirmation requests the turn ended
// with.
func (c *cli) chatTurn(ctx context.Context, r *runner.Runner, userID, sessionID string, msg *genai.Content) ([]*genai.FunctionCall, error) {
	var pending []*genai.FunctionCall
	for ev, err := range r.Run(ctx, userID, sessionID, msg, agent.RunConfig{}) {
		if err != nil {
			return nil, err
		}
		if ev.Content == nil || ev.Partial {
			continue
		}
		waiting := len(ev.Actions.RequestedToolConfirmations) > 0
		for _, p := range ev.Content.Parts {
			switch {
			case p.FunctionCall != nil && p.FunctionCall.Name == toolconfirmation.FunctionCallName:
				pending = append(pending, p.FunctionCall)
			case p.FunctionCall != nil:
				args, _ := json.Marshal(p.FunctionCall.Args)
				fmt.Fprintf(c.stdout, "  [call] %s %s\n", p.FunctionCall.Name, oneLine(string(args), 160))
			case p.FunctionResponse != nil:
				note := resultNote(p.FunctionResponse.Response)
				if waiting {
					note = "waiting for your approval"
				}
				fmt.Fprintf(c.stdout, "  [result] %s: %s\n", p.FunctionResponse.Name, note)
			case p.Text != "" && !p.Thought:
				fmt.Fprintln(c.stdout, strings.TrimRight(p.Text, "\n"))
			}
		}
	}
	return pending, nil
}

// resultNote is the one-line summary of a tool's response.
func resultNote(resp map[string]any) string {
	res, err := runscript.ParseResponse(resp)
	if err != nil { // not a script tool's answer (list_skills, load_skill, ...)
		if msg, ok := resp["error"]; ok {
			return "error: " + oneLine(fmt.Sprint(msg), 200)
		}
		return "ok"
	}
	if res.Failed() {
		return fmt.Sprintf("%s: %s", res.ErrorCode, oneLine(res.Error, 200))
	}
	note := fmt.Sprintf("%s, exit code %d", res.Status, res.ExitCode)
	var saved []string
	for _, f := range res.OutputFiles {
		if f.Artifact != "" {
			saved = append(saved, fmt.Sprintf("%s v%d", f.Artifact, f.Version))
		}
	}
	if len(saved) > 0 {
		note += fmt.Sprintf(", saved %s", strings.Join(saved, ", "))
	}
	if len(res.DeletedFiles) > 0 {
		names := make([]string, len(res.DeletedFiles))
		for i, f := range res.DeletedFiles {
			names[i] = f.Name
		}
		note += fmt.Sprintf(", deleted %s", oneLine(strings.Join(names, ", "), 200))
	}
	if res.Warning != "" {
		note += "; warning: " + oneLine(res.Warning, 120)
	}
	return note
}

// confirm asks the human about each confirmation request and returns the
// message that answers them (nil when there is none).
func (c *cli) confirm(in *bufio.Reader, calls []*genai.FunctionCall) *genai.Content {
	if len(calls) == 0 {
		return nil
	}
	reply := &genai.Content{Role: genai.RoleUser}
	for _, fc := range calls {
		var tc toolconfirmation.ToolConfirmation
		if b, err := json.Marshal(fc.Args["toolConfirmation"]); err == nil {
			_ = json.Unmarshal(b, &tc)
		}
		name := "a tool"
		if orig, err := toolconfirmation.OriginalCallFrom(fc); err == nil {
			name = orig.Name
		}
		fmt.Fprintf(c.stdout, "  [approval] %s needs your approval:\n", name)
		for _, l := range strings.Split(strings.TrimRight(tc.Hint, "\n"), "\n") {
			fmt.Fprintf(c.stdout, "    %s\n", l)
		}
		fmt.Fprint(c.stdout, "Run it? [y/N] ")
		answer, err := in.ReadString('\n')
		answer = strings.ToLower(strings.TrimSpace(answer))
		ok := err == nil && (answer == "y" || answer == "yes")
		if err != nil {
			fmt.Fprintln(c.stdout)
		}
		if !ok {
			fmt.Fprintln(c.stdout, "  [approval] rejected")
		}
		reply.Parts = append(reply.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
			ID:       fc.ID,
			Name:     toolconfirmation.FunctionCallName,
			Response: map[string]any{"confirmed": ok, "payload": tc.Payload},
		}})
	}
	return reply
}
