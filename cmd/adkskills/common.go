package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/internal/skillfs"
)

const (
	// appName is the ADK app name runs and chats save artifacts under.
	appName = "adkskills"
	// defaultSession is the session run and chat use, so the files of
	// every run are found by artifacts ls across invocations.
	defaultSession = "cli"
	// defaultModel is chat's Gemini model.
	defaultModel = "gemini-2.5-flash"
)

// skillsFlag registers --skills.
func skillsFlag(fs *flagSet) *string {
	return fs.String("skills", "", "the `DIR` holding skill folders (default ./skills; ./testdata/skills in a clone of "+modulePath+")")
}

// storeFlags are the flags that locate the artifact store.
type storeFlags struct {
	dir     string
	session string
}

func (s *storeFlags) register(fs *flagSet) {
	fs.StringVar(&s.dir, "artifacts", "", "the artifact store `DIR` (default $ADKSKILLS_ARTIFACTS, else $XDG_STATE_HOME/adkskills/artifacts, else ~/.local/state/adkskills/artifacts)")
	fs.StringVar(&s.session, "session", defaultSession, "the artifact session `ID`")
}

// execFlags choose and limit the executor.
type execFlags struct {
	sandbox      bool
	allowHosts   repeated
	agentSandbox string // a warm pool's name
	namespace    string
	timeout      time.Duration
	maxChars     int
	python       string
	noInstall    bool
	// oneRun: the process makes one call (run), so no sandbox is
	// prepared for a next one.
	oneRun bool
}

func (e *execFlags) register(fs *flagSet) {
	fs.BoolVar(&e.sandbox, "sandbox", false, "run scripts in the bubblewrap sandbox (no network, read-only system) instead of as plain host processes")
	fs.Var(&e.allowHosts, "allow-host", "with --sandbox, let scripts reach `HOST:PORT` (api.example.com:443, *.example.com:443, 127.0.0.1:8080) through the agent's egress proxy, and nothing else (repeatable)")
	fs.StringVar(&e.agentSandbox, "agent-sandbox", "", "run each script in a fresh pod of the agent-sandbox warm `POOL` of the Kubernetes cluster KUBECONFIG (or ~/.kube/config, or the pod's service account) names; from outside the cluster, through port-forwards")
	fs.StringVar(&e.namespace, "namespace", "", "the Kubernetes `NAMESPACE` of --agent-sandbox's warm pool (default: the kubeconfig context's, or the pod's own)")
	fs.DurationVar(&e.timeout, "timeout", codeexec.DefaultTimeout, "the time limit of one script run, a `DURATION` such as 30s or 5m")
	fs.IntVar(&e.maxChars, "max-output-chars", codeexec.DefaultMaxOutputChars, "cap stdout and stderr at `CHARS` characters each")
	fs.StringVar(&e.python, "python", "", "the Python that runs .py scripts: a `PROGRAM` in PATH or an absolute path (default python3 in PATH)")
	fs.BoolVar(&e.noInstall, "no-install", false, "do not install the dependencies scripts declare: a missing one is reported instead")
}

// table is the interpreter table --python asks for (nil: the default).
func (e *execFlags) table() codeexec.Interpreters {
	if e.python == "" {
		return nil
	}
	t := codeexec.DefaultInterpreters()
	for i := range t {
		if t[i].Language == "python" {
			t[i].Command = []string{e.python}
		}
	}
	return t
}

// check reports a flag value out of range.
func (e *execFlags) check() error {
	switch {
	case e.timeout <= 0:
		return fmt.Errorf("--timeout must be positive, got %v", e.timeout)
	case e.maxChars <= 0:
		return fmt.Errorf("--max-output-chars must be positive, got %d", e.maxChars)
	case e.sandbox && e.agentSandbox != "":
		return fmt.Errorf("--sandbox and --agent-sandbox both choose where scripts run: give one")
	case e.namespace != "" && e.agentSandbox == "":
		return fmt.Errorf("--namespace is --agent-sandbox's: give the warm pool too (--agent-sandbox POOL)")
	case len(e.allowHosts) > 0 && !e.sandbox:
		return fmt.Errorf("--allow-host needs --sandbox: without it scripts have the host's whole network")
	case len(e.allowHosts) > 0:
		if err := sandbox.New(e.sandboxOptions()...).Err(); err != nil {
			_, why, _ := strings.Cut(err.Error(), "WithEgress: ")
			return fmt.Errorf("--allow-host: %s", strings.ReplaceAll(why, "\n", "; "))
		}
	case e.agentSandbox != "":
		return checkKubeNames(e.agentSandbox, e.namespace)
	}
	return nil
}

// sandboxOptions are the sandbox's options the flags ask for.
func (e *execFlags) sandboxOptions() []sandbox.Option {
	opts := []sandbox.Option{sandbox.WithInterpreters(e.table()), sandbox.WithDependencies(!e.noInstall),
		// A probe's trial (58-86 ms) once per boot, bubblewrap and binary,
		// not once per command.
		sandbox.WithProbeCache(sandbox.DefaultProbeCache())}
	if e.oneRun {
		opts = append(opts, sandbox.WithPrepared(0))
	}
	if len(e.allowHosts) > 0 {
		opts = append(opts, sandbox.WithEgress(e.allowHosts...))
	}
	return opts
}

// skillsDir is --skills, or its default: ./skills, except in a clone of
// this repository (isThisModule), where it is ./testdata/skills, so the
// README's first command runs the example skills. A user's own repository
// with a testdata/skills folder gets ./skills.
func (c *cli) skillsDir(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if c.isThisModule() {
		if fi, err := os.Stat(c.abs(exampleSkills)); err == nil && fi.IsDir() {
			return exampleSkills
		}
	}
	return "skills"
}

// exampleSkills is where a clone of this repository keeps its skills.
var exampleSkills = filepath.Join("testdata", "skills")

// isThisModule reports whether the working directory is the root of this
// module: its go.mod declares modulePath.
func (c *cli) isThisModule() bool {
	f, err := os.Open(c.abs("go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	return goModule(io.LimitReader(f, maxGoModBytes)) == modulePath
}

const (
	// modulePath is this module's path, as its go.mod declares it.
	modulePath = "github.com/adkskills/adkskills"
	// maxGoModBytes bounds the go.mod read for its module line.
	maxGoModBytes = 64 << 10
)

// goModule returns the module path a go.mod declares, or "".
func goModule(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		path := strings.TrimSpace(rest)
		if unq, err := strconv.Unquote(path); err == nil {
			path = unq
		}
		return path
	}
	return ""
}

// errSkillsDir is a --skills folder that cannot be used: a usage error.
var errSkillsDir = errors.New("skills folder")

// openSkills opens the skills folder; the root must stay open while the
// source is used.
func (c *cli) openSkills(dir string) (*os.Root, error) {
	fi, err := os.Stat(c.abs(dir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w %s does not exist (set --skills%s)", errSkillsDir, dir, c.exampleHint(dir))
	case err != nil:
		return nil, fmt.Errorf("%w: %v", errSkillsDir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("%w %s is not a folder", errSkillsDir, dir)
	}
	if _, err := os.Stat(filepath.Join(c.abs(dir), skillfs.SkillFile)); err == nil {
		return nil, fmt.Errorf("%w %s is itself a skill: pass the folder that contains it (%s)", errSkillsDir, dir, filepath.Dir(filepath.Clean(dir)))
	}
	root, err := os.OpenRoot(c.abs(dir))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSkillsDir, err)
	}
	return root, nil
}

// exampleHint explains, when the default ./skills is missing but a
// testdata/skills folder is there, why that folder was not taken.
func (c *cli) exampleHint(dir string) string {
	if dir != "skills" {
		return ""
	}
	if fi, err := os.Stat(c.abs(exampleSkills)); err != nil || !fi.IsDir() {
		return ""
	}
	return fmt.Sprintf("; ./%s is the default only in a clone of %s", filepath.ToSlash(exampleSkills), modulePath)
}

// storeDir is --artifacts, or the per-user state folder: never the working
// directory unless asked.
func (c *cli) storeDir(flagValue string) (string, error) {
	if flagValue != "" {
		return c.abs(flagValue), nil
	}
	if d := c.env.getenv("ADKSKILLS_ARTIFACTS"); d != "" {
		return c.abs(d), nil
	}
	// The XDG specification ignores a relative XDG_STATE_HOME.
	if d := c.env.getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "adkskills", "artifacts"), nil
	}
	home := c.env.getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no home folder for the artifact store: set --artifacts or ADKSKILLS_ARTIFACTS")
		}
	}
	return filepath.Join(home, ".local", "state", "adkskills", "artifacts"), nil
}

// openStore opens the artifact store.
func (c *cli) openStore(flagValue string) (*fileartifact.Service, string, error) {
	dir, err := c.storeDir(flagValue)
	if err != nil {
		return nil, "", err
	}
	s, err := fileartifact.New(dir)
	if err != nil {
		return nil, "", fmt.Errorf("artifact store: %w", err)
	}
	return s, dir, nil
}

// executor returns the executor the flags ask for, and where it runs
// scripts; a sandbox that cannot isolate on this machine, or a warm pool
// that cannot serve a claim, is an error here, before anything runs.
func (c *cli) executor(ctx context.Context, ex *execFlags) (codeexec.Executor, string, error) {
	switch {
	case ex.agentSandbox != "":
		return c.agentSandbox(ctx, ex)
	case ex.sandbox:
		s := sandbox.New(ex.sandboxOptions()...)
		if err := s.Probe(ctx); err != nil {
			return nil, "", fmt.Errorf("--sandbox: %w", err)
		}
		return s, "in the bubblewrap sandbox", nil
	}
	return local.New(local.WithInterpreters(ex.table()), local.WithDependencies(!ex.noInstall)), "on this machine", nil
}

// logger reports what the toolset logs at level min and above (slog.LevelWarn:
// a skill left out; slog.LevelError: an executor failure, a save that
// failed) as one line each on stderr.
func (c *cli) logger(min slog.Level) *slog.Logger {
	return slog.New(&lineHandler{w: c.stderr, mu: &sync.Mutex{}, min: min})
}

// lineHandler is a slog.Handler that writes
// "adkskills: LEVEL: message key=value ..." lines.
type lineHandler struct {
	w     io.Writer
	mu    *sync.Mutex
	min   slog.Level
	attrs []slog.Attr
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("adkskills: ")
	b.WriteString(strings.ToLower(r.Level.String()))
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(r.Message, "adkskills: "))
	write := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &n
}

func (h *lineHandler) WithGroup(string) slog.Handler { return h }

// readStdin reads --stdin: a file, or "-" for the command's own stdin.
func (c *cli) readStdin(arg string, limit int) (string, error) {
	var r io.Reader
	if arg == "-" {
		r = c.stdin
	} else {
		f, err := os.Open(c.abs(arg))
		if err != nil {
			return "", fmt.Errorf("--stdin: %w", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return "", fmt.Errorf("--stdin: %w", err)
	}
	if len(data) > limit {
		return "", fmt.Errorf("--stdin: more than %d bytes: a script's stdin is limited to that", limit)
	}
	return string(data), nil
}

// humanSize formats a byte count.
func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

// workbench is what run and chat open before they build the toolset: the
// skills folder, the artifact store and the executor.
type workbench struct {
	skillsDir string
	root      *os.Root
	store     *fileartifact.Service
	storeDir  string
	exe       codeexec.Executor
	where     string // where exe runs scripts, for messages
}

// close releases what the workbench holds: the skills folder, and the
// executor's prepared sandboxes and pending workspace removals, which it
// waits for, so that a command leaves nothing for the next start's sweep.
func (wb *workbench) close() {
	wb.root.Close()
	if c, ok := wb.exe.(io.Closer); ok {
		c.Close()
	}
}

// open opens the workbench, reporting a failure on stderr and returning the
// exit status to leave with (0 on success). The caller calls wb.close.
func (c *cli) open(ctx context.Context, skillsFlag, storeFlag string, ex *execFlags) (*workbench, int) {
	wb := &workbench{skillsDir: c.skillsDir(skillsFlag)}
	var err error
	if wb.root, err = c.openSkills(wb.skillsDir); err != nil {
		c.errorf("%v", err)
		return nil, exitUsage
	}
	if wb.store, wb.storeDir, err = c.openStore(storeFlag); err == nil {
		wb.exe, wb.where, err = c.executor(ctx, ex)
	}
	if err != nil {
		wb.root.Close()
		c.errorf("%v", err)
		return nil, exitFailure
	}
	return wb, 0
}
