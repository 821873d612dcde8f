package deps

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestNodeDeclarations: what package.json and its lock may say.
func TestNodeDeclarations(t *testing.T) {
	lock := func(entries ...string) string {
		return `{"lockfileVersion": 3, "packages": {"": {}` + prefixComma(entries) + `}}`
	}
	tests := []struct {
		name    string
		files   map[string]string
		want    []string // packages; nil with wantErr
		wantErr string
	}{
		{"NoPackageJSON", map[string]string{}, nil, ""},
		{"NoDependencies", map[string]string{"package.json": `{"name": "x"}`}, nil, ""},
		{"Registry", map[string]string{"package.json": `{"dependencies": {"a": "^1", "@s/b": "~2.0.0"}, "optionalDependencies": {"c": "latest"}}`,
			"package-lock.json": lock(`"node_modules/a": {"resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz"}`)}, []string{"@s/b@~2.0.0", "a@^1", "c@latest"}, ""},
		{"ScriptsFolderFirst", map[string]string{"package.json": `{"dependencies": {"root": "1"}}`, "scripts/package.json": `{"dependencies": {"near": "1"}}`,
			"scripts/npm-shrinkwrap.json": lock()}, []string{"near@1"}, ""},
		{"Alias", map[string]string{"package.json": `{"dependencies": {"a": "npm:@s/b@^1"}}`, "package-lock.json": lock()}, []string{"a@npm:@s/b@^1"}, ""},
		{"NoLock", map[string]string{"package.json": `{"dependencies": {"a": "1"}}`}, nil, "no package-lock.json"},
		{"FileDependency", map[string]string{"package.json": `{"dependencies": {"a": "file:../a"}}`, "package-lock.json": lock()}, nil, "not a version range"},
		{"GitDependency", map[string]string{"package.json": `{"dependencies": {"a": "git+https://x/a.git"}}`, "package-lock.json": lock()}, nil, "not a version range"},
		{"GitHubShorthand", map[string]string{"package.json": `{"dependencies": {"a": "user/repo"}}`, "package-lock.json": lock()}, nil, "not a version range"},
		{"URLDependency", map[string]string{"package.json": `{"dependencies": {"a": "https://x/a.tgz"}}`, "package-lock.json": lock()}, nil, "not a version range"},
		{"BadAlias", map[string]string{"package.json": `{"dependencies": {"a": "npm:../x@1"}}`, "package-lock.json": lock()}, nil, "alias"},
		{"BadName", map[string]string{"package.json": `{"dependencies": {"../a": "1"}}`, "package-lock.json": lock()}, nil, "not a package name"},
		{"LockLink", map[string]string{"package.json": `{"dependencies": {"a": "1"}}`, "package-lock.json": lock(`"node_modules/a": {"link": true, "resolved": "../a"}`)}, nil, "link"},
		{"LockFile", map[string]string{"package.json": `{"dependencies": {"a": "1"}}`, "package-lock.json": lock(`"node_modules/a": {"resolved": "file:../a.tgz"}`)}, nil, "not to a registry"},
		{"LockWorkspace", map[string]string{"package.json": `{"dependencies": {"a": "1"}}`, "package-lock.json": lock(`"packages/a": {}`)}, nil, "workspaces"},
		{"LockV1", map[string]string{"package.json": `{"dependencies": {"a": "1"}}`, "package-lock.json": `{"lockfileVersion": 1}`}, nil, "lockfileVersion 1"},
		{"BadJSON", map[string]string{"package.json": `{`}, nil, "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"scripts/run.js": {Data: []byte("")}}
			for p, c := range tt.files {
				fsys[p] = &fstest.MapFile{Data: []byte(c)}
			}
			d, err := Declared(fsys, "scripts/run.js", Node)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrDeclaration) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Declared = %v, want ErrDeclaration saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if d != nil {
				got = d.Packages
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Packages = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLockHosts: a lock fetching from a host other than the public
// registry's names it (it must be the operator's registry).
func TestLockHosts(t *testing.T) {
	hosts, err := checkLock([]byte(`{"lockfileVersion": 2, "packages": {"node_modules/a": {"resolved": "http://127.0.0.1:4873/a/-/a-1.tgz"},
		"node_modules/a/node_modules/b": {"resolved": "https://registry.npmjs.org/b/-/b-1.tgz"}, "node_modules/c": {}}}`))
	if err != nil || !slices.Equal(hosts, []string{"127.0.0.1:4873"}) {
		t.Errorf("checkLock = %q, %v", hosts, err)
	}
}

// TestNPMFailure: npm's error lines name the package and the reason.
func TestNPMFailure(t *testing.T) {
	declared := []string{"x@1"}
	tests := []struct {
		name       string
		lines      []string
		pkgs       []string
		reasonPart string
	}{
		{"NotFound", []string{"npm error code E404", "npm error 404 Not Found - GET https://registry.npmjs.org/@s%2fgone - Not found"}, []string{"@s/gone"}, "not in the registry"},
		{"NoTarget", []string{"npm ERR! code ETARGET", "npm ERR! notarget No matching version found for left-pad@9.9.9."}, []string{"left-pad@9.9.9"}, "no matching version"},
		{"Offline", []string{"npm error code ENOTCACHED", "npm error request to https://registry.npmjs.org/absent/-/absent-1.0.0.tgz failed: cache mode is 'only-if-cached'"}, []string{"absent"}, "npm cache"},
		{"Network", []string{"npm error code ECONNREFUSED", "npm error errno ECONNREFUSED"}, declared, "no registry reachable"},
		{"Unknown", []string{"npm error code EWEIRD"}, declared, "npm error EWEIRD"},
		{"Nothing", nil, declared, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkgs, reason := npmFailure(tt.lines, declared)
			if !slices.Equal(pkgs, tt.pkgs) || !strings.Contains(reason, tt.reasonPart) || (tt.reasonPart == "") != (reason == "") {
				t.Errorf("npmFailure = %q, %q; want %q, %q", pkgs, reason, tt.pkgs, tt.reasonPart)
			}
		})
	}
}

// prefixComma joins lock entries after a leading comma.
func prefixComma(entries []string) string {
	if len(entries) == 0 {
		return ""
	}
	return ", " + strings.Join(entries, ", ")
}

// TestEnvVars: what an executor adds to the script's environment keeps
// the skill root first on PYTHONPATH; an Env with nothing adds nothing,
// and Close is safe twice.
func TestEnvVars(t *testing.T) {
	tests := []struct {
		env  Env
		want map[string]string
	}{
		{Env{}, nil},
		{Env{PythonPath: []string{"/s/k/site"}}, map[string]string{"PYTHONPATH": "/workspace/skill:/s/k/site"}},
		{Env{NodePath: []string{"/s/k/node_modules"}}, map[string]string{"NODE_PATH": "/s/k/node_modules"}},
	}
	for _, tt := range tests {
		if got := tt.env.Vars("/workspace/skill"); !maps.Equal(got, tt.want) {
			t.Errorf("Vars = %v, want %v", got, tt.want)
		}
	}
	released := 0
	e := &Env{release: func() { released++ }}
	e.Close()
	e.Close()
	if released != 1 {
		t.Errorf("released %d times, want 1", released)
	}
}
