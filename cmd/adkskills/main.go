// Command adkskills runs Agent Skills' scripts exactly as an ADK Go agent
// would, checks skill folders, and browses the files runs saved.
//
// Usage:
//
//	adkskills run [flags] SKILL SCRIPT [-- ARGS...]   run a skill's script through the toolset
//	adkskills list [--skills DIR]                     skills, descriptions, scripts, problems
//	adkskills validate [--skills DIR]                 check skills against the Agent Skills rules
//	adkskills chat [--demo] [flags]                   talk to an agent that uses the skills
//	adkskills artifacts [ls | cat NAME [--version N]] the files runs saved
//	adkskills web [--demo] [flags]                    serve that agent in ADK's web UI
//	adkskills mcp [flags]                             serve the skills and scripts to MCP clients
//
// run builds the same SkillToolset an agent gets (skilltoolset.New), an
// llmagent driven by a scripted model that makes exactly one
// run_skill_script call, and ADK's real runner with a file artifact store,
// so the script is staged, limited, truncated and its files saved exactly as
// in an agent. It prints a summary (status, exit code, duration, stdout,
// stderr, each saved file with its artifact name, version and path on
// disk) or, with --json, exactly the function response the model gets. Its
// exit status mirrors the run: 0 success, the script's exit code (1..125)
// when it failed, 124 on timeout, 1 when the tool refused the call (unknown
// skill or script, ...), 2 for a usage error, 130 when interrupted.
//
// --skills defaults to ./skills; in a clone of this repository (a go.mod
// declaring github.com/adkskills/adkskills) it is ./testdata/skills. The
// artifact store defaults to $ADKSKILLS_ARTIFACTS, else
// $XDG_STATE_HOME/adkskills/artifacts, else ~/.local/state/adkskills/artifacts;
// runs of run and chat save into the session "cli" of the OS user, so each
// run adds a version that artifacts ls and cat show. run --input FILE saves a
// local file into that session and passes it in; --input-artifact passes in
// what the session already has (a name, a path, a glob such as unpacked/**).
// artifacts --app, --user and --session browse an agent's own store.
//
// web serves the agent chat talks to in ADK's web UI, on ADK's own web
// launcher and REST server (http://localhost:8080/ui/ by default), and
// answers only this machine unless --allow-remote is given. chat and web need
// Gemini credentials as the genai client reads them (GOOGLE_API_KEY or
// GEMINI_API_KEY, or Vertex AI through GOOGLE_GENAI_USE_VERTEXAI,
// GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION); without them they say what
// to set and exit 2. With --demo they need none: the model is the built-in
// demo model (model/scripted), for which a message "run SKILL SCRIPT
// [ARGS...]" is that run_skill_script call. run, chat and web export their
// traces (ADK's spans and the script runs') over OTLP when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set;
// the tool calls' arguments and results read <elided> in them unless
// --trace-content is given (docs/telemetry.md).
//
// mcp serves the skills over the Model Context Protocol to any MCP client:
// the Skills extension (SEP-2640) and run_skill_script (--inline:
// run_skill_inline_script, approved by the client's user), on stdio, or on
// streamable HTTP with --http ADDR (guarded as web is). The files runs
// write come back as resource links into the artifact store.
//
// A usage error prints its cause and one line pointing at the command's
// --help, and exits 2. Every command takes --help; adkskills --version
// prints the module version (or "(devel)" for a build from a checkout).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"google.golang.org/adk/model"

	"github.com/adkskills/adkskills/tools/runscript"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1   // a tool error, or anything that kept a command from working
	exitUsage       = 2   // a malformed command line
	exitTimeout     = 124 // the script hit its time limit (as timeout(1))
	exitMaxScript   = 125 // a script's exit code is clamped to 1..125
	exitInterrupted = 130 // SIGINT
)

// env is what the command reads from its surroundings, so tests can run it
// in-process with their own.
type env struct {
	// getenv reads an environment variable.
	getenv func(string) string
	// wd is the working directory that relative paths and the defaults
	// resolve against ("": the process's).
	wd string
	// user is the artifact store's user ID ("": the OS user name).
	user string
	// newModel returns the model of chat and web (nil: Gemini through ADK).
	newModel func(ctx context.Context, name string) (model.LLM, error)
	// kube finds the cluster of --agent-sandbox (nil: loadKube).
	kube func(getenv func(string) string) (*kubeTarget, error)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, env{getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, c *cli, args []string) int
}

var commands = []command{
	{"run", "run a skill's script as an agent would, through the toolset", runCommand},
	{"list", "list the skills, their descriptions, runnable scripts and problems", listCommand},
	{"validate", "check every skill folder against the Agent Skills rules", validateCommand},
	{"chat", "talk to an agent that can use the skills in the terminal (--demo: no key needed)", chatCommand},
	{"artifacts", "list the files runs saved (ls) or print one (cat NAME)", artifactsCommand},
	{"web", "serve an agent that uses the skills in ADK's web UI (--demo: no key needed)", webCommand},
	{"mcp", "serve the skills and their scripts to MCP clients (stdio, or HTTP)", mcpCommand},
}

// cli carries the streams and the environment of one invocation.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            env
}

// run is the whole command: it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	if e.getenv == nil {
		e.getenv = func(string) string { return "" }
	}
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, env: e}
	if len(args) == 0 {
		c.mainUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-version", "--version":
		c.printVersion()
		return exitOK
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && name == "help" {
			if cmd, ok := lookup(args[1]); ok {
				return cmd.run(ctx, c, []string{"--help"})
			}
		}
		c.mainUsage(stdout)
		return exitOK
	}
	cmd, ok := lookup(name)
	if !ok {
		c.errorf("unknown command %q", name)
		fmt.Fprintln(stderr, "Run 'adkskills --help' for the commands.")
		return exitUsage
	}
	return cmd.run(ctx, c, args[1:])
}

func lookup(name string) (command, bool) {
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return commands[i], true
}

func (c *cli) mainUsage(w io.Writer) {
	fmt.Fprintf(w, "adkskills runs Agent Skills' scripts exactly as an ADK Go agent would.\n\nUsage:\n  adkskills COMMAND [flags] [args]\n\nCommands:\n")
	for _, cmd := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintf(w, "\nRun 'adkskills COMMAND --help' for a command's flags, 'adkskills --version' for the version.\n")
}

// errorf prints one error line to stderr.
func (c *cli) errorf(format string, args ...any) {
	fmt.Fprintf(c.stderr, "adkskills: "+format+"\n", args...)
}

// usageError prints an error line and where the command's usage is to
// stderr, and returns exitUsage. The cause is the news; the usage is one
// --help away.
func (c *cli) usageError(fs *flagSet, format string, args ...any) int {
	c.errorf(format, args...)
	fmt.Fprintf(c.stderr, "Run 'adkskills %s --help' for its usage.\n", fs.Name())
	return exitUsage
}

// flagSet is a flag.FlagSet with a usage line and a description.
type flagSet struct {
	*flag.FlagSet
	synopsis string
	about    string
	// rest says what goes after "--" ("the script's own arguments"), and
	// restSynopsis how ("adkskills run SKILL SCRIPT"); "" for commands
	// that take nothing there.
	rest, restSynopsis string
}

func newFlagSet(name, synopsis, about string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, synopsis: synopsis, about: about}
}

// usage prints the usage line, the description and the flags.
func (fs *flagSet) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", fs.synopsis, fs.about)
	var listed bool
	fs.VisitAll(func(f *flag.Flag) {
		if !listed {
			fmt.Fprintf(w, "\nFlags:\n")
			listed = true
		}
		kind, usage := flag.UnquoteUsage(f)
		head := "  --" + f.Name
		if kind != "" {
			head += " " + kind
		}
		fmt.Fprintf(w, "%s\n      %s", head, usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// parse parses flags given anywhere among the positional arguments, up to a
// "--"; the arguments after "--" are returned apart. done is true when the
// command must stop with status code: --help (usage on stdout, 0) or a bad
// flag (the error and a pointer to --help on stderr, 2).
func (c *cli) parse(fs *flagSet, args []string) (pos, rest []string, code int, done bool) {
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.usage(c.stdout)
				return nil, nil, exitOK, true
			}
			return nil, nil, c.usageError(fs, "%s", flagProblem(fs, err)), true
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, rest, 0, false
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// abs resolves p against the working directory.
func (c *cli) abs(p string) string {
	if p == "" || filepath.IsAbs(p) || c.env.wd == "" {
		return p
	}
	return filepath.Join(c.env.wd, p)
}

// userID is the artifact store's user: the OS user name.
func (c *cli) userID() string {
	if c.env.user != "" {
		return c.env.user
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := c.env.getenv("USER"); u != "" {
		return u
	}
	return "user"
}

// oneLine is a terminal preview of s for chat's one-line notes: its first
// line, at most max characters, with characters that would not display as
// themselves escaped. It previews; it does not elide output (tool output
// reaching the model is capped by internal/truncate alone).
func oneLine(s string, max int) string {
	s = runscript.EscapeHidden(strings.TrimSpace(s))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// given reports whether the command line set the flag name.
func (fs *flagSet) given(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
