package deps

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// pythonProbe prints what identifies an interpreter (what decides which
// wheels fit it), its PEP 508 marker environment, its installed
// distributions and whether it has pip. It runs isolated (-I): no
// PYTHONPATH, no user site, as a script sees it.
const pythonProbe = `import sys, os, json, platform, sysconfig, importlib.util
def fmt(v):
    s = "%d.%d.%d" % (v.major, v.minor, v.micro)
    if v.releaselevel != "final":
        s += v.releaselevel[0] + str(v.serial)
    return s
d = {"executable": os.path.realpath(sys.executable), "full": platform.python_version(),
     "cache_tag": sys.implementation.cache_tag or "", "soabi": sysconfig.get_config_var("SOABI") or "",
     "platform": sysconfig.get_platform(),
     "pip": importlib.util.find_spec("pip") is not None}
d["markers"] = {"os_name": os.name, "sys_platform": sys.platform, "platform_machine": platform.machine(),
    "platform_python_implementation": platform.python_implementation(), "platform_release": platform.release(),
    "platform_system": platform.system(), "platform_version": platform.version(),
    "python_version": ".".join(platform.python_version_tuple()[:2]), "python_full_version": platform.python_version(),
    "implementation_name": sys.implementation.name, "implementation_version": fmt(sys.implementation.version)}
dists = {}
try:
    import importlib.metadata as md
    for dist in md.distributions():
        name = dist.metadata["Name"]
        if name:
            dists.setdefault(name, dist.version)
except Exception:
    pass
d["dists"] = dists
print(json.dumps(d))
`

// pythonInfo is what the probe found.
type pythonInfo struct {
	Executable string            `json:"executable"`
	Full       string            `json:"full"`
	CacheTag   string            `json:"cache_tag"`
	SOABI      string            `json:"soabi"`
	Platform   string            `json:"platform"`
	Pip        bool              `json:"pip"`
	Markers    map[string]string `json:"markers"`
	Dists      map[string]string `json:"dists"`
}

// identity is what an environment's key takes from the interpreter: its
// real path, version and ABI (not the kernel's release, which markers
// carry and which changes with every update).
func (p *pythonInfo) identity() string {
	return strings.Join([]string{p.Executable, p.Full, p.CacheTag, p.SOABI, p.Platform}, "\x00")
}

// unsatisfied lists the requirements of d that apply to this interpreter
// and that its installed distributions do not satisfy (the name and the
// version; extras and hashes are not checked).
func (p *pythonInfo) unsatisfied(reqs []Requirement) []string {
	installed := make(map[string]string, len(p.Dists))
	for name, v := range p.Dists {
		installed[normalizeName(name)] = v
	}
	var out []string
	for _, r := range reqs {
		if !r.applies(p.Markers) {
			continue
		}
		if v, ok := installed[r.Name]; !ok || !r.satisfiedBy(v) {
			out = append(out, r.String())
		}
	}
	return out
}

// interpEntry remembers one interpreter's probe while its file does not
// change.
type interpEntry struct {
	mu    sync.Mutex
	stamp string
	py    *pythonInfo
	node  *nodeInfo
}

// entry returns the cache entry of the program at path and its current
// stamp (identity, size and time of the file).
func (s *Store) entry(path string) (*interpEntry, string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	stamp := fmt.Sprintf("%d %d %v", fi.Size(), fi.ModTime().UnixNano(), fileIdentity(fi))
	s.interpMu.Lock()
	defer s.interpMu.Unlock()
	e := s.interps[path]
	if e == nil {
		e = &interpEntry{}
		s.interps[path] = e
	}
	return e, stamp, nil
}

// python probes the interpreter at path once per change of its file.
func (s *Store) python(ctx context.Context, path string) (*pythonInfo, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("interpreter path %q is not absolute", path)
	}
	e, stamp, err := s.entry(path)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.py != nil && e.stamp == stamp {
		return e.py, nil
	}
	out, err := probe(ctx, path, s.installerEnv(nil), "-I", "-c", pythonProbe)
	if err != nil {
		return nil, err
	}
	info := &pythonInfo{}
	if err := json.Unmarshal(out, info); err != nil || info.Full == "" {
		return nil, fmt.Errorf("unexpected answer %q", truncatedLine(out))
	}
	e.py, e.node, e.stamp = info, nil, stamp
	return info, nil
}

// probe runs path with args, the PATH of env alone, and returns its
// stdout.
func probe(ctx context.Context, path string, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{"PATH=" + lookupIn(env, "PATH"), "LC_ALL=C.UTF-8", "PYTHONIOENCODING=utf-8"}
	cmd.Dir = "/"
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &limitedBuilder{b: &stderr, n: maxOutputChars}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// limitedBuilder keeps the first n bytes written to it.
type limitedBuilder struct {
	b *strings.Builder
	n int
}

func (l *limitedBuilder) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// truncatedLine shows the start of an unexpected answer.
func truncatedLine(b []byte) string {
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// resolvePython returns the environment of a Python declaration.
func (s *Store) resolvePython(ctx context.Context, d *Declaration, in Interpreter) (*Env, error) {
	if d.requiresPython == nil && d.empty() {
		return &Env{Declaration: d}, nil
	}
	info, err := s.python(ctx, in.Path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &InstallError{Tool: "python", Packages: names(d), Reason: fmt.Sprintf("the interpreter %s could not be inspected: %v", in.Path, err)}
	}
	if d.requiresPython != nil && !d.requiresPython.contains(info.Full) {
		return nil, &InstallError{Tool: "python", Packages: names(d),
			Reason: fmt.Sprintf("%s requires Python %s, and %s is Python %s", d.Source, d.RequiresPython, in.Path, info.Full)}
	}
	if d.empty() {
		return &Env{Declaration: d}, nil
	}
	reqs, cons := requirementsText(d)
	key := keyOf(Python, info.identity(), reqs, cons, fmt.Sprint(s.cfg.AllowSourceBuilds))
	missing := func() (*Env, error) {
		left := info.unsatisfied(d.Requirements)
		switch {
		case len(left) == 0:
			return &Env{Declaration: d}, nil
		case s.cfg.NoInstall:
			return nil, &InstallError{Tool: "pip", Packages: left, Reason: fmt.Sprintf("not installed for %s, and installation is off", in.Path)}
		}
		return nil, nil
	}
	build := func(tmp string) (*envMeta, error) {
		return s.pipInstall(ctx, d, info, in.Path, tmp, reqs, cons)
	}
	env, err := s.acquire(ctx, key, missing, build)
	if err != nil {
		return nil, err
	}
	if env.Key != "" {
		env.PythonPath = []string{filepath.Join(env.Dir, sitePackages)}
		env.Binds = []string{env.Dir}
	}
	env.Declaration = d
	return env, nil
}

// names lists a declaration's packages.
func names(d *Declaration) []string {
	var out []string
	for _, r := range d.Requirements {
		out = append(out, r.String())
	}
	return append(out, d.Packages...)
}

// requirementsText is the requirements file pip installs a declaration
// from, in normal form (sorted, so that the same set makes the same key),
// and its constraints file ("" when none).
func requirementsText(d *Declaration) (reqs, cons string) {
	lines := func(rs []Requirement) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.line())
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	var head []string
	if d.Pre {
		head = append(head, "--pre")
	}
	if len(d.Constraints) > 0 {
		cons = strings.Join(lines(d.Constraints), "\n") + "\n"
		head = append(head, "-c constraints.txt")
	}
	return strings.Join(append(head, lines(d.Requirements)...), "\n") + "\n", cons
}

// pipDrop are the pip settings that would send the install elsewhere than
// the store's folder; pipSet quiets what pip says beside the point.
var (
	pipDrop = []string{"PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER", "PIP_REQUIRE_VIRTUALENV", "PIP_EDITABLE", "PIP_SRC", "PYTHONHOME"}
	pipSet  = []string{"PIP_ROOT_USER_ACTION=ignore", "PIP_PROGRESS_BAR=off", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_NO_WARN_SCRIPT_LOCATION=1"}
)

// pipInstall installs a declaration into tmp/site with the interpreter's
// own pip and the operator's configuration.
func (s *Store) pipInstall(ctx context.Context, d *Declaration, info *pythonInfo, python, tmp, reqs, cons string) (*envMeta, error) {
	if !info.Pip {
		return nil, &InstallError{Tool: "pip", Packages: names(d),
			Reason: fmt.Sprintf("%s has no pip (Debian and Ubuntu: apt-get install python3-pip; or name another Python)", python)}
	}
	if err := os.WriteFile(filepath.Join(tmp, "requirements.txt"), []byte(reqs), 0o444); err != nil {
		return nil, err
	}
	if cons != "" {
		if err := os.WriteFile(filepath.Join(tmp, "constraints.txt"), []byte(cons), 0o444); err != nil {
			return nil, err
		}
	}
	argv := []string{python, "-m", "pip", "install", "--target", filepath.Join(tmp, sitePackages),
		"--no-input", "--disable-pip-version-check", "-r", filepath.Join(tmp, "requirements.txt")}
	if !s.cfg.AllowSourceBuilds {
		argv = append(argv, "--only-binary=:all:")
	}
	out := newOutputScan(pipLineMatters)
	if err := s.run(ctx, tmp, argv, s.installerEnv(pipDrop, pipSet...), out); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		pkgs, reason := pipFailure(out.kept(), names(d), !s.cfg.AllowSourceBuilds)
		if reason == "" {
			reason = "pip failed: " + exitDetail(err)
		}
		return nil, &InstallError{Tool: "pip", Packages: pkgs, Reason: reason, Output: capOutput(out.text())}
	}
	return &envMeta{Language: Python, Interpreter: python + " " + info.Full, Declared: names(d)}, nil
}

// What pip's output says, line by line.
var (
	pipNoMatch  = regexp.MustCompile(`No matching distribution found for (\S+)`)
	pipVersions = regexp.MustCompile(`Could not find a version that satisfies the requirement (\S+) \(from versions: ([^)]*)\)`)
	pipOtherPy  = regexp.MustCompile(`Ignored the following versions that require a different python version: (.*)`)
	pipNetwork  = regexp.MustCompile(`NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Connection refused|Network is unreachable|No route to host|ConnectTimeoutError|ReadTimeoutError|ProxyError|Max retries exceeded`)
	pipTLS      = regexp.MustCompile(`CERTIFICATE_VERIFY_FAILED|certificate verify failed|SSLError`)
)

// pipLineMatters keeps the lines pipFailure reads.
func pipLineMatters(line string) bool {
	return strings.HasPrefix(line, "ERROR:") || strings.Contains(line, "No module named pip") ||
		pipNetwork.MatchString(line) || pipTLS.MatchString(line)
}

// pipFailure reads pip's error lines: the packages they name (else
// declared) and the reason ("" when none is recognised).
func pipFailure(lines, declared []string, wheelsOnly bool) ([]string, string) {
	var pkgs, reasons []string
	var network, tls, noPip, conflict, hashes bool
	var versions, otherPy string
	for _, l := range lines {
		if m := pipNoMatch.FindStringSubmatch(l); m != nil && !slices.Contains(pkgs, m[1]) {
			pkgs = append(pkgs, m[1])
		}
		if m := pipVersions.FindStringSubmatch(l); m != nil {
			versions = m[2]
			if !slices.Contains(pkgs, m[1]) {
				pkgs = append(pkgs, m[1])
			}
		}
		if m := pipOtherPy.FindStringSubmatch(l); m != nil {
			otherPy = m[1]
		}
		network = network || pipNetwork.MatchString(l)
		tls = tls || pipTLS.MatchString(l)
		noPip = noPip || strings.Contains(l, "No module named pip")
		conflict = conflict || strings.Contains(l, "ResolutionImpossible") || strings.Contains(l, "conflicting dependencies")
		hashes = hashes || strings.Contains(l, "DO NOT MATCH THE HASHES") || strings.Contains(l, "hashes are required")
	}
	switch {
	case noPip:
		reasons = append(reasons, "the interpreter has no pip (Debian and Ubuntu: apt-get install python3-pip)")
	case tls:
		reasons = append(reasons, "no index reachable: its TLS certificate is not trusted (PIP_CERT, pip.conf's cert)")
	case network:
		reasons = append(reasons, "no index reachable (network or proxy error; offline machines: PIP_NO_INDEX=1 and PIP_FIND_LINKS=<wheelhouse>)")
	case conflict:
		reasons = append(reasons, "the declared versions conflict with each other or with what they depend on")
	case hashes:
		reasons = append(reasons, "a downloaded file does not match its --hash")
	case versions != "":
		r := "no matching version (available: " + versions + ")"
		if wheelsOnly {
			r += "; only wheels are installed, never a source build"
		}
		reasons = append(reasons, r)
	}
	if otherPy != "" {
		reasons = append(reasons, "versions for another Python only: "+otherPy)
	}
	if len(pkgs) == 0 {
		pkgs = declared
	}
	return pkgs, strings.Join(reasons, "; ")
}
