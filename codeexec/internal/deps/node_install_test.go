//go:build !depsunit

package deps

import (
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// npmFixture packs a package with npm pack, preloads it into the
// operator's npm cache (npm cache add, as an offline machine is prepared),
// and returns the offline operator's environment and the lock entry of
// the package.
func npmFixture(t *testing.T, name, version string) (env []string, lockEntry string) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is needed")
	}
	root := t.TempDir()
	pkg := filepath.Join(root, "pkg")
	writeTree(t, pkg, map[string]string{
		"package.json": fmt.Sprintf(`{"name": %q, "version": %q, "main": "index.js", "scripts": {"postinstall": "touch %s"}}`, name, version, filepath.Join(root, "postinstall-ran")),
		"index.js":     fmt.Sprintf("module.exports = () => %q;\n", name+" "+version),
	})
	cache := filepath.Join(root, "npm-cache")
	env = append(offlineEnv(t, t.TempDir()), "npm_config_cache="+cache, "npm_config_offline=true", "npm_config_userconfig="+os.DevNull)
	pack := exec.Command(npm, "pack", "--silent", "--pack-destination", root)
	pack.Dir, pack.Env = pkg, env
	out, err := pack.Output()
	if err != nil {
		t.Fatalf("npm pack: %v", err)
	}
	tarball := filepath.Join(root, strings.TrimSpace(string(out)))
	add := exec.Command(npm, "cache", "add", tarball)
	add.Dir, add.Env = root, env
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("npm cache add: %v: %s", err, out)
	}
	data, err := os.ReadFile(tarball)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(data)
	lockEntry = fmt.Sprintf(`"node_modules/%s": {"version": %q, "resolved": "https://registry.npmjs.org/%s/-/%s-%s.tgz", "hasInstallScript": true, "integrity": "sha512-%s"}`,
		name, version, name, name, version, base64.StdEncoding.EncodeToString(sum[:]))
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(root, "postinstall-ran")); err == nil {
			t.Error("the package's postinstall script ran")
		}
	})
	return env, lockEntry
}

// nodeSkill is a skill whose package.json depends on deps, with a lock of
// entries.
func nodeSkill(deps string, entries ...string) map[string]string {
	return map[string]string{
		"package.json":      `{"name": "skill", "version": "1.0.0", "dependencies": {` + deps + `}}`,
		"package-lock.json": `{"name": "skill", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "skill", "version": "1.0.0", "dependencies": {` + deps + `}}` + prefixComma(entries) + `}}`,
		"scripts/run.js":    "const f = require('tiny-node-dep'); console.log(f());\n",
	}
}

// TestResolveNode: a package.json with its lock is installed with npm ci
// from the operator's offline cache (never running the package's
// scripts), the script requires it through NODE_PATH, and the next
// resolution reuses it; a package the cache lacks is named.
func TestResolveNode(t *testing.T) {
	env, entry := npmFixture(t, "tiny-node-dep", "1.2.3")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is needed")
	}
	tests := []struct {
		name, deps string
		entries    []string
		wantPkg    string
	}{
		{"Installs", `"tiny-node-dep": "^1.2.0"`, []string{entry}, ""},
		{"NotInCache", `"tiny-node-dep": "^1.2.0", "absent-dep": "1.0.0"`, []string{entry,
			`"node_modules/absent-dep": {"version": "1.0.0", "resolved": "https://registry.npmjs.org/absent-dep/-/absent-dep-1.0.0.tgz", "integrity": "sha512-AAAA"}`}, "absent-dep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			skill := filepath.Join(dir, "skill")
			writeTree(t, skill, nodeSkill(tt.deps, tt.entries...))
			s, err := New(Config{Dir: filepath.Join(dir, "store"), Env: env})
			if err != nil {
				t.Fatal(err)
			}
			in := Interpreter{Language: Node, Path: node}
			e, err := s.Resolve(t.Context(), os.DirFS(skill), "scripts/run.js", in)
			if tt.wantPkg != "" {
				var ie *InstallError
				if !errors.As(err, &ie) || !slices.Contains(ie.Packages, tt.wantPkg) || !strings.Contains(ie.Reason, "npm cache") {
					t.Fatalf("Resolve = %v, want %s named as not in the cache", err, tt.wantPkg)
				}
				if envs, left := envDirs(t, s.Dir()); len(envs)+len(left) != 0 {
					t.Errorf("store holds %q %q after a failed install", envs, left)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			cmd := exec.Command(node, "scripts/run.js")
			cmd.Dir = skill
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			for k, v := range e.Vars("/unused") {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "tiny-node-dep 1.2.3" {
				t.Fatalf("script: %q (%v)", out, err)
			}
			again, err := s.Resolve(t.Context(), os.DirFS(skill), "scripts/run.js", in)
			if err != nil || again.Built || again.Key != e.Key {
				t.Fatalf("second Resolve = %+v, %v; want the environment reused", again, err)
			}
			again.Close()
		})
	}
}
