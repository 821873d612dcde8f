package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/internal/execenv"
	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// sandboxHost is what a probe found on this machine.
type sandboxHost struct {
	bwrap, setpriv, prlimit string // absolute host paths, visible in the sandbox
	// sh and env are the prepared sandboxes' waiter (see waiter_linux.go):
	// absolute host paths, visible in the sandbox, or "" when this host
	// has none there (nothing is prepared).
	sh, env   string
	version   string // "0.8.0"
	root      bool   // the agent runs as root: nested bwrap + setpriv
	sys       layout
	tools     []bind   // tools outside the system directories
	procMasks []string // the procMasks this kernel has
}

// layout is the read-only system part of the sandbox's file system.
type layout struct {
	dirs  []string    // host directories bound read-only at the same path
	links [][2]string // symbolic links recreated: {target, path}
}

// systemDirs are bound read-only when they are directories, recreated when
// they are symbolic links (merged /usr), skipped when missing. /usr and
// /etc must exist.
var systemDirs = []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// systemLayout reads the host's system directories.
func systemLayout() (layout, error) {
	var l layout
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil && (d == "/usr" || d == "/etc"):
			return l, err
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return l, err
			}
			l.links = append(l.links, [2]string{target, d})
		case fi.IsDir():
			l.dirs = append(l.dirs, d)
		}
	}
	return l, nil
}

// lexicallyVisible reports whether p lies under a bound system directory
// or a recreated link.
func (l *layout) lexicallyVisible(p string) bool {
	for _, d := range l.dirs {
		if inDir(p, d) {
			return true
		}
	}
	for _, ln := range l.links {
		if inDir(p, ln[1]) {
			return true
		}
	}
	return false
}

// visible reports whether the host path p exists in the sandbox as it does
// on the host through the system layout alone.
func (l *layout) visible(p string) bool {
	if !l.lexicallyVisible(p) {
		return false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	for _, d := range l.dirs {
		if inDir(real, d) {
			return true
		}
	}
	return false
}

// mountArgs are the bwrap arguments for the system layout, the kernel's
// and the private mounts (/proc, /dev, /dev/shm and /tmp: "--tmpfs DIR",
// "--bind SRC DIR" and the like, with their options), and the binds (sorted by
// dst, parents before children), all after those mounts so that none hides
// a bind under it, creating the missing parent directories of each bind
// 0755.
func (l *layout) mountArgs(binds []bind, tmpfs []string) []string {
	var a []string
	for _, d := range l.dirs {
		a = append(a, "--ro-bind", d, d)
	}
	for _, ln := range l.links {
		a = append(a, "--symlink", ln[0], ln[1])
	}
	a = append(a, tmpfs...)
	var mounted []string // their mount points
	for i, v := range tmpfs {
		switch {
		case (v == "--tmpfs" || v == "--dev" || v == "--proc") && i+1 < len(tmpfs):
			mounted = append(mounted, tmpfs[i+1])
		case v == "--bind" && i+2 < len(tmpfs):
			mounted = append(mounted, tmpfs[i+2])
		}
	}
	made := map[string]bool{}
	var done []string
	for _, b := range binds {
		var parents []string
		for p := filepath.Dir(b.dst); p != "/" && !made[p] && !l.lexicallyVisible(p) && !withinAny(p, done) && !slices.Contains(mounted, p); p = filepath.Dir(p) {
			parents = append(parents, p)
		}
		for _, p := range slices.Backward(parents) {
			a = append(a, "--perms", "0755", "--dir", p)
			made[p] = true
		}
		a = append(a, "--ro-bind", b.src, b.dst)
		done = append(done, b.dst)
	}
	return a
}

// inDir reports whether p is dir or inside it (both clean and absolute).
func inDir(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func withinAny(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return inDir(p, d) })
}

// makeBinds resolves dsts into binds sorted by dst, dropping duplicates and
// paths already visible through a bind of a parent.
func makeBinds(dsts []string) ([]bind, error) {
	var out []bind
	dsts = slices.Clone(dsts)
	for i, d := range dsts {
		dsts[i] = filepath.Clean(d)
	}
	slices.Sort(dsts)
	for _, d := range slices.Compact(dsts) {
		src, err := filepath.EvalSymlinks(d)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(b bind) bool {
			rel, err := filepath.Rel(b.dst, d)
			return err == nil && inDir(d, b.dst) && inDir(src, filepath.Join(b.src, rel))
		}) {
			continue
		}
		out = append(out, bind{src: src, dst: d})
	}
	return out, nil
}

// minBwrap is the oldest bubblewrap with every option the sandbox uses
// (--disable-userns, --size, --perms for --tmpfs).
var minBwrap = []int{0, 8, 0}

// probe finds the tools, reads the layout, and runs a trial sandbox.
func (s *Executor) probe(ctx context.Context) (*sandboxHost, error) {
	h := &sandboxHost{root: isRoot()}
	name := s.bwrap
	if name == "" {
		name = "bwrap"
	}
	var err error
	if h.bwrap, err = exec.LookPath(name); err != nil {
		return nil, fmt.Errorf("%w: bubblewrap (%s) not found: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora/RHEL: dnf install bubblewrap) or point WithBwrapPath at it: %v",
			codeexec.ErrSandboxUnavailable, name, err)
	}
	if h.bwrap, err = filepath.Abs(h.bwrap); err != nil {
		return nil, fmt.Errorf("%w: %v", codeexec.ErrSandboxUnavailable, err)
	}
	out, err := exec.CommandContext(ctx, h.bwrap, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s --version: %v: install bubblewrap 0.8.0 or later", codeexec.ErrSandboxUnavailable, h.bwrap, err)
	}
	h.version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap"))
	if v := parseVersion(h.version); v != nil && slices.Compare(v, minBwrap) < 0 {
		return nil, fmt.Errorf("%w: bubblewrap %s is too old: the sandbox needs 0.8.0 or later (--disable-userns, --size); upgrade bubblewrap", codeexec.ErrSandboxUnavailable, h.version)
	}
	tools := []struct {
		dst  *string
		name string
		need bool
	}{{&h.prlimit, "prlimit", true}, {&h.setpriv, "setpriv", h.root}}
	for _, t := range tools {
		if !t.need {
			continue
		}
		p, err := exec.LookPath(t.name)
		if err == nil {
			p, err = filepath.Abs(p)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s not found: install util-linux (it provides prlimit and setpriv): %v", codeexec.ErrSandboxUnavailable, t.name, err)
		}
		*t.dst = p
	}
	if h.sys, err = systemLayout(); err != nil {
		return nil, fmt.Errorf("%w: system layout: %v", codeexec.ErrSandboxUnavailable, err)
	}
	h.sh, h.env = waiterTools(h.sys)
	var extra []string
	for _, p := range []string{h.bwrap, h.prlimit, h.setpriv} {
		if p != "" && !h.sys.visible(p) {
			extra = append(extra, p)
		}
	}
	if h.tools, err = makeBinds(extra); err != nil {
		return nil, fmt.Errorf("%w: %v", codeexec.ErrSandboxUnavailable, err)
	}
	for _, m := range procMasks {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() {
			h.procMasks = append(h.procMasks, m)
		}
	}
	key := s.probeKey(h)
	if s.probeCached(key) {
		return h, nil // the interpreters are inspected at the first run
	}
	if err := s.trial(ctx, h); err != nil {
		return nil, err
	}
	s.rememberProbe(key)
	s.warm(ctx, h)
	return h, nil
}

// waiterTools returns the host's /bin/sh and env when the sandbox's system
// directories show them (sys.visible), else "", "".
func waiterTools(sys layout) (sh, env string) {
	env, err := exec.LookPath("env")
	if err == nil {
		env, err = filepath.Abs(env)
	}
	if err != nil || !sys.visible(shPath) || !sys.visible(env) {
		return "", ""
	}
	return shPath, env
}

// shPath is the POSIX shell's path.
const shPath = "/bin/sh"

// warm inspects the interpreters of the table now, so that asking a Python
// for its prefix does not eat into the first runs' time limits. Errors are
// left for the runs to report.
func (s *Executor) warm(ctx context.Context, h *sandboxHost) {
	table := s.cfg.Interpreters()
	env := host.BuildEnv(host.Dirs{}, os.Getenv("PATH"), s.cfg.EnvLayers()...)
	for _, in := range table {
		if len(in.Command) == 0 || (strings.Contains(in.Command[0], "/") && !filepath.IsAbs(in.Command[0])) {
			continue // empty, or relative to a skill
		}
		if prefix, err := host.ResolveInterpreter(in.Command, env, "/"); err == nil {
			_, _ = s.interpreter(ctx, h, prefix[0], env)
		}
	}
}

// trials counts the trial sandboxes this process ran.
var trials atomic.Int64

// trialScript prints what the trial checks: the uid, the effective
// capabilities, no_new_privs and the seccomp mode, the network interfaces,
// and whether the file system is the sandbox's (the workspace at
// /workspace, the host's path to it absent). It writes a file whose owner
// the host checks.
const trialScript = `id -u
grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status
sed -n 's/^ *\([^:]*\):.*/if \1/p' /proc/net/dev
test -d /workspace/skill && echo ws
test -e "$1" || echo private
(echo > /workspace/skill/owner) 2>/dev/null
exit 0
`

// trial runs trialScript in a sandbox exactly as a run would (the same
// launcher, the same command line, the same filter) and checks that it
// isolates.
func (s *Executor) trial(ctx context.Context, h *sandboxHost) error {
	trials.Add(1)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, err := host.NewWorkspace(s.cfg.WorkspaceParent(), codeexec.DefaultSkillName)
	if err != nil {
		return fmt.Errorf("%w: trial workspace: %v", codeexec.ErrSandboxUnavailable, err)
	}
	defer ws.Remove()
	l := &sandboxLauncher{s: s, h: h, trial: true}
	if err := l.Prepare(ws); err != nil {
		return fmt.Errorf("%w: trial workspace: %v", codeexec.ErrSandboxUnavailable, err)
	}
	p := &host.Plan{WS: ws, Argv: []string{"/bin/sh", "-c", trialScript, "sh", ws.Root}, HostPATH: execenv.DefaultPATH}
	p.Env = p.EnvAt(ws.Under(ws.Dir))
	p.ExecEnv = p.Env
	cmd, err := l.Command(ctx, p)
	if err != nil {
		return fmt.Errorf("%w: bubblewrap %s: %v", codeexec.ErrSandboxUnavailable, h.version, err)
	}
	res, err := host.Run(ctx, cmd, nil, 4096, time.Second, l.Started)
	ferr := l.Finish(res)
	switch {
	case err != nil:
		return fmt.Errorf("%w: bubblewrap %s: %v", codeexec.ErrSandboxUnavailable, h.version, err)
	case res.ExitCode == 0:
		// The trial ran (whatever bubblewrap said): what it saw decides.
		if problems := s.trialProblems(h, l.user, ws, res.Stdout.Text); len(problems) > 0 {
			return fmt.Errorf("%w: a trial sandbox with %s did not isolate: %s; output %q, stderr %q",
				codeexec.ErrSandboxUnavailable, h.bwrap, strings.Join(problems, "; "), res.Stdout.Text, firstLine(res.Stderr.Text))
		}
		return ferr
	case ferr != nil:
		return ferr
	}
	return fmt.Errorf("%w: bubblewrap %s could not start a sandbox (exit %d): %s: %s",
		codeexec.ErrSandboxUnavailable, h.version, res.ExitCode, firstLine(res.Stderr.Text), diagnose(res.Stderr.Text))
}

// trialProblems lists what the trial's output (and the file it wrote in
// ws) shows the sandbox failed to do.
func (s *Executor) trialProblems(h *sandboxHost, u runUser, ws *host.Workspace, out string) []string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var problems []string
	if len(lines) == 0 || lines[0] == "0" || strings.HasPrefix(lines[0], "CapEff") {
		problems = append(problems, "the script ran as root")
	}
	field := func(name string) string {
		for _, l := range lines {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if v := field("CapEff"); strings.Trim(v, "0") != "" || v == "" {
		problems = append(problems, "the script kept capabilities (CapEff "+v+")")
	}
	if v := field("NoNewPrivs"); v != "1" {
		problems = append(problems, "no_new_privs is not set")
	}
	if v := field("Seccomp"); v != "2" && !s.noFilter {
		problems = append(problems, fmt.Sprintf("the seccomp filter is not installed (Seccomp %q): this kernel must support seccomp filters", v))
	}
	var ifaces []string
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "if "); ok {
			ifaces = append(ifaces, v)
		}
	}
	if !s.network && !slices.Equal(ifaces, []string{"lo"}) {
		problems = append(problems, fmt.Sprintf("the network is not isolated (interfaces %v)", ifaces))
	}
	if !slices.Contains(lines, "ws") || !slices.Contains(lines, "private") {
		problems = append(problems, "the file system is not private")
	}
	// Seen from the host, what the script writes belongs to the
	// unprivileged user, never to root.
	want := os.Geteuid()
	if h.root {
		want = u.uid
	}
	if fi, err := os.Lstat(filepath.Join(ws.Skill, "owner")); err != nil {
		problems = append(problems, "the script could not write its workspace")
	} else if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != want || st.Uid == 0 {
		problems = append(problems, fmt.Sprintf("the script's files belong to uid %d on the host, want %d", st.Uid, want))
	}
	return problems
}

// diagnose turns bubblewrap's complaint into what to do about it.
func diagnose(stderr string) string {
	has := func(subs ...string) bool {
		return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(stderr, sub) })
	}
	switch {
	case has("Unknown option", "requires --unshare-user"):
		return "this bubblewrap lacks options the sandbox uses: upgrade to bubblewrap 0.8.0 or later"
	case has("namespace", "uid map", "gid map", "No permissions", "unshare", "Operation not permitted"):
		return "bubblewrap could not create its namespaces. " + usernsHints()
	case has("setpriv:", "prlimit:"):
		return "check that util-linux's setpriv and prlimit work on this machine"
	case has("Can't find source path", "Can't mount", "Can't bind", "Can't create", "Can't chdir", "Permission denied"):
		return "bubblewrap could not build the sandbox's file system: the workspace directory (WithWorkspaceDir) and the interpreters must be reachable by the user bubblewrap runs as"
	}
	return "if this is about namespaces: " + usernsHints()
}

// usernsSysctls are the kernel settings that can forbid unprivileged user
// namespaces, with the value that allows them.
var usernsSysctls = []struct {
	file, name, allow string
	forbids           func(v string) bool
}{
	{"/proc/sys/user/max_user_namespaces", "user.max_user_namespaces", "15000", func(v string) bool { return v == "0" }},
	{"/proc/sys/kernel/unprivileged_userns_clone", "kernel.unprivileged_userns_clone", "1", func(v string) bool { return v == "0" }},
	{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "kernel.apparmor_restrict_unprivileged_userns", "0", func(v string) bool { return v == "1" }},
}

// usernsHints names the sysctl that forbids user namespaces on this
// machine, or says where else to look.
func usernsHints() string {
	var bad, seen []string
	for _, c := range usernsSysctls {
		b, err := os.ReadFile(c.file)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		seen = append(seen, c.name+"="+v)
		if c.forbids(v) {
			bad = append(bad, fmt.Sprintf("sysctl %s is %s: run `sysctl -w %s=%s` (and persist it in /etc/sysctl.d)", c.name, v, c.name, c.allow))
		}
	}
	if len(bad) > 0 {
		return "Unprivileged user namespaces are disabled: " + strings.Join(bad, "; ")
	}
	return fmt.Sprintf("Check that unprivileged user namespaces are enabled: sysctl user.max_user_namespaces must be > 0, "+
		"kernel.unprivileged_userns_clone 1 and kernel.apparmor_restrict_unprivileged_userns 0 where they exist (here: %s); "+
		"inside a container, the container must allow unshare(2) and mount(2) (Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined)",
		strings.Join(seen, ", "))
}

// parseVersion parses "0.8.0" (nil when it cannot).
func parseVersion(v string) []int {
	var out []int
	for _, f := range strings.Split(v, ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return "(no message)"
}

// interpView is how one interpreter is shown in the sandbox.
type interpView struct {
	exe   string   // the path to run (host path = sandbox path)
	binds []string // host paths to bind read-only at the same path
}

// runView is a run's view of the host: the interpreter to run, the binds,
// and the sandbox's PATH.
type runView struct {
	exe   string
	binds []bind
	path  string
}

// env is the environment of p's run as the sandbox shows it: its folders
// under /workspace, v's PATH.
func (v *runView) env(p *host.Plan) []string {
	q := *p
	q.HostPATH = v.path
	return q.EnvAt(p.WS.Under(sandboxWorkspace))
}

// view works out what a run must see: its interpreter and the other
// interpreters of the table (so a bash script can call python3), the
// operator's read-only paths, and a PATH of directories that exist in the
// sandbox.
func (s *Executor) view(ctx context.Context, h *sandboxHost, p *host.Plan) (*runView, error) {
	g := viewGuard{ws: p.WS}
	g.home, _ = os.UserHomeDir()
	v := &runView{}
	var dsts, pathDirs []string
	add := func(iv interpView) {
		dsts = append(dsts, iv.binds...)
		if len(iv.binds) > 0 {
			pathDirs = append(pathDirs, filepath.Dir(iv.exe))
		}
	}

	exe := p.Argv[0]
	if rel, err := filepath.Rel(p.WS.Dir, exe); err == nil && inDir(exe, p.WS.Dir) {
		v.exe = filepath.Join(sandboxWorkspace, rel) // staged with the skill
	} else {
		iv, err := s.interpreter(ctx, h, exe, p.ExecEnv)
		if err != nil {
			return nil, fmt.Errorf("%w: sandbox: interpreter %s: %w", codeexec.ErrStart, exe, err)
		}
		for _, d := range iv.binds {
			if err := g.interpreter(d); err != nil {
				return nil, fmt.Errorf("%w: sandbox: interpreter %s needs %s, which %v; install it elsewhere or configure it by another path", codeexec.ErrStart, exe, d, err)
			}
		}
		v.exe = iv.exe
		add(iv)
	}
	for _, iv := range s.tableViews(ctx, h, p, g) {
		add(iv)
	}
	// With the network on, name resolution needs resolv.conf, which is
	// often a link out of /etc (systemd-resolved, NetworkManager).
	if s.network && !h.sys.visible(resolvConf) {
		if real, err := filepath.EvalSymlinks(resolvConf); err == nil && g.shared(real) == nil {
			dsts = append(dsts, real)
		}
	}
	// The run's own read-only folders (its dependency environment).
	for _, d := range p.Binds {
		if err := g.shared(d); err != nil {
			return nil, fmt.Errorf("%w: sandbox: %s, which the run needs, %v", codeexec.ErrStart, d, err)
		}
		dsts = append(dsts, d)
	}
	for _, b := range s.readOnly {
		if err := g.shared(b.src); err != nil {
			return nil, fmt.Errorf("%w: WithReadOnlyPaths(%q) resolves to %s, which %v", codeexec.ErrInvalidConfig, b.dst, b.src, err)
		}
	}
	binds, err := makeBinds(dsts)
	if err != nil {
		return nil, fmt.Errorf("%w: sandbox: %w", codeexec.ErrInvalidRequest, err)
	}
	v.binds = append(append(slices.Clone(h.tools), binds...), s.readOnly...)
	slices.SortFunc(v.binds, func(a, b bind) int { return strings.Compare(a.dst, b.dst) })
	v.path = sandboxPATH(h, p.HostPATH, pathDirs, v.binds)
	return v, nil
}

// viewGuard refuses what a run's binds may never show.
type viewGuard struct {
	ws   *host.Workspace
	home string // the agent's home directory, or ""
}

// shared refuses a bind that would show "/" or the workspaces (this run's
// and its siblings').
func (g viewGuard) shared(d string) error {
	d = filepath.Clean(d)
	switch {
	case d == "/":
		return fmt.Errorf("would show the whole host file system")
	case inDir(g.ws.Root, d):
		return fmt.Errorf("would show the workspaces under %s", d)
	}
	return nil
}

// interpreter also refuses, for an interpreter, the whole home directory
// of the agent (a prefix inside it, like pyenv's, is fine).
func (g viewGuard) interpreter(d string) error {
	if err := g.shared(d); err != nil {
		return err
	}
	if g.home != "" && inDir(filepath.Clean(g.home), filepath.Clean(d)) {
		return fmt.Errorf("would show the agent's home directory %s", g.home)
	}
	return nil
}

// tableViews are the views of the table's interpreters that can be shown,
// best effort: a missing node must not stop a python run.
func (s *Executor) tableViews(ctx context.Context, h *sandboxHost, p *host.Plan, g viewGuard) []interpView {
	table := s.cfg.Interpreters()
	var out []interpView
	for _, in := range table {
		prefix, err := host.ResolveInterpreter(in.Command, p.ExecEnv, p.WS.Skill)
		if err != nil || inDir(prefix[0], p.WS.Root) {
			continue
		}
		iv, err := s.interpreter(ctx, h, prefix[0], p.ExecEnv)
		if err != nil || slices.ContainsFunc(iv.binds, func(d string) bool { return g.interpreter(d) != nil }) {
			continue
		}
		out = append(out, iv)
	}
	return out
}

// sandboxPATH is the sandbox's PATH: the directories of the interpreters
// bound outside the system (where a version manager's shims stood on the
// host), then the host PATH entries that exist in the sandbox.
func sandboxPATH(h *sandboxHost, hostPATH string, pathDirs []string, binds []bind) string {
	if hostPATH == "" {
		hostPATH = execenv.DefaultPATH
	}
	for _, d := range filepath.SplitList(hostPATH) {
		if filepath.IsAbs(d) {
			d = filepath.Clean(d)
			if h.sys.visible(d) || slices.ContainsFunc(binds, func(b bind) bool { return inDir(d, b.dst) }) {
				pathDirs = append(pathDirs, d)
			}
		}
	}
	var seen []string
	for _, d := range pathDirs {
		if !slices.Contains(seen, d) {
			seen = append(seen, d)
		}
	}
	if len(seen) == 0 {
		return execenv.DefaultPATH
	}
	return strings.Join(seen, string(filepath.ListSeparator))
}

// resolvConf is the resolver configuration a sandbox with the network on
// needs to see.
const resolvConf = "/etc/resolv.conf"

// pythonName matches interpreters asked for their prefixes.
var pythonName = regexp.MustCompile(`^(python|pypy)[0-9.]*$`)

// pythonProbe prints the interpreter's executable and its prefixes (a
// virtual environment's and its base installation's), one per line; it
// runs on Python 2.7 too.
const pythonProbe = `import sys
for v in (sys.executable, sys.prefix, sys.exec_prefix, getattr(sys, "base_prefix", sys.prefix), getattr(sys, "base_exec_prefix", sys.exec_prefix)):
    print(v)
`

// interpreter returns how the host interpreter at path is shown in the
// sandbox, computing it once per path (and pyenv selection). A Python is
// asked where its installation is (its prefixes are bound: the standard
// library lives there); a pyenv shim is replaced by the interpreter it
// runs. Anything else is bound as the single file it resolves to. What the
// system layout already shows is not bound again.
func (s *Executor) interpreter(ctx context.Context, h *sandboxHost, path string, env []string) (interpView, error) {
	pyenvRoot, _ := host.LookupEnv(env, "PYENV_ROOT")
	pyenvVersion, _ := host.LookupEnv(env, "PYENV_VERSION")
	key := path + "\x00" + pyenvRoot + "\x00" + pyenvVersion
	s.state.interpMu.Lock()
	if s.state.interps == nil {
		s.state.interps = map[string]*interpEntry{}
	}
	e := s.state.interps[key]
	if e == nil {
		e = &interpEntry{}
		s.state.interps[key] = e
	}
	s.state.interpMu.Unlock()
	// One computation per key, however many runs start at once; a failure
	// is not remembered.
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return e.iv, nil
	}
	iv, err := s.inspect(ctx, h, path, pyenvRoot, pyenvVersion, env)
	if err != nil {
		return iv, err
	}
	e.iv, e.done = iv, true
	return iv, nil
}

// interpEntry caches one interpreter's view.
type interpEntry struct {
	mu   sync.Mutex
	done bool
	iv   interpView
}

// inspect works out an interpreter's view (see interpreter).
func (s *Executor) inspect(ctx context.Context, h *sandboxHost, path, pyenvRoot, pyenvVersion string, env []string) (interpView, error) {
	iv := interpView{exe: path}
	cands := []string{path}
	if pythonName.MatchString(filepath.Base(path)) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, "-E", "-s", "-B", "-c", pythonProbe)
		cmd.Env = []string{"PATH=" + orDefaultPATH(host.LookupEnv(env, "PATH"))}
		for _, kv := range [][2]string{{"PYENV_ROOT", pyenvRoot}, {"PYENV_VERSION", pyenvVersion}} {
			if kv[1] != "" {
				cmd.Env = append(cmd.Env, kv[0]+"="+kv[1])
			}
		}
		cmd.Dir = "/"
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.Output()
		if err != nil {
			return iv, fmt.Errorf("asking it for its prefix: %w", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 5 {
			return iv, fmt.Errorf("asking it for its prefix: unexpected output %q", out)
		}
		if filepath.Base(filepath.Dir(path)) == "shims" && filepath.IsAbs(lines[0]) {
			iv.exe = lines[0]
		}
		cands = nil
		for _, l := range lines[1:] {
			if filepath.IsAbs(l) {
				cands = append(cands, filepath.Clean(l))
			}
		}
		if !withinAny(iv.exe, cands) {
			cands = append(cands, iv.exe)
		}
	}
	for _, c := range cands {
		if !h.sys.visible(c) {
			iv.binds = append(iv.binds, c)
		}
	}
	return iv, nil
}

// orDefaultPATH returns v, or execenv.DefaultPATH when v is empty.
func orDefaultPATH(v string, _ bool) string {
	if v == "" {
		return execenv.DefaultPATH
	}
	return v
}
