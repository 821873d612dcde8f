//go:build !depsunit

package deps

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/adkskills/adkskills/codeexec/internal/deps/depstest"
)

// fixture is a wheelhouse, a skill and a store of an offline operator.
type fixture struct {
	py, wheelhouse, skill, storeDir string
	env                             []string
}

// newFixture makes a wheelhouse holding wheels and a skill of files.
func newFixture(t *testing.T, wheels []depstest.Wheel, files map[string]string) *fixture {
	t.Helper()
	f := &fixture{py: python(t)}
	root := t.TempDir()
	f.wheelhouse = filepath.Join(root, "wheelhouse")
	f.skill = filepath.Join(root, "skill")
	f.storeDir = filepath.Join(root, "store")
	if err := os.MkdirAll(f.wheelhouse, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, w := range wheels {
		depstest.WriteWheel(t, f.wheelhouse, w)
	}
	writeTree(t, f.skill, files)
	f.env = offlineEnv(t, f.wheelhouse)
	return f
}

// store opens the fixture's store with cfg (Dir and Env filled in).
func (f *fixture) store(t *testing.T, cfg Config) *Store {
	t.Helper()
	cfg.Dir, cfg.Env = f.storeDir, append(slices.Clone(f.env), cfg.Env...)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// resolve resolves script for the fixture's python.
func (f *fixture) resolve(t *testing.T, s *Store, script string) (*Env, error) {
	t.Helper()
	return s.Resolve(context.Background(), os.DirFS(f.skill), script, Interpreter{Language: Python, Path: f.py})
}

// pep723 is a script declaring deps inline that prints what it imports.
func pep723(deps string, body string) string {
	return "# /// script\n# dependencies = [" + deps + "]\n# ///\n" + body
}

// TestResolveInstallsAndReuses: a PEP 723 block and a requirements.txt are
// installed from the wheelhouse (with what they depend on), the script
// imports them, and the next resolution reuses the environment.
func TestResolveInstallsAndReuses(t *testing.T) {
	wheels := []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0", "tinybase>=2"), depstest.PackageWheel("tinybase", "2.0"), depstest.PackageWheel("other-dep", "3.1")}
	tests := []struct {
		name, script, want string
		files              map[string]string
		source             string
	}{
		{"PEP723", "scripts/run.py", "1.0 2.0", map[string]string{
			"scripts/run.py": pep723(`"tinydep>=1.0"`, "import tinydep, tinybase\nprint(tinydep.VERSION, tinybase.VERSION)\n")}, "scripts/run.py"},
		{"RequirementsInScripts", "scripts/run.py", "3.1", map[string]string{
			"scripts/requirements.txt": "# the skill's needs\nother_dep == 3.1  # normalized\n",
			"requirements.txt":         "nosuchpackage\n", // the nearer file wins
			"scripts/run.py":           "import other_dep\nprint(other_dep.VERSION)\n"}, "scripts/requirements.txt"},
		{"RequirementsInRoot", "run.py", "1.0 2.0", map[string]string{
			"requirements.txt": "-r reqs/base.txt\n-c reqs/cons.txt\n",
			"reqs/base.txt":    "tinydep\\\n  ==1.0\n",
			"reqs/cons.txt":    "tinybase<3\n",
			"run.py":           "import tinydep, tinybase\nprint(tinydep.VERSION, tinybase.VERSION)\n"}, "requirements.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, wheels, tt.files)
			s := f.store(t, Config{})
			env, err := f.resolve(t, s, tt.script)
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			if !env.Built || env.Key == "" || env.Declaration.Source != tt.source {
				t.Fatalf("first Resolve: Built %v Key %q Source %q, want a built environment from %s", env.Built, env.Key, env.Declaration.Source, tt.source)
			}
			if want := []string{filepath.Join(s.Dir(), env.Key)}; !slices.Equal(env.Binds, want) {
				t.Errorf("Binds = %q, want %q", env.Binds, want)
			}
			out, err := runPython(t, f.py, f.skill, tt.script, env)
			if err != nil || out != tt.want {
				t.Fatalf("script printed %q (%v), want %q", out, err, tt.want)
			}
			again, err := f.resolve(t, s, tt.script)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if again.Built || again.Key != env.Key || s.builds.Load() != 1 {
				t.Errorf("second Resolve: Built %v Key %q (builds %d), want the first's environment reused", again.Built, again.Key, s.builds.Load())
			}
		})
	}
}

// TestTwoSetsOfOneSkill: two scripts of one skill declaring different
// versions get two environments, each seeing its own.
func TestTwoSetsOfOneSkill(t *testing.T) {
	f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0"), depstest.PackageWheel("tinydep", "2.0")}, map[string]string{
		"scripts/old.py": pep723(`"tinydep==1.0"`, "import tinydep\nprint(tinydep.VERSION)\n"),
		"scripts/new.py": pep723(`"tinydep==2.0"`, "import tinydep\nprint(tinydep.VERSION)\n"),
	})
	s := f.store(t, Config{})
	keys := map[string]bool{}
	for script, want := range map[string]string{"scripts/old.py": "1.0", "scripts/new.py": "2.0"} {
		env, err := f.resolve(t, s, script)
		if err != nil {
			t.Fatal(err)
		}
		out, err := runPython(t, f.py, f.skill, script, env)
		env.Close()
		if err != nil || out != want {
			t.Errorf("%s printed %q (%v), want %q", script, out, err, want)
		}
		keys[env.Key] = true
	}
	if envs, _ := envDirs(t, f.storeDir); len(keys) != 2 || len(envs) != 2 {
		t.Errorf("%d keys, %d environments; want 2 of each", len(keys), len(envs))
	}
}

// TestUnavailable: a package the wheelhouse lacks, a version it lacks, and
// a package it has only as a source distribution are named in an
// ErrUnavailable with the reason, and nothing is left in the store. The
// source distribution's setup.py never runs (its marker never appears),
// unless the operator allows source builds (the control that shows the
// marker works).
func TestUnavailable(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "setup-py-ran")
	tests := []struct {
		name, deps, wantPkg, wantReason string
	}{
		{"MissingPackage", `"nosuchpkg>=1"`, "nosuchpkg>=1", "no matching version (available: none)"},
		{"MissingVersion", `"tinydep==9.9"`, "tinydep==9.9", "no matching version (available: 1.0)"},
		{"SourceOnly", `"fromsource"`, "fromsource", "only wheels are installed, never a source build"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0")}, map[string]string{"run.py": pep723(tt.deps, "print('ran')\n")})
			writeSdist(t, f.wheelhouse, "fromsource", "1.0", marker)
			s := f.store(t, Config{})
			env, err := f.resolve(t, s, "run.py")
			var ie *InstallError
			if !errors.As(err, &ie) || !errors.Is(err, ErrUnavailable) {
				env.Close()
				t.Fatalf("Resolve = %v, want an *InstallError wrapping ErrUnavailable", err)
			}
			if !slices.Contains(ie.Packages, tt.wantPkg) || !strings.Contains(ie.Reason, tt.wantReason) || !strings.Contains(err.Error(), tt.wantPkg) {
				t.Errorf("error %q names %q for %q, want %q for %q", err, ie.Packages, ie.Reason, tt.wantPkg, tt.wantReason)
			}
			if ie.Output == "" || len([]rune(ie.Output)) > maxOutputChars+len(truncateMarkerRoom) {
				t.Errorf("Output has %d characters, want pip's output within %d", len([]rune(ie.Output)), maxOutputChars)
			}
			if envs, left := envDirs(t, f.storeDir); len(envs)+len(left) != 0 {
				t.Errorf("store holds %q and %q after a failed install, want nothing", envs, left)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the sdist's setup.py ran")
			}
		})
	}
	t.Run("SourceBuildsAllowed", func(t *testing.T) {
		f := newFixture(t, nil, map[string]string{"run.py": pep723(`"fromsource"`, "print('ran')\n")})
		writeSdist(t, f.wheelhouse, "fromsource", "1.0", marker)
		s := f.store(t, Config{AllowSourceBuilds: true, Env: []string{"PIP_NO_BUILD_ISOLATION=0"}})
		env, err := f.resolve(t, s, "run.py")
		env.Close()
		if _, serr := os.Stat(marker); serr != nil {
			t.Fatalf("with source builds allowed, setup.py did not run (Resolve: %v): the marker proves nothing", err)
		}
	})
}

// truncateMarkerRoom is room for truncate's marker line in a capped output.
const truncateMarkerRoom = "... [truncated 0000000000 of 0000000000 characters: over the 0000-character cap; head and tail kept] ...\n\n"

// TestRequiresPython: a requires-python the interpreter does not meet is
// an ErrUnavailable saying so; one it meets needs no environment.
func TestRequiresPython(t *testing.T) {
	for _, tt := range []struct {
		spec string
		ok   bool
	}{{">=3", true}, {">=99", false}, {"<3", false}} {
		t.Run(tt.spec, func(t *testing.T) {
			f := newFixture(t, nil, map[string]string{"run.py": "# /// script\n# requires-python = \"" + tt.spec + "\"\n# ///\n"})
			env, err := f.resolve(t, f.store(t, Config{}), "run.py")
			if tt.ok != (err == nil) || (!tt.ok && (!errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "requires Python "+tt.spec))) {
				t.Fatalf("Resolve = %v, want ok %v", err, tt.ok)
			}
			if err != nil && strings.Contains(err.Error(), "could not install") {
				t.Errorf("error %q speaks of packages the script does not declare", err)
			}
			if err == nil && (env.Key != "" || len(env.PythonPath) != 0) {
				t.Errorf("Env %+v, want nothing to add", env)
			}
		})
	}
}

// TestNoInstall: with installation off, a missing package is named and
// nothing is installed; what the interpreter already has, and an
// environment another store built, are used.
func TestNoInstall(t *testing.T) {
	f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0")}, map[string]string{
		"need.py":  pep723(`"tinydep"`, "import tinydep\nprint(tinydep.VERSION)\n"),
		"have.py":  pep723(`"pip>=1", "nosuchpkg; sys_platform == 'nosuchos'"`, "import pip\nprint('pip')\n"),
		"wrong.py": pep723(`"pip<1"`, "print('never')\n"),
	})
	off := f.store(t, Config{NoInstall: true})
	_, err := f.resolve(t, off, "need.py")
	var ie *InstallError
	if !errors.As(err, &ie) || !slices.Equal(ie.Packages, []string{"tinydep"}) || !strings.Contains(ie.Reason, "installation is off") {
		t.Fatalf("Resolve with installation off = %v, want tinydep named as not installed", err)
	}
	if envs, left := envDirs(t, f.storeDir); len(envs)+len(left) != 0 {
		t.Fatalf("store holds %q %q, want nothing installed", envs, left)
	}
	if _, err := f.resolve(t, off, "wrong.py"); !errors.As(err, &ie) || !slices.Equal(ie.Packages, []string{"pip<1"}) {
		t.Errorf("Resolve of a version the interpreter lacks = %v, want pip<1 named", err)
	}
	have, err := f.resolve(t, off, "have.py")
	if err != nil || have.Key != "" {
		t.Fatalf("Resolve of what the interpreter has = %+v, %v; want no environment", have, err)
	}
	built, err := f.resolve(t, f.store(t, Config{}), "need.py")
	if err != nil {
		t.Fatal(err)
	}
	built.Close()
	found, err := f.resolve(t, off, "need.py")
	if err != nil || found.Key != built.Key || found.Built {
		t.Fatalf("Resolve with installation off after a build = %+v, %v; want the built environment", found, err)
	}
	found.Close()
}

// TestConcurrentFirstResolves: runs starting at once build the environment
// once; all get it.
func TestConcurrentFirstResolves(t *testing.T) {
	const runs = 6
	f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0")}, map[string]string{"run.py": pep723(`"tinydep"`, "")})
	s := f.store(t, Config{})
	var wg sync.WaitGroup
	envs := make([]*Env, runs)
	errs := make([]error, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			envs[i], errs[i] = f.resolve(t, s, "run.py")
		}()
	}
	wg.Wait()
	built := 0
	for i := range runs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer envs[i].Close()
		if envs[i].Built {
			built++
		}
		if envs[i].Key != envs[0].Key {
			t.Errorf("run %d got %s, run 0 %s", i, envs[i].Key, envs[0].Key)
		}
	}
	if built != 1 || s.builds.Load() != 1 {
		t.Errorf("%d runs report a build, the store built %d times; want 1", built, s.builds.Load())
	}
}

// TestCancelledBuildLeavesNothing: a build the context ends leaves no
// environment and no temporary directory, and the next run builds.
func TestCancelledBuildLeavesNothing(t *testing.T) {
	f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0")}, map[string]string{"run.py": pep723(`"tinydep"`, "")})
	s := f.store(t, Config{InstallTimeout: 1}) // pip cannot start in 1ns
	_, err := f.resolve(t, s, "run.py")
	var ie *InstallError
	if !errors.As(err, &ie) || !strings.Contains(ie.Reason, "timed out") {
		t.Fatalf("Resolve with an install that times out = %v, want ErrUnavailable saying so", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Resolve(ctx, os.DirFS(f.skill), "run.py", Interpreter{Language: Python, Path: f.py}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Resolve with a cancelled context = %v, want context.Canceled", err)
	}
	if envs, left := envDirs(t, f.storeDir); len(envs)+len(left) != 0 {
		t.Fatalf("store holds %q %q, want nothing", envs, left)
	}
	env, err := f.resolve(t, f.store(t, Config{}), "run.py")
	if err != nil || !env.Built {
		t.Fatalf("next Resolve = %+v, %v; want a build", env, err)
	}
	env.Close()
}

// TestSweepRemovesLeftovers: what a builder that died left (a temporary
// build of a process that is gone, trash) is removed when a store opens
// the directory; a live process's build is left alone.
func TestSweepRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	dead := tmpPrefix + "999999999-abc"
	live := tmpPrefix + strconv.Itoa(os.Getpid()) + "-abc"
	trash := trashPrefix + "abc"
	for _, d := range []string{dead, live, trash} {
		writeTree(t, filepath.Join(dir, d), map[string]string{"site/x/__init__.py": ""})
		if err := readOnlyTree(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := New(Config{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	_, left := envDirs(t, dir)
	if !slices.Equal(left, []string{live}) {
		t.Errorf("after the sweep: %q, want only the live build %q", left, live)
	}
	removeTree(filepath.Join(dir, live))
}

// TestOneEnvironmentPerInterpreter: one dependency set run by two
// interpreters (pyenv's and Debian's, whose pip installs with --target
// despite PEP 668's EXTERNALLY-MANAGED) gets an environment for each.
func TestOneEnvironmentPerInterpreter(t *testing.T) {
	f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0")}, map[string]string{"run.py": pep723(`"tinydep"`, "import tinydep\nprint(tinydep.VERSION)\n")})
	system := "/usr/bin/python3"
	if exec.Command(system, "-m", "pip", "--version").Run() != nil {
		t.Skip("no /usr/bin/python3 with pip (Debian: apt-get install python3-pip)")
	}
	if real, _ := filepath.EvalSymlinks(system); real == f.py {
		t.Skip("python3 is the system's")
	}
	s := f.store(t, Config{})
	keys := map[string]bool{}
	for _, py := range []string{f.py, system} {
		env, err := s.Resolve(t.Context(), os.DirFS(f.skill), "run.py", Interpreter{Language: Python, Path: py})
		if err != nil {
			t.Fatalf("%s: %v", py, err)
		}
		out, err := runPython(t, py, f.skill, "run.py", env)
		env.Close()
		if err != nil || out != "1.0" {
			t.Errorf("%s: script printed %q (%v)", py, out, err)
		}
		keys[env.Key] = true
	}
	if len(keys) != 2 || s.builds.Load() != 2 {
		t.Errorf("%d environments from %d builds, want one per interpreter", len(keys), s.builds.Load())
	}
}
