package deps

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Node: a skill's package.json and its lock file, installed with npm ci
// --ignore-scripts into the environment's node_modules.

// npmProject is a skill's package.json with its lock file.
type npmProject struct {
	packageJSON, lock []byte
	lockName          string
	// hosts are the hosts of the lock's "resolved" URLs other than the
	// public registry's (which npm maps to the configured registry): each
	// must be the operator's registry.
	hosts []string
}

// publicRegistry is the registry npm rewrites to the configured one
// (replace-registry-host's default).
const publicRegistry = "registry.npmjs.org"

// npmNameRE is a package name, scoped or not.
var npmNameRE = regexp.MustCompile(`^(@[A-Za-z0-9~][A-Za-z0-9._~-]*/)?[A-Za-z0-9~][A-Za-z0-9._~-]*$`)

// npmRangeRE is a registry version range or dist-tag: what a dependency
// may say (no URL, path, git or alias to elsewhere).
var npmRangeRE = regexp.MustCompile(`^[A-Za-z0-9.*^~<>=|+ -]*$`)

// declaredNode reads the nearest package.json and its lock file.
func declaredNode(skill fs.FS, script string) (*Declaration, error) {
	file, err := nearest(skill, script, "package.json")
	if err != nil || file == "" {
		return nil, err
	}
	data, err := readBounded(skill, file)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDeclaration, file, err)
	}
	var pj struct {
		Dependencies         map[string]string `json:"dependencies"`
		OptionalDependencies map[string]string `json:"optionalDependencies"`
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDeclaration, file, err)
	}
	d := &Declaration{Language: Node, Source: file}
	for _, m := range []map[string]string{pj.Dependencies, pj.OptionalDependencies} {
		for name, spec := range m {
			if err := checkNpmDependency(name, spec); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrDeclaration, file, err)
			}
			d.Packages = append(d.Packages, name+"@"+spec)
		}
	}
	if len(d.Packages) == 0 {
		return nil, nil
	}
	slices.Sort(d.Packages)
	d.Packages = slices.Compact(d.Packages)
	p := &npmProject{packageJSON: data}
	dir := path.Dir(file)
	for _, name := range []string{"npm-shrinkwrap.json", "package-lock.json"} {
		if b, err := readBounded(skill, path.Join(dir, name)); err == nil {
			p.lock, p.lockName = b, name
			break
		}
	}
	if p.lock == nil {
		return nil, fmt.Errorf("%w: %s declares dependencies but has no package-lock.json beside it (npm ci installs from the lock file: run npm install once and ship package-lock.json)", ErrDeclaration, file)
	}
	if p.hosts, err = checkLock(p.lock); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDeclaration, path.Join(dir, p.lockName), err)
	}
	d.npm = p
	return d, nil
}

// checkNpmDependency refuses a dependency that is not a registry package
// at a version range or tag.
func checkNpmDependency(name, spec string) error {
	if !npmNameRE.MatchString(name) {
		return fmt.Errorf("dependency name %q is not a package name", name)
	}
	target := spec
	if rest, ok := strings.CutPrefix(spec, "npm:"); ok { // an alias to another registry package
		at := strings.LastIndexByte(rest, '@')
		if at <= 0 || !npmNameRE.MatchString(rest[:at]) {
			return fmt.Errorf("dependency %s: alias %q does not name a registry package", name, spec)
		}
		target = rest[at+1:]
	}
	if !npmRangeRE.MatchString(target) {
		return fmt.Errorf("dependency %s: %q is not a version range of the registry (URLs, paths, git and file: are not allowed: the operator's registry chooses where packages come from)", name, spec)
	}
	return nil
}

// checkLock refuses a lock file that links or fetches from elsewhere than
// the registry, and returns the hosts other than the public registry's it
// fetches from.
func checkLock(data []byte) ([]string, error) {
	var lock struct {
		LockfileVersion int `json:"lockfileVersion"`
		Packages        map[string]struct {
			Resolved string `json:"resolved"`
			Link     bool   `json:"link"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		return nil, err
	}
	if lock.LockfileVersion < 2 {
		return nil, fmt.Errorf("lockfileVersion %d: regenerate it with npm 7 or later", lock.LockfileVersion)
	}
	var hosts []string
	for key, p := range lock.Packages {
		if key == "" {
			continue
		}
		if !strings.HasPrefix(key, "node_modules/") && !strings.Contains(key, "/node_modules/") {
			return nil, fmt.Errorf("package %q is not under node_modules (workspaces are not installed)", key)
		}
		if p.Link {
			return nil, fmt.Errorf("package %q is a link to a folder", key)
		}
		if p.Resolved == "" {
			continue
		}
		u, err := url.Parse(p.Resolved)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("package %q is resolved to %q, not to a registry", key, p.Resolved)
		}
		if u.Host != publicRegistry && !slices.Contains(hosts, u.Host) {
			hosts = append(hosts, u.Host)
		}
	}
	slices.Sort(hosts)
	return hosts, nil
}

// nodeProbe prints what identifies a Node (what decides which native
// builds fit it).
const nodeProbe = `console.log(JSON.stringify({exe: require("fs").realpathSync(process.execPath), version: process.version, modules: process.versions.modules, platform: process.platform, arch: process.arch}))`

// nodeInfo is what the probe found.
type nodeInfo struct {
	Exe      string `json:"exe"`
	Version  string `json:"version"`
	Modules  string `json:"modules"`
	Platform string `json:"platform"`
	Arch     string `json:"arch"`
}

func (n *nodeInfo) identity() string {
	return strings.Join([]string{n.Exe, n.Version, n.Modules, n.Platform, n.Arch}, "\x00")
}

// node probes the Node at path once per change of its file.
func (s *Store) node(ctx context.Context, path string) (*nodeInfo, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("interpreter path %q is not absolute", path)
	}
	e, stamp, err := s.entry(path)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.node != nil && e.stamp == stamp {
		return e.node, nil
	}
	out, err := probe(ctx, path, s.installerEnv(nil), "-e", nodeProbe)
	if err != nil {
		return nil, err
	}
	info := &nodeInfo{}
	if err := json.Unmarshal(out, info); err != nil || info.Version == "" {
		return nil, fmt.Errorf("unexpected answer %q", truncatedLine(out))
	}
	e.node, e.py, e.stamp = info, nil, stamp
	return info, nil
}

// resolveNode returns the environment of a package.json.
func (s *Store) resolveNode(ctx context.Context, d *Declaration, in Interpreter) (*Env, error) {
	info, err := s.node(ctx, in.Path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &InstallError{Tool: "node", Packages: d.Packages, Reason: fmt.Sprintf("the interpreter %s could not be inspected: %v", in.Path, err)}
	}
	key := keyOf(Node, info.identity(), strings.Join(d.Packages, "\n"), string(d.npm.lock))
	missing := func() (*Env, error) {
		if s.cfg.NoInstall {
			return nil, &InstallError{Tool: "npm", Packages: d.Packages, Reason: "not installed, and installation is off"}
		}
		return nil, nil
	}
	build := func(tmp string) (*envMeta, error) {
		return s.npmInstall(ctx, d, info, tmp)
	}
	env, err := s.acquire(ctx, key, missing, build)
	if err != nil {
		return nil, err
	}
	env.NodePath = []string{filepath.Join(env.Dir, nodeModules)}
	env.Binds = []string{env.Dir}
	env.Declaration = d
	return env, nil
}

// npmDrop are the npm settings that would install elsewhere than the
// environment's folder or run the packages' scripts.
var (
	npmDrop = []string{"npm_config_prefix", "npm_config_global", "npm_config_location", "npm_config_ignore_scripts", "npm_config_workspace", "npm_config_workspaces"}
	npmSet  = []string{"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false"}
)

// npmInstall runs npm ci --ignore-scripts for the project in tmp.
func (s *Store) npmInstall(ctx context.Context, d *Declaration, info *nodeInfo, tmp string) (*envMeta, error) {
	env := s.installerEnv(npmDrop, npmSet...)
	prog := s.cfg.NPM
	if prog == "" {
		prog = "npm"
	}
	npm, err := lookPath(prog, env)
	if err != nil {
		return nil, &InstallError{Tool: "npm", Packages: d.Packages, Reason: fmt.Sprintf("npm is not installed: %v", err)}
	}
	if len(d.npm.hosts) > 0 {
		out := newOutputScan(func(string) bool { return true })
		if err := s.run(ctx, tmp, []string{npm, "config", "get", "registry"}, env, out); err != nil {
			return nil, &InstallError{Tool: "npm", Packages: d.Packages, Reason: "npm config get registry: " + exitDetail(err), Output: capOutput(out.text())}
		}
		var reg string
		if kept := out.kept(); len(kept) > 0 {
			reg = kept[len(kept)-1]
		}
		u, err := url.Parse(reg)
		for _, h := range d.npm.hosts {
			if err != nil || u.Host != h {
				return nil, fmt.Errorf("%w: %s fetches packages from %s, which is not the configured registry %q", ErrDeclaration, d.npm.lockName, h, reg)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), d.npm.packageJSON, 0o444); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, d.npm.lockName), d.npm.lock, 0o444); err != nil {
		return nil, err
	}
	out := newOutputScan(npmLineMatters)
	argv := []string{npm, "ci", "--ignore-scripts", "--omit=dev", "--no-audit", "--no-fund"}
	if err := s.run(ctx, tmp, argv, env, out); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		pkgs, reason := npmFailure(out.kept(), d.Packages)
		if reason == "" {
			reason = "npm ci failed: " + exitDetail(err)
		}
		return nil, &InstallError{Tool: "npm", Packages: pkgs, Reason: reason, Output: capOutput(out.text())}
	}
	if err := os.MkdirAll(filepath.Join(tmp, nodeModules), 0o755); err != nil {
		return nil, err
	}
	return &envMeta{Language: Node, Interpreter: info.Exe + " " + info.Version, Declared: d.Packages}, nil
}

// What npm's output says.
var (
	npmCode     = regexp.MustCompile(`^npm (?:error|ERR!) code (\S+)`)
	npmNotFound = regexp.MustCompile(`404 Not Found - GET (\S+)`)
	npmNoTarget = regexp.MustCompile(`No matching version found for (\S+?)\.?$`)
	npmRequest  = regexp.MustCompile(`request to (\S+) failed`)
)

// npmLineMatters keeps npm's error lines.
func npmLineMatters(line string) bool {
	return strings.HasPrefix(line, "npm error") || strings.HasPrefix(line, "npm ERR!")
}

// npmReasons are what npm's error codes mean.
var npmReasons = map[string]string{
	"E404":         "not in the registry",
	"ETARGET":      "no matching version",
	"ENOTCACHED":   "not in the npm cache, and npm is offline (npm cache add <tarball> preloads it)",
	"EINTEGRITY":   "a downloaded package does not match the lock file's integrity",
	"EUSAGE":       "package.json and its lock file do not agree (run npm install and ship the lock file)",
	"E401":         "the registry refused the credentials (.npmrc)",
	"E403":         "the registry refused the request (.npmrc)",
	"ECONNREFUSED": "no registry reachable", "ENOTFOUND": "no registry reachable", "EAI_AGAIN": "no registry reachable",
	"ETIMEDOUT": "no registry reachable", "ECONNRESET": "no registry reachable", "ENETUNREACH": "no registry reachable",
	"EHOSTUNREACH":                      "no registry reachable",
	"SELF_SIGNED_CERT_IN_CHAIN":         "the registry's TLS certificate is not trusted (cafile in .npmrc)",
	"UNABLE_TO_GET_ISSUER_CERT_LOCALLY": "the registry's TLS certificate is not trusted (cafile in .npmrc)",
	"CERT_HAS_EXPIRED":                  "the registry's TLS certificate has expired",
}

// npmFailure reads npm's error lines: the packages they name (else
// declared) and the reason ("" when none is recognised).
func npmFailure(lines, declared []string) ([]string, string) {
	var pkgs []string
	var reason string
	add := func(p string) {
		if p != "" && !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	for _, l := range lines {
		if m := npmCode.FindStringSubmatch(l); m != nil && reason == "" {
			reason = npmReasons[m[1]]
			if reason == "" {
				reason = "npm error " + m[1]
			}
		}
		if m := npmNotFound.FindStringSubmatch(l); m != nil {
			add(packageOfURL(m[1]))
		}
		if m := npmNoTarget.FindStringSubmatch(l); m != nil {
			add(m[1])
		}
		if m := npmRequest.FindStringSubmatch(l); m != nil {
			add(packageOfURL(m[1]))
		}
	}
	if len(pkgs) == 0 {
		pkgs = declared
	}
	return pkgs, reason
}

// packageOfURL names the package a registry URL is about: a packument
// (/name, /@scope%2fname) or a tarball (/name/-/name-1.0.0.tgz).
func packageOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	p := strings.TrimPrefix(u.Path, "/")
	if i := strings.Index(p, "/-/"); i >= 0 {
		p = p[:i]
	}
	return p
}
