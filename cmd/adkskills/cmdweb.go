package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/cmd/launcher"
	weblauncher "google.golang.org/adk/cmd/launcher/web"
	"google.golang.org/adk/cmd/launcher/web/api"
	"google.golang.org/adk/cmd/launcher/web/webui"
	"google.golang.org/adk/memory"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"

	"github.com/adkskills/adkskills/plugin/confirmplugin"
)

const webAbout = `Serves an agent with the skills toolset in ADK's web UI (adk-web), on ADK's
own web launcher and REST server: open http://localhost:PORT/ui/ in a browser.
The model is Gemini; the files scripts write are saved in the artifact store
and open from the UI's artifacts panel. With --inline the model may also write
its own scripts; the UI asks you to approve each one before it runs: click
the adk_request_confirmation chip to read the script, and answer yes or no
in its box.

With --demo the model is a built-in one that needs no key and no network:
the message "run SKILL SCRIPT [ARGS...]" runs that script, "run-inline
LANGUAGE" with the code on the next lines runs that code once you approve
it, and any other message lists the skills.

The server answers only requests from this machine unless --allow-remote is
given: whoever reaches it can run the skills' scripts on this host. Press
Ctrl-C to stop it.

Needs Gemini credentials, unless --demo: GOOGLE_API_KEY or GEMINI_API_KEY
(a Gemini API key), or Vertex AI (GOOGLE_GENAI_USE_VERTEXAI=true with
GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, and application default
credentials).`

const webInstruction = "You are a helpful assistant in ADK's web UI. " +
	"Use the skills when they fit the request, run their scripts with the tools you have, " +
	"and tell the user which artifacts (files) a run saved, by name: they open in the artifacts panel."

// webAgentName is the agent's name, which the web UI shows as the app; its
// sessions' files are saved under this app in the artifact store.
const webAgentName = appName

// turnMargin is what a turn in the web UI may take besides one script run of
// the full time limit (the model's calls before and after it). ADK's web
// server cuts a reply that takes longer than its write timeouts (by default
// 15 s for /run, 120 s for the UI's /run_sse): --write-timeout, which sets
// both, defaults to --timeout plus this.
const turnMargin = 2 * time.Minute

func webCommand(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet("web", "adkskills web [flags]", webAbout)
	skills := skillsFlag(fs)
	modelName := fs.String("model", defaultModel, "the Gemini `MODEL`")
	inline := fs.Bool("inline", false, "offer run_skill_inline_script: the model may write scripts, each run only after you approve it in the UI")
	demo := fs.Bool("demo", false, "use the built-in demo model, which needs no key: a message 'run SKILL SCRIPT [ARGS...]' runs that script (implies --inline)")
	port := fs.Int("port", 8080, "serve on this TCP `PORT`")
	writeTimeout := fs.Duration("write-timeout", 0, "the longest a turn's reply may take before ADK's server cuts it, a `DURATION` (default --timeout plus 2m)")
	allowRemote := fs.Bool("allow-remote", false, "answer requests from other machines too (anyone who reaches the port can run the skills' scripts here)")
	var st storeFlags
	fs.StringVar(&st.dir, "artifacts", "", "the artifact store `DIR` (default $ADKSKILLS_ARTIFACTS, else $XDG_STATE_HOME/adkskills/artifacts, else ~/.local/state/adkskills/artifacts)")
	var ex execFlags
	ex.register(fs)
	var tf traceFlags
	tf.register(fs)
	pos, _, code, done := c.parse(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.usageError(fs, "web: unexpected argument %q", pos[0])
	}
	if err := ex.check(); err != nil {
		return c.usageError(fs, "web: %v", err)
	}
	if *port < 1 || *port > 65535 {
		return c.usageError(fs, "web: --port must be 1..65535, got %d", *port)
	}
	if *writeTimeout == 0 {
		*writeTimeout = ex.timeout + turnMargin
	}
	if *writeTimeout <= ex.timeout {
		return c.usageError(fs, "web: --write-timeout (%v) must be longer than --timeout (%v), or ADK's server cuts a turn whose script is still running", *writeTimeout, ex.timeout)
	}
	if *demo && fs.given("model") {
		return c.usageError(fs, "web: --demo is the built-in demo model: leave out --model")
	}
	if msg := c.missingCredentials("web"); msg != "" && !*demo {
		fmt.Fprint(c.stderr, msg)
		return exitUsage
	}
	wb, code := c.open(ctx, *skills, st.dir, &ex)
	if wb == nil {
		return code
	}
	defer wb.close()
	a, err := c.newAgent(ctx, wb, agentConfig{name: webAgentName, description: "An assistant that uses Agent Skills, in ADK's web UI.",
		instruction: webInstruction, model: *modelName, inline: *inline || *demo, demo: *demo, exec: ex})
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	// The UI's confirmation box takes a plain yes or no too.
	confirm, err := confirmplugin.New(nil)
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	// ADK's web launcher sets up telemetry with these, and adds adk-web's
	// own trace view, which shows content as the UI's events do.
	traceOpts, err := c.telemetryOptions(ctx, tf.content)
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	l, args := webLauncher(webOptions{port: *port, writeTimeout: *writeTimeout, allowRemote: *allowRemote})
	cfg := &launcher.Config{
		SessionService:   session.InMemoryService(),
		ArtifactService:  wb.store,
		MemoryService:    memory.InMemoryService(),
		AgentLoader:      agent.NewSingleLoader(a),
		PluginConfig:     runner.PluginConfig{Plugins: []*plugin.Plugin{confirm}},
		TelemetryOptions: traceOpts,
	}
	fmt.Fprintf(c.stdout, "adkskills web: open http://localhost:%d/ui/ (%s, skills from %s, scripts run %s, files saved to %s). Ctrl-C to stop.\n",
		*port, modelLabel(*modelName, *demo), wb.skillsDir, wb.where, wb.storeDir)
	if err := serveWeb(ctx, l, cfg, args); err != nil {
		c.errorf("web: %v", err)
		return exitFailure
	}
	return exitOK
}

// webOptions configure ADK's web launcher for adkskills web.
type webOptions struct {
	port         int
	writeTimeout time.Duration
	allowRemote  bool
}

// webLauncher is ADK's web launcher with its REST API under /api and its web
// UI under /ui/, and the command line that configures it: both of ADK's
// write timeouts (the server's, which bounds /run, and /run_sse's) are
// o.writeTimeout, and the UI calls the API on its own origin. A sublauncher
// of ours (webFixes) mends what would break on the way.
func webLauncher(o webOptions) (launcher.SubLauncher, []string) {
	timeout := o.writeTimeout.String()
	args := []string{"--port", strconv.Itoa(o.port), "--write-timeout", timeout,
		"api", "--sse-write-timeout", timeout, "--webui_address", fmt.Sprintf("localhost:%d", o.port),
		"webui", "--api_server_address", "/api",
		webFixesKeyword}
	return weblauncher.NewLauncher(api.NewLauncher(), webui.NewLauncher(), webFixes{allowRemote: o.allowRemote}), args
}

// serveWeb parses args as ADK's web launcher's command line and runs it until
// ctx ends.
func serveWeb(ctx context.Context, l launcher.SubLauncher, cfg *launcher.Config, args []string) error {
	rest, err := l.Parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("the web launcher left arguments unparsed: %q", rest)
	}
	return l.Run(ctx, cfg)
}

// webFixesKeyword activates webFixes on the web launcher's command line.
const webFixesKeyword = "adkskills"

// webFixes is a web sublauncher of ours that wraps every route of ADK's web
// server, whichever sublauncher registered it:
//   - unless allowRemote, it answers only this machine: a request must come
//     from a loopback address and name a loopback host (so a DNS-rebinding
//     page cannot reach it), and a browser's request must come from a
//     loopback origin (so another site's page cannot drive the agent);
//   - it drops the field functionCallEventId from the bodies of /run and
//     /run_sse. adk-web sends it with the answer to a confirmation request,
//     and ADK Go's REST server refuses unknown fields (400), so without this
//     no inline script could be approved in the web UI.
type webFixes struct {
	allowRemote bool
}

// Keyword implements weblauncher.Sublauncher.
func (webFixes) Keyword() string { return webFixesKeyword }

// Parse implements weblauncher.Sublauncher; it has no flags.
func (webFixes) Parse(args []string) ([]string, error) { return args, nil }

// CommandLineSyntax implements weblauncher.Sublauncher.
func (webFixes) CommandLineSyntax() string { return "" }

// SimpleDescription implements weblauncher.Sublauncher.
func (webFixes) SimpleDescription() string {
	return "answers only this machine, and lets adk-web answer confirmation requests"
}

// UserMessage implements weblauncher.Sublauncher.
func (webFixes) UserMessage(string, func(v ...any)) {}

// SetupSubrouters implements weblauncher.Sublauncher.
func (f webFixes) SetupSubrouters(router *mux.Router, _ *launcher.Config) error {
	router.Use(func(next http.Handler) http.Handler {
		return localOnly("web", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/run_sse") || strings.HasSuffix(r.URL.Path, "/run")) {
				if err := dropField(r, "functionCallEventId"); err != nil {
					http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
					return
				}
			}
			next.ServeHTTP(w, r)
		}), f.allowRemote)
	})
	return nil
}

// dropField removes the top-level field name from r's JSON object body,
// leaving every other byte of a body without it as it was.
func dropField(r *http.Request, name string) error {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) == nil {
		if _, ok := fields[name]; ok {
			delete(fields, name)
			if body, err = json.Marshal(fields); err != nil {
				return err
			}
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return nil
}
