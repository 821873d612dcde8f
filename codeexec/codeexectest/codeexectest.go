// Package codeexectest is the behaviour suite every codeexec.Executor must
// pass, in the spirit of go-cloud's driver tests: one contract, one suite,
// every implementation (codeexec/local, codeexec/sandbox,
// codeexec/agentsandbox, yours).
//
// A new executor proves itself with one test in its own package:
//
//	func TestConformance(t *testing.T) {
//		codeexectest.Run(t, func() codeexec.Executor { return myexec.New(...) })
//	}
//
// An executor in this repository that starts scripts on the host (a gVisor
// or nsjail one) is a package under codeexec/ that implements the launcher
// of codeexec/internal/host and passes hostsuite.RunSuite as well.
//
// The suite is black-box: it sets only what a codeexec.Request carries and
// looks only at what Execute returns, so an executor whose scripts run on
// another machine can run it too. It needs python3, bash and node on the
// machine the scripts run on, and it checks:
//   - staging: the skill folder byte for byte from an fs.FS, extra files,
//     modes, the staged folder's name, symbolic links left out, the staging
//     limit;
//   - interpreters: by extension, an explicit one, an unsupported extension,
//     a missing interpreter, sibling imports;
//   - argv never through a shell, stdin, exit codes and signals (128+n);
//   - the environment: the allowlist, the request's additions, HOME and
//     TMPDIR outside the skill root, the test process's secrets absent;
//   - output capping: characters, not bytes, head and tail around the
//     marker, the total counted; the tail of a large stream intact;
//   - output files: created and changed files only, never a staged file left
//     unchanged, symbolic links and special files omitted with the reason,
//     the count and size limits;
//   - deletions: the extra files a run deleted, renamed, moved or replaced
//     by a folder or a link, never a skill file, all of them when the run
//     deletes everything or thousands;
//   - time limits and cancellation: the whole process tree killed, a
//     background child unable to hold the call open or outlive the script;
//   - a fresh workspace per run, never the process working directory;
//     concurrent runs that do not see each other;
//   - malformed requests refused with codeexec.ErrInvalidRequest.
//
// Run sets environment variables of the test process (t.Setenv), so it must
// not be called from a parallel test.
package codeexectest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/truncate"
)

// Bounds of the suite. A killed run may take grace past its limit to
// return on a contended machine; a broken kill makes a run last
// sleepSeconds; a test gives up on a run after hardDeadline.
const (
	grace        = 3 * time.Second
	sleepSeconds = 300
	hardDeadline = 60 * time.Second
)

// Run runs the whole suite against the executors newExecutor returns (one
// per subtest group, so an executor's state cannot hide a bug).
func Run(t *testing.T, newExecutor func() codeexec.Executor) {
	t.Run("Interpreters", func(t *testing.T) { testInterpreters(t, newExecutor()) })
	t.Run("Environment", func(t *testing.T) { testEnvironment(t, newExecutor()) })
	t.Run("SecretsDoNotLeak", func(t *testing.T) { testSecretsDoNotLeak(t, newExecutor()) })
	t.Run("ExitCodes", func(t *testing.T) { testExitCodes(t, newExecutor()) })
	t.Run("Stdin", func(t *testing.T) { testStdin(t, newExecutor()) })
	t.Run("Staging", func(t *testing.T) { testStaging(t, newExecutor()) })
	t.Run("StagingLimit", func(t *testing.T) { testStagingLimit(t, newExecutor()) })
	t.Run("InvalidRequests", func(t *testing.T) { testInvalidRequests(t, newExecutor()) })
	t.Run("OutputCapping", func(t *testing.T) { testOutputCapping(t, newExecutor()) })
	t.Run("OutputFiles", func(t *testing.T) { testOutputFiles(t, newExecutor()) })
	t.Run("Symlinks", func(t *testing.T) { testSymlinks(t, newExecutor()) })
	t.Run("OutputLimits", func(t *testing.T) { testOutputLimits(t, newExecutor()) })
	t.Run("Deletions", func(t *testing.T) { testDeletions(t, newExecutor()) })
	t.Run("ProcessTree", func(t *testing.T) { testProcessTree(t, newExecutor()) })
	t.Run("FreshWorkspace", func(t *testing.T) { testFreshWorkspace(t, newExecutor()) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newExecutor()) })
	t.Run("OutputTail", func(t *testing.T) { OutputTail(t, newExecutor(), tailRuns) })
}

// Skill builds a skill folder from path -> content.
func Skill(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for p, c := range files {
		m[p] = &fstest.MapFile{Data: []byte(c)}
	}
	return m
}

// Script is a request running one script file, the skill's only file.
func Script(path, src string) *codeexec.Request {
	return &codeexec.Request{Skill: Skill(map[string]string{path: src}), Script: path}
}

// MustRun executes req and fails the test on an error.
func MustRun(t testing.TB, e codeexec.Executor, req *codeexec.Request) *codeexec.Result {
	t.Helper()
	res, err := e.Execute(context.Background(), req)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

// Paths lists the paths of files.
func Paths(files []codeexec.File) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func testInterpreters(t *testing.T, e codeexec.Executor) {
	tests := []struct {
		path, src string
	}{
		{"scripts/a.py", "import sys\nprint('out', sys.argv[1:])"},
		{"scripts/a.sh", "echo \"out ['$1', '$2']\""},
		{"scripts/a.bash", "echo \"out ['$1', '$2']\""},
		{"scripts/a.js", "console.log(`out ['${process.argv[2]}', '${process.argv[3]}']`)"},
		{"scripts/a.mjs", "console.log(`out ['${process.argv[2]}', '${process.argv[3]}']`)"},
		{"scripts/a.cjs", "console.log(`out ['${process.argv[2]}', '${process.argv[3]}']`)"},
	}
	for _, tt := range tests {
		t.Run(path.Ext(tt.path), func(t *testing.T) {
			req := Script(tt.path, tt.src)
			// Arguments reach argv as is, never through a shell.
			req.Args = []string{"$HOME; rm -rf x", "two words"}
			res := MustRun(t, e, req)
			want := "out ['$HOME; rm -rf x', 'two words']\n"
			if res.ExitCode != 0 || res.Stdout.Text != want {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0, %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text, want)
			}
		})
	}
	t.Run("ExplicitInterpreter", func(t *testing.T) {
		req := Script("scripts/run.txt", "print('explicit')")
		req.Interpreter = &codeexec.Interpreter{Language: "python", Command: []string{"python3", "-S"}}
		if res := MustRun(t, e, req); res.Stdout.Text != "explicit\n" {
			t.Errorf("stdout %q, stderr %q", res.Stdout.Text, res.Stderr.Text)
		}
	})
	t.Run("ShebangLine", func(t *testing.T) {
		// No extension and no Interpreter: the #! line names the table's
		// python3.
		req := Script("bin/tool", "#!/usr/bin/env python3\nprint('by its #! line')\n")
		if res := MustRun(t, e, req); res.ExitCode != 0 || res.Stdout.Text != "by its #! line\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
		}
	})
	t.Run("Unsupported", func(t *testing.T) {
		if _, err := e.Execute(context.Background(), Script("scripts/a.rb", "puts 1")); !errors.Is(err, codeexec.ErrUnsupportedScript) {
			t.Errorf("err = %v, want ErrUnsupportedScript", err)
		}
	})
	t.Run("MissingInterpreter", func(t *testing.T) {
		req := Script("scripts/a.py", "print(1)")
		req.Interpreter = &codeexec.Interpreter{Language: "none", Command: []string{"no-such-interpreter-adkskills"}}
		if _, err := e.Execute(context.Background(), req); !errors.Is(err, codeexec.ErrStart) {
			t.Errorf("err = %v, want ErrStart", err)
		}
	})
	t.Run("SiblingImport", func(t *testing.T) {
		// PYTHONPATH = skill root: "from scripts.helper import x" works.
		req := &codeexec.Request{
			Skill: Skill(map[string]string{
				"scripts/__init__.py": "",
				"scripts/helper.py":   "VALUE = 'sibling'\n",
				"scripts/main.py":     "from scripts.helper import VALUE\nprint(VALUE)\n",
			}),
			Script: "scripts/main.py",
		}
		res := MustRun(t, e, req)
		if res.Stdout.Text != "sibling\n" {
			t.Errorf("stdout %q, stderr %q", res.Stdout.Text, res.Stderr.Text)
		}
		// PYTHONDONTWRITEBYTECODE: no __pycache__ among the outputs.
		if len(res.Files) != 0 || len(res.Omitted) != 0 {
			t.Errorf("files %v, omitted %v: want none", Paths(res.Files), res.Omitted)
		}
	})
}

func testEnvironment(t *testing.T, e codeexec.Executor) {
	src := `import os, json
print(json.dumps({"cwd": os.getcwd(), "env": dict(os.environ)}))
open(os.path.join(os.environ["HOME"], "cache"), "w").write("runtime cache")
open(os.path.join(os.environ["TMPDIR"], "scratch"), "w").write("scratch")
`
	req := Script("scripts/env.py", src)
	req.SkillName = "env-check"
	req.Env = map[string]string{"EXTRA": "from request", "LANG": "en_US.UTF-8"}
	res := MustRun(t, e, req)
	var got struct {
		Cwd string
		Env map[string]string
	}
	if err := json.Unmarshal([]byte(res.Stdout.Text), &got); err != nil {
		t.Fatalf("stdout %q, stderr %q: %v", res.Stdout.Text, res.Stderr.Text, err)
	}
	env := got.Env
	for k, want := range map[string]string{
		"SKILL_DIR":               got.Cwd,
		"PYTHONPATH":              got.Cwd,
		"PYTHONDONTWRITEBYTECODE": "1",
		"PYTHONIOENCODING":        "utf-8",
		"LC_ALL":                  "C.UTF-8",
		"LANG":                    "en_US.UTF-8", // the request wins
		"EXTRA":                   "from request",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if filepath.Base(got.Cwd) != req.SkillName {
		t.Errorf("the working directory %q is not named after the skill %q", got.Cwd, req.SkillName)
	}
	if env["PATH"] == "" {
		t.Error("PATH is empty")
	}
	for _, k := range []string{"HOME", "TMPDIR"} {
		if env[k] == "" || within(env[k], got.Cwd) || within(got.Cwd, env[k]) {
			t.Errorf("%s = %q must be set and outside the skill root %q", k, env[k], got.Cwd)
		}
	}
	if wd, _ := os.Getwd(); got.Cwd == wd {
		t.Errorf("ran in the process working directory %q", wd)
	}
	// HOME and TMPDIR are outside the skill root: what a runtime leaves
	// there is not an output.
	if len(res.Files) != 0 {
		t.Errorf("files %v: caches in HOME/TMPDIR must not be outputs", Paths(res.Files))
	}
}

func testSecretsDoNotLeak(t *testing.T, e codeexec.Executor) {
	const secret = "AIza-test-secret-must-not-leak"
	for _, k := range []string{"GOOGLE_API_KEY", "GEMINI_API_KEY", "AWS_SECRET_ACCESS_KEY", "ADKSKILLS_TEST_SECRET"} {
		t.Setenv(k, secret)
	}
	src := `import os
print(sorted(k for k, v in os.environ.items() if "AIza-test-secret" in v))
try:
    print(open("/proc/self/environ", "rb").read().count(b"AIza-test-secret"))
except FileNotFoundError:  # no /proc: macOS, the BSDs
    print(0)
`
	res := MustRun(t, e, Script("scripts/leak.py", src))
	if want := "[]\n0\n"; res.Stdout.Text != want {
		t.Errorf("stdout %q (stderr %q), want %q: the agent's environment reached the script", res.Stdout.Text, res.Stderr.Text, want)
	}
}

func testExitCodes(t *testing.T, e codeexec.Executor) {
	tests := []struct {
		name, src string
		want      int
	}{
		{"Zero", "exit 0", 0},
		{"Three", "echo oops >&2; exit 3", 3},
		{"MaxPlain", "exit 125", 125},
		{"SIGTERM", "kill -TERM $$", 128 + 15},
		{"SIGKILL", "kill -KILL $$", 128 + 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := MustRun(t, e, Script("scripts/exit.sh", tt.src))
			if res.ExitCode != tt.want || res.TimedOut {
				t.Errorf("exit %d timed out %v, want %d false", res.ExitCode, res.TimedOut, tt.want)
			}
			if res.Duration <= 0 {
				t.Errorf("duration %v", res.Duration)
			}
		})
	}
}

func testStdin(t *testing.T, e codeexec.Executor) {
	src := "import sys\ndata = sys.stdin.buffer.read()\nprint(len(data), data[:5])\n"
	tests := []struct {
		name  string
		stdin []byte
		want  string
	}{
		{"Nil", nil, "0 b''\n"},
		{"Bytes", []byte("hello\x00\xff"), "7 b'hello'\n"},
		// Larger than a pipe buffer: the writer must not deadlock.
		{"Large", bytes.Repeat([]byte("x"), 1<<20), fmt.Sprintf("%d b'xxxxx'\n", 1<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Script("scripts/stdin.py", src)
			req.Stdin = tt.stdin
			if res := MustRun(t, e, req); res.Stdout.Text != tt.want {
				t.Errorf("stdout %q (stderr %q), want %q", res.Stdout.Text, res.Stderr.Text, tt.want)
			}
		})
	}
}

// stagingScript prints, for each path it is given, its size, digest and
// permission bits.
const stagingScript = `import hashlib, os, stat, sys
for p in sys.argv[1:]:
    data = open(p, "rb").read()
    print(p, len(data), hashlib.sha256(data).hexdigest(), oct(stat.S_IMODE(os.stat(p).st_mode)))
`

func testStaging(t *testing.T, e codeexec.Executor) {
	t.Run("FromFS", func(t *testing.T) {
		skill := fstest.MapFS{
			"assets/blob.bin":        {Data: ByteRange(256 * 4)},
			"assets/big.bin":         {Data: bytes.Repeat(ByteRange(251), 4<<20/251)},
			"assets/tool":            {Data: []byte("#!/bin/sh\n"), Mode: 0o750},
			"assets/empty":           {},
			"data/deep/nested/x.txt": {Data: []byte("ü\r\n")},
			"scripts/check.py":       {Data: []byte(stagingScript)},
		}
		extra := []codeexec.File{
			{Path: "inputs/doc.docx", Data: ByteRange(300)},
			{Path: "data/deep/extra.txt", Data: []byte("beside a skill file"), Mode: 0o600},
		}
		req := &codeexec.Request{Skill: skill, Files: extra, Script: "scripts/check.py"}
		var want strings.Builder
		for _, p := range slices.Sorted(maps.Keys(skill)) {
			req.Args = append(req.Args, p)
			fmt.Fprintf(&want, "%s %d %s 0o%o\n", p, len(skill[p].Data), sha256Hex(skill[p].Data), modeOr(skill[p].Mode, p == req.Script))
		}
		for _, f := range extra {
			req.Args = append(req.Args, f.Path)
			fmt.Fprintf(&want, "%s %d %s 0o%o\n", f.Path, len(f.Data), sha256Hex(f.Data), modeOr(f.Mode, false))
		}
		res := MustRun(t, e, req)
		if res.Stdout.Text != want.String() {
			t.Errorf("staged:\n%s\nstderr %s\nwant:\n%s", res.Stdout.Text, res.Stderr.Text, want.String())
		}
		if len(res.Files) != 0 || len(res.Omitted) != 0 {
			t.Errorf("files %v omitted %v: staged files read but not changed are not outputs", Paths(res.Files), res.Omitted)
		}
	})
	t.Run("SymlinksNotStaged", func(t *testing.T) {
		dir := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(dir, "scripts"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "scripts", "ls.py"), []byte("import os\nprint(sorted(os.listdir('.')))\n"), 0o644))
		must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")))
		must(t, os.Symlink("scripts", filepath.Join(dir, "alias")))
		res := MustRun(t, e, &codeexec.Request{Skill: os.DirFS(dir), Script: "scripts/ls.py"})
		if want := "['scripts']\n"; res.Stdout.Text != want {
			t.Errorf("stdout %q (stderr %q), want %q: links in the skill folder are not staged", res.Stdout.Text, res.Stderr.Text, want)
		}
	})
	t.Run("ExtraFileNeverReplacesSkillFile", func(t *testing.T) {
		for name, p := range map[string]string{"File": "data/x.txt", "Folder": "data", "UnderFile": "data/x.txt/y"} {
			req := &codeexec.Request{
				Skill:  Skill(map[string]string{"scripts/a.sh": "cat data/x.txt", "data/x.txt": "the skill's"}),
				Files:  []codeexec.File{{Path: p, Data: []byte("an input's")}},
				Script: "scripts/a.sh",
			}
			if res, err := e.Execute(context.Background(), req); !errors.Is(err, codeexec.ErrInvalidRequest) {
				t.Errorf("%s: an extra file %q over the skill's: Execute = %v, %v; want ErrInvalidRequest", name, p, res, err)
			}
		}
	})
	t.Run("ScriptAmongExtraFiles", func(t *testing.T) {
		req := &codeexec.Request{
			Skill:  Skill(map[string]string{"data/x.txt": "skill data"}),
			Files:  []codeexec.File{{Path: ".inline/script.sh", Data: []byte("cat data/x.txt")}},
			Script: ".inline/script.sh",
		}
		if res := MustRun(t, e, req); res.Stdout.Text != "skill data" || len(res.Files) != 0 {
			t.Errorf("stdout %q (stderr %q) files %v", res.Stdout.Text, res.Stderr.Text, Paths(res.Files))
		}
	})
	t.Run("NoSkill", func(t *testing.T) {
		req := &codeexec.Request{Files: []codeexec.File{{Path: "s.sh", Data: []byte("echo alone; ls")}}, Script: "s.sh"}
		if res := MustRun(t, e, req); res.Stdout.Text != "alone\ns.sh\n" {
			t.Errorf("stdout %q (stderr %q)", res.Stdout.Text, res.Stderr.Text)
		}
	})
}

// testStagingLimit: a skill folder over Limits.MaxSkillBytes does not run,
// and the error says so (ErrTooLarge).
func testStagingLimit(t *testing.T, e codeexec.Executor) {
	const limit = 1 << 16
	for _, tt := range []struct {
		name  string
		extra int // bytes of an extra file
		ok    bool
	}{{"AtLimit", limit - len("echo ran"), true}, {"OverLimit", limit - len("echo ran") + 1, false}} {
		t.Run(tt.name, func(t *testing.T) {
			req := &codeexec.Request{
				Skill:  Skill(map[string]string{"scripts/a.sh": "echo ran"}),
				Files:  []codeexec.File{{Path: "in/blob", Data: make([]byte, tt.extra)}},
				Script: "scripts/a.sh",
				Limits: codeexec.Limits{MaxSkillBytes: limit},
			}
			res, err := e.Execute(context.Background(), req)
			switch {
			case tt.ok && (err != nil || res.Stdout.Text != "ran\n"):
				t.Errorf("%d bytes, limit %d: Execute = %v, %v; want a run", limit, limit, res, err)
			case !tt.ok && (!errors.Is(err, codeexec.ErrInvalidRequest) || !errors.Is(err, codeexec.ErrTooLarge)):
				t.Errorf("%d bytes, limit %d: Execute = %v, %v; want ErrInvalidRequest and ErrTooLarge", limit+1, limit, res, err)
			}
		})
	}
}

func testInvalidRequests(t *testing.T, e codeexec.Executor) {
	x := func(p string) codeexec.File { return codeexec.File{Path: p, Data: []byte("x")} }
	skill := Skill(map[string]string{"a.py": "print(1)"})
	tests := []struct {
		name string
		req  *codeexec.Request
	}{
		{"Nil", nil},
		{"NoFiles", &codeexec.Request{Script: "a.py"}},
		{"ScriptNotInSkill", &codeexec.Request{Skill: skill, Script: "b.py"}},
		{"ScriptNotAmongFiles", &codeexec.Request{Files: []codeexec.File{x("a.py")}, Script: "b.py"}},
		{"EmptyScript", &codeexec.Request{Skill: skill}},
		{"EmptyPath", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("")}, Script: "a.py"}},
		{"Absolute", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("/etc/x")}, Script: "a.py"}},
		{"DotDot", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("../x")}, Script: "a.py"}},
		{"DotDotInside", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("a/../../x")}, Script: "a.py"}},
		{"Dot", &codeexec.Request{Skill: skill, Files: []codeexec.File{x(".")}, Script: "a.py"}},
		{"Unclean", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("a//b")}, Script: "a.py"}},
		{"DotElement", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("./a")}, Script: "a.py"}},
		{"TrailingSlash", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("a/")}, Script: "a.py"}},
		{"Backslash", &codeexec.Request{Skill: skill, Files: []codeexec.File{x(`..\x`)}, Script: "a.py"}},
		{"NUL", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("a\x00b")}, Script: "a.py"}},
		{"Duplicate", &codeexec.Request{Files: []codeexec.File{x("a.py"), x("a.py")}, Script: "a.py"}},
		{"FileAndDir", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("a"), x("a/b")}, Script: "a.py"}},
		{"DirAndFile", &codeexec.Request{Skill: skill, Files: []codeexec.File{x("a/b"), x("a")}, Script: "a.py"}},
		{"ScriptAbsolute", &codeexec.Request{Skill: skill, Script: "/a.py"}},
		{"Base64", &codeexec.Request{Files: []codeexec.File{{Path: "a.py", Data: []byte("eA=="), Encoding: codeexec.EncodingBase64}}, Script: "a.py"}},
		{"ModeSetuid", &codeexec.Request{Files: []codeexec.File{{Path: "a.py", Mode: 0o4755}}, Script: "a.py"}},
		{"SkillNameSlash", &codeexec.Request{Skill: skill, SkillName: "a/b", Script: "a.py"}},
		{"SkillNameDotDot", &codeexec.Request{Skill: skill, SkillName: "..", Script: "a.py"}},
		{"SkillNameHidden", &codeexec.Request{Skill: skill, SkillName: ".home", Script: "a.py"}},
		{"ArgNUL", &codeexec.Request{Skill: skill, Script: "a.py", Args: []string{"a\x00"}}},
		{"EnvName", &codeexec.Request{Skill: skill, Script: "a.py", Env: map[string]string{"A=B": "x"}}},
		{"EnvEmptyName", &codeexec.Request{Skill: skill, Script: "a.py", Env: map[string]string{"": "x"}}},
		{"EnvValueNUL", &codeexec.Request{Skill: skill, Script: "a.py", Env: map[string]string{"A": "\x00"}}},
		{"NegativeTimeout", &codeexec.Request{Skill: skill, Script: "a.py", Limits: codeexec.Limits{Timeout: -time.Second}}},
		{"NegativeOutputCap", &codeexec.Request{Skill: skill, Script: "a.py", Limits: codeexec.Limits{MaxOutputChars: -1}}},
		{"NegativeFileLimit", &codeexec.Request{Skill: skill, Script: "a.py", Limits: codeexec.Limits{Output: codeexec.FileLimits{MaxFiles: -1}}}},
		{"NegativeStagingLimit", &codeexec.Request{Skill: skill, Script: "a.py", Limits: codeexec.Limits{MaxSkillBytes: -1}}},
		{"BadInterpreter", &codeexec.Request{Skill: skill, Script: "a.py", Interpreter: &codeexec.Interpreter{Language: "x"}}},
		{"SkillPathBackslash", &codeexec.Request{Skill: fstest.MapFS{"a.py": {}, `b\c`: {}}, Script: "a.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Execute(context.Background(), tt.req)
			if !errors.Is(err, codeexec.ErrInvalidRequest) || res != nil {
				t.Errorf("Execute = %v, %v; want nil, ErrInvalidRequest", res, err)
			}
		})
	}
}

func testOutputCapping(t *testing.T, e codeexec.Executor) {
	// Multi-byte characters, past the cap, on both streams.
	tests := []struct {
		name     string
		maxChars int // 0: the default
		chars    int
	}{
		{"UnderDefault", 0, codeexec.DefaultMaxOutputChars},
		{"OverDefault", 0, 3*codeexec.DefaultMaxOutputChars + 7},
		{"Small", 10, 1000},
	}
	src := `import sys
n = int(sys.argv[1])
s = "".join("é" if i % 11 == 0 else str(i % 11 - 1) for i in range(n))
sys.stdout.write(s)
sys.stderr.write(s[::-1])
`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Script("scripts/noisy.py", src)
			req.Args = []string{strconv.Itoa(tt.chars)}
			req.Limits.MaxOutputChars = tt.maxChars
			res := MustRun(t, e, req)
			var b strings.Builder
			for i := range tt.chars {
				if i%11 == 0 {
					b.WriteString("é")
				} else {
					b.WriteString(strconv.Itoa(i%11 - 1))
				}
			}
			limit := cmp.Or(tt.maxChars, codeexec.DefaultMaxOutputChars)
			for _, s := range []struct {
				name string
				got  codeexec.Stream
				full string
			}{{"stdout", res.Stdout, b.String()}, {"stderr", res.Stderr, reverse(b.String())}} {
				want := codeexec.Stream{Text: truncate.String(s.full, limit), TotalChars: int64(tt.chars), TotalBytes: int64(len(s.full)), Truncated: tt.chars > limit}
				if s.got != want {
					t.Errorf("%s: got %d chars total %d (%d bytes) truncated %v, want %d chars total %d (%d bytes) truncated %v",
						s.name, len([]rune(s.got.Text)), s.got.TotalChars, s.got.TotalBytes, s.got.Truncated,
						len([]rune(want.Text)), want.TotalChars, want.TotalBytes, want.Truncated)
				}
			}
		})
	}
}

func testOutputFiles(t *testing.T, e codeexec.Executor) {
	skill := Skill(map[string]string{
		"data/same.txt":      "unchanged content",
		"data/rewritten.txt": "AAAAAAAA", // rewritten with the same size, its time set back
		"data/identical.txt": "identical",
		"data/grown.txt":     "short",
		"data/deleted.txt":   "gone",
		"data/chmod.txt":     "only the mode changes",
		"scripts/write.py": `import os
os.makedirs("dist/deep", exist_ok=True)
open("dist/deep/report.bin", "wb").write(bytes(range(256)))
open("top.txt", "w").write("top")
open("a.txt", "w").write("sorts before a/")
os.makedirs("a", exist_ok=True)
open("a/b.txt", "w").write("nested")
st = os.stat("data/rewritten.txt")
open("data/rewritten.txt", "w").write("BBBBBBBB")
os.utime("data/rewritten.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
open("data/identical.txt", "w").write("identical")
open("data/grown.txt", "a").write(" and longer")
os.remove("data/deleted.txt")
os.chmod("data/chmod.txt", 0o600)
open("data/same.txt").read()
os.makedirs("empty/dir", exist_ok=True)
open("in/kept.txt").read()
open("in/edited.txt", "a").write(" edited")
`,
	})
	extra := []codeexec.File{
		{Path: "in/kept.txt", Data: []byte("an input left alone")},
		{Path: "in/edited.txt", Data: []byte("an input")},
	}
	res := MustRun(t, e, &codeexec.Request{Skill: skill, Files: extra, Script: "scripts/write.py"})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Text)
	}
	want := map[string]string{
		"a.txt":                "sorts before a/",
		"a/b.txt":              "nested",
		"data/grown.txt":       "short and longer",
		"data/rewritten.txt":   "BBBBBBBB",
		"dist/deep/report.bin": string(ByteRange(256)),
		"in/edited.txt":        "an input edited",
		"top.txt":              "top",
	}
	got := map[string]string{}
	for _, f := range res.Files {
		got[f.Path] = string(f.Data)
		if f.Encoding != codeexec.EncodingRaw {
			t.Errorf("%s: encoding %q, want raw", f.Path, f.Encoding)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files:\n got %q\nwant %q", got, want)
	}
	if !slices.IsSortedFunc(res.Files, func(a, b codeexec.File) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("files not sorted by path: %v", Paths(res.Files))
	}
	if len(res.Omitted) != 0 {
		t.Errorf("omitted %v, want none", res.Omitted)
	}
}

func testSymlinks(t *testing.T, e codeexec.Executor) {
	src := `import os
open(os.path.join(os.environ["HOME"], "outside.txt"), "w").write("outside the skill root")
os.symlink("/etc/passwd", "passwd")
os.symlink(os.path.join(os.environ["HOME"], "outside.txt"), "outside.txt")
os.symlink("/etc", "etc")
os.symlink("/proc/self", "self")
os.symlink(os.environ["HOME"], "home")
os.symlink("scripts/links.py", "inside.py")
os.symlink("/nonexistent/dangling", "dangling")
os.mkdir("out")
os.symlink("/etc/hostname", "out/hostname")
os.mkfifo("fifo")
open("real.txt", "w").write("real")
`
	res := MustRun(t, e, Script("scripts/links.py", src))
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Text)
	}
	if got := Paths(res.Files); !slices.Equal(got, []string{"real.txt"}) {
		t.Errorf("files %v, want [real.txt]", got)
	}
	wantOmitted := map[string]string{
		"dangling":     "symbolic link",
		"etc":          "symbolic link",
		"fifo":         "not a regular file",
		"home":         "symbolic link",
		"inside.py":    "symbolic link",
		"out/hostname": "symbolic link",
		"outside.txt":  "symbolic link",
		"passwd":       "symbolic link",
		"self":         "symbolic link",
	}
	gotOmitted := map[string]string{}
	for _, o := range res.Omitted {
		gotOmitted[o.Path] = o.Reason
	}
	for p, reason := range wantOmitted {
		if !strings.Contains(gotOmitted[p], reason) {
			t.Errorf("omitted[%q] = %q, want a reason containing %q", p, gotOmitted[p], reason)
		}
	}
	if len(gotOmitted) != len(wantOmitted) {
		t.Errorf("omitted %v, want %v", gotOmitted, wantOmitted)
	}
}

func testOutputLimits(t *testing.T, e codeexec.Executor) {
	const size = 100 // bytes per file
	// writes n files f0..f(n-1) of size bytes, one of size+1 when asked.
	src := `import sys
n, size, big = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "big"
for i in range(n):
    open("f%d" % i, "w").write("x" * (size + (1 if big and i == 1 else 0)))
`
	tests := []struct {
		name        string
		n           int
		big         bool
		limits      codeexec.FileLimits
		wantFiles   []string
		wantOmitted map[string]string
	}{
		{"Count", 5, false, codeexec.FileLimits{MaxFiles: 3},
			[]string{"f0", "f1", "f2"}, map[string]string{"f3": "3 files", "f4": "3 files"}},
		{"PerFile", 3, true, codeexec.FileLimits{MaxFileBytes: size},
			[]string{"f0", "f2"}, map[string]string{"f1": fmt.Sprintf("%d-byte limit per file", size)}},
		{"Total", 3, false, codeexec.FileLimits{MaxTotalBytes: 2*size + size/2},
			[]string{"f0", "f1"}, map[string]string{"f2": fmt.Sprintf("%d-byte limit for all files", 2*size+size/2)}},
		{"Defaults", 3, false, codeexec.FileLimits{}, []string{"f0", "f1", "f2"}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Script("scripts/many.py", src)
			big := "no"
			if tt.big {
				big = "big"
			}
			req.Args = []string{strconv.Itoa(tt.n), strconv.Itoa(size), big}
			req.Limits.Output = tt.limits
			res := MustRun(t, e, req)
			if got := Paths(res.Files); !slices.Equal(got, tt.wantFiles) {
				t.Errorf("files %v, want %v (stderr %s)", got, tt.wantFiles, res.Stderr.Text)
			}
			got := map[string]string{}
			for _, o := range res.Omitted {
				got[o.Path] = o.Reason
				if o.Size < size {
					t.Errorf("omitted %q: size %d, want >= %d", o.Path, o.Size, size)
				}
			}
			if len(got) != len(tt.wantOmitted) {
				t.Errorf("omitted %v, want %v", got, tt.wantOmitted)
			}
			for p, reason := range tt.wantOmitted {
				if !strings.Contains(got[p], reason) {
					t.Errorf("omitted[%q] = %q, want a reason containing %q", p, got[p], reason)
				}
			}
		})
	}
}

// testProcessTree: a time limit or a cancellation kills the whole process
// tree, and a script's background child neither holds the call open nor
// goes on writing once the script has exited. lateMark is what a survivor
// would print.
func testProcessTree(t *testing.T, e codeexec.Executor) {
	const (
		limit    = time.Second
		lateMark = "LATE-"
	)
	killed := 128 + 9
	sleep := fmt.Sprintf("sleep %d", sleepSeconds)
	// late starts a child that writes after d, once the script is over.
	late := func(d time.Duration) string {
		return fmt.Sprintf("(sleep %.1f; echo %sstdout; echo %sfile > late.txt) &", d.Seconds(), lateMark, lateMark)
	}
	tests := []struct {
		name     string
		src      string // bash
		timeout  time.Duration
		cancelAt time.Duration // cancel the context after this; 0: never
		within   time.Duration // Execute must return within this
		timedOut bool
		exitCode int
	}{
		// The script exits at once; its background child holds stdout.
		{name: "BackgroundChild", src: sleep + " &\necho started", timeout: time.Minute, within: grace},
		// The script exits; a child would write after it.
		{name: "LateWriter", src: late(limit/2) + "\necho started", timeout: time.Minute, within: grace},
		{name: "InfiniteLoop", src: "while :; do :; done", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "TrapsSIGTERM", src: "trap 'echo ignored' TERM\n" + sleep + " &\nwhile :; do sleep 0.1; done", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "Python", src: "python3 -c 'import subprocess, time; subprocess.Popen([\"sleep\", \"" + strconv.Itoa(sleepSeconds) + "\"]); time.sleep(" + strconv.Itoa(sleepSeconds) + ")'", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "ContextCancelled", src: sleep + " &\nwait", timeout: time.Minute, cancelAt: limit / 2, within: limit/2 + grace, timedOut: true, exitCode: killed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := Script("scripts/tree.sh", tt.src)
			req.Limits.Timeout = tt.timeout
			res, elapsed := RunBounded(t, e, req, tt.cancelAt)
			if elapsed > tt.within {
				t.Errorf("Execute took %v, want within %v", elapsed, tt.within)
			}
			if res.TimedOut != tt.timedOut || res.ExitCode != tt.exitCode {
				t.Errorf("timed out %v exit %d, want %v %d (stderr %q)", res.TimedOut, res.ExitCode, tt.timedOut, tt.exitCode, res.Stderr.Text)
			}
			if strings.Contains(res.Stdout.Text, lateMark) || slices.Contains(Paths(res.Files), "late.txt") {
				t.Errorf("a child of the script went on after it: stdout %q, files %v", res.Stdout.Text, Paths(res.Files))
			}
		})
	}
}

// deletionCases are what a run can do to an extra file, each with what
// Result must say: every case in one run, so that none hides another.
var deletionCases = []struct {
	name    string
	files   []string // extra files, each holding its own path
	src     string   // python lines doing it
	deleted []string // Result.Deleted among files
	outputs []string // Result.Files among the case's paths
	omitted []string // Result.Omitted among them
}{
	{name: "Unchanged", files: []string{"in/kept.txt"}, src: `open("in/kept.txt").read()`},
	{name: "Modified", files: []string{"in/edited.txt"}, src: `open("in/edited.txt", "a").write(" edited")`, outputs: []string{"in/edited.txt"}},
	{name: "Deleted", files: []string{"in/deleted.txt"}, src: `os.remove("in/deleted.txt")`, deleted: []string{"in/deleted.txt"}},
	{name: "Renamed", files: []string{"in/old-name.txt"}, src: `os.rename("in/old-name.txt", "in/new-name.txt")`,
		deleted: []string{"in/old-name.txt"}, outputs: []string{"in/new-name.txt"}},
	{name: "MovedToAnotherFolder", files: []string{"in/moved.txt"}, src: `os.makedirs("elsewhere/deep"); os.rename("in/moved.txt", "elsewhere/deep/moved.txt")`,
		deleted: []string{"in/moved.txt"}, outputs: []string{"elsewhere/deep/moved.txt"}},
	{name: "ReplacedByFolder", files: []string{"in/folder"}, src: `os.remove("in/folder"); os.mkdir("in/folder"); open("in/folder/inside.txt", "w").write("x")`,
		deleted: []string{"in/folder"}, outputs: []string{"in/folder/inside.txt"}},
	{name: "ReplacedByLink", files: []string{"in/link.txt"}, src: `os.remove("in/link.txt"); os.symlink("kept.txt", "in/link.txt")`,
		deleted: []string{"in/link.txt"}, omitted: []string{"in/link.txt"}},
	{name: "FolderRemoved", files: []string{"gone/a.txt", "gone/sub/b.txt"}, src: `shutil.rmtree("gone")`,
		deleted: []string{"gone/a.txt", "gone/sub/b.txt"}},
	// A folder on the path swapped for a link to a copy of it: the file
	// is not followed through the link.
	{name: "FolderReplacedByLink", files: []string{"via/sub/c.txt"}, src: `shutil.copytree("via", "copy"); shutil.rmtree("via"); os.symlink("copy", "via")`,
		deleted: []string{"via/sub/c.txt"}, outputs: []string{"copy/sub/c.txt"}, omitted: []string{"via"}},
	{name: "DeletedAndWrittenBack", files: []string{"in/back.txt"}, src: `os.remove("in/back.txt"); open("in/back.txt", "w").write("in/back.txt")`},
	{name: "DeletedAndRewritten", files: []string{"in/rewritten.txt"}, src: `os.remove("in/rewritten.txt"); open("in/rewritten.txt", "w").write("new")`,
		outputs: []string{"in/rewritten.txt"}},
	// Not extra files: a skill file, a file the run made itself.
	{name: "SkillFileDeleted", src: `os.remove("data/skill.txt")`},
	{name: "OwnFileDeleted", src: `open("own.txt", "w").write("x"); os.remove("own.txt")`},
}

// testDeletions: Result.Deleted lists the extra files a run left no
// regular file at, and nothing else.
func testDeletions(t *testing.T, e codeexec.Executor) {
	t.Run("Cases", func(t *testing.T) {
		src := "import os, shutil\n"
		var extra []codeexec.File
		var wantDeleted []string
		for _, c := range deletionCases {
			src += c.src + "\n"
			for _, p := range c.files {
				extra = append(extra, codeexec.File{Path: p, Data: []byte(p)})
			}
			wantDeleted = append(wantDeleted, c.deleted...)
		}
		slices.Sort(wantDeleted)
		skill := Skill(map[string]string{"data/skill.txt": "shipped", "scripts/change.py": src})
		res := MustRun(t, e, &codeexec.Request{Skill: skill, Files: extra, Script: "scripts/change.py"})
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Text)
		}
		if !slices.Equal(res.Deleted, wantDeleted) {
			t.Errorf("deleted %q, want %q", res.Deleted, wantDeleted)
		}
		outputs, omitted := Paths(res.Files), []string{}
		for _, o := range res.Omitted {
			omitted = append(omitted, o.Path)
		}
		for _, c := range deletionCases {
			for _, w := range []struct {
				what      string
				got, want []string
			}{{"deleted", res.Deleted, c.deleted}, {"outputs", outputs, c.outputs}, {"omitted", omitted, c.omitted}} {
				var got []string
				for _, p := range w.got {
					if slices.Contains(c.files, p) || slices.Contains(w.want, p) {
						got = append(got, p)
					}
				}
				if !slices.Equal(got, w.want) {
					t.Errorf("%s: %s %q, want %q", c.name, w.what, got, w.want)
				}
			}
		}
		var wantOutputs []string
		for _, c := range deletionCases {
			wantOutputs = append(wantOutputs, c.outputs...)
		}
		slices.Sort(wantOutputs)
		if !slices.Equal(outputs, wantOutputs) {
			t.Errorf("outputs %q, want %q", outputs, wantOutputs)
		}
	})
	t.Run("Everything", func(t *testing.T) {
		// A script that empties its working directory: every extra file is
		// deleted, none of the skill's is listed.
		skill := Skill(map[string]string{"data/skill.txt": "shipped", "scripts/wipe.py": `import os, shutil
for name in os.listdir("."):
    shutil.rmtree(name) if os.path.isdir(name) and not os.path.islink(name) else os.remove(name)
`})
		extra := []codeexec.File{{Path: "top.txt"}, {Path: "a/b/c.bin", Data: ByteRange(300)}, {Path: "scripts/input.txt", Data: []byte("beside the script")}}
		res := MustRun(t, e, &codeexec.Request{Skill: skill, Files: extra, Script: "scripts/wipe.py"})
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Text)
		}
		if want := []string{"a/b/c.bin", "scripts/input.txt", "top.txt"}; !slices.Equal(res.Deleted, want) {
			t.Errorf("deleted %q, want %q", res.Deleted, want)
		}
		if len(res.Files) != 0 || len(res.Omitted) != 0 {
			t.Errorf("files %v, omitted %v: want none", Paths(res.Files), res.Omitted)
		}
	})
	t.Run("Thousands", func(t *testing.T) {
		// Deleted lists every deleted extra file, however many: it is
		// bounded by the request, not by the output limits.
		n := 10 * codeexec.DefaultMaxOutputFiles
		extra := make([]codeexec.File, n)
		want := make([]string, n)
		for i := range extra {
			want[i] = fmt.Sprintf("many/%d/f%d.txt", i%10, i)
			extra[i] = codeexec.File{Path: want[i], Data: []byte("x")}
		}
		slices.Sort(want)
		res := MustRun(t, e, &codeexec.Request{Skill: Skill(map[string]string{"scripts/wipe.py": `import shutil; shutil.rmtree("many")`}), Files: extra, Script: "scripts/wipe.py"})
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Text)
		}
		if !slices.Equal(res.Deleted, want) {
			t.Errorf("deleted %d paths (first %q), want the %d extra files", len(res.Deleted), res.Deleted[:min(3, len(res.Deleted))], n)
		}
	})
}

// testFreshWorkspace: every run starts from the request alone.
func testFreshWorkspace(t *testing.T, e codeexec.Executor) {
	src := `import os, sys
seen = [p for p in ("left.txt", os.path.join(os.environ["HOME"], "left"), os.path.join(os.environ["TMPDIR"], "left")) if os.path.exists(p)]
print(seen)
for p in ("left.txt", os.path.join(os.environ["HOME"], "left"), os.path.join(os.environ["TMPDIR"], "left")):
    open(p, "w").write("from an earlier run")
`
	for i := range 2 {
		res := MustRun(t, e, Script("scripts/fresh.py", src))
		if res.Stdout.Text != "[]\n" {
			t.Errorf("run %d saw %s(stderr %q): an earlier run's files", i+1, res.Stdout.Text, res.Stderr.Text)
		}
	}
	if _, err := os.Stat("left.txt"); err == nil {
		t.Errorf("a run wrote into the process working directory")
	}
}

func testConcurrent(t *testing.T, e codeexec.Executor) {
	const n = 32
	src := `import os, sys
token = sys.argv[1]
open("out.txt", "w").write(token)
open(os.path.join(os.environ["TMPDIR"], "t"), "w").write(token)
assert open(os.path.join(os.environ["TMPDIR"], "t")).read() == token
assert open("data/in.txt").read() == token
print(token)
`
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			token := fmt.Sprintf("run-%02d-%s", i, randHex(4))
			req := &codeexec.Request{
				Skill:  Skill(map[string]string{"scripts/c.py": src, "data/in.txt": token}),
				Script: "scripts/c.py",
				Args:   []string{token},
			}
			res, err := e.Execute(context.Background(), req)
			switch {
			case err != nil:
				errs <- err
			case res.ExitCode != 0 || res.Stdout.Text != token+"\n":
				errs <- fmt.Errorf("%s: exit %d stdout %q stderr %q", token, res.ExitCode, res.Stdout.Text, res.Stderr.Text)
			case len(res.Files) != 1 || res.Files[0].Path != "out.txt" || string(res.Files[0].Data) != token:
				errs <- fmt.Errorf("%s: files %v", token, Paths(res.Files))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Sizes of OutputTail.
const (
	tailRuns        = 16      // concurrent runs, in Run
	tailStreamBytes = 3 << 20 // printed on each stream before the sentinel: more than a pipe holds
)

// OutputTail fails t unless a run that exits 0 returns the end of its
// output, however far behind the reader is when the script exits: runs
// concurrent runs each fill both pipes and exit at once, so the readers
// lag. Run includes it; run it on its own to check that an option of the
// executor cannot cut the streams (a WaitDelay far shorter than that lag:
// every writer is dead, and the pipes only wait to be drained).
func OutputTail(t *testing.T, e codeexec.Executor, runs int) {
	t.Helper()
	src := `import os, sys
n, sentinel = int(sys.argv[1]), sys.argv[2]
line = b"x" * 1023 + b"\n"
block = line * 1024
for i in range(0, n, len(block)):
    for fd in (1, 2):
        mv = memoryview(block)[:n - i]
        while mv:
            mv = mv[os.write(fd, mv):]
for fd in (1, 2):
    os.write(fd, (sentinel + "\n").encode())
os._exit(0)  # at once, with the pipes full
`
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			sentinel := fmt.Sprintf("END-%02d-%s", i, randHex(4))
			req := Script("scripts/tail.py", src)
			req.Args = []string{strconv.Itoa(tailStreamBytes), sentinel}
			res, err := e.Execute(context.Background(), req)
			if err != nil {
				errs <- err
				return
			}
			want := int64(tailStreamBytes + len(sentinel) + 1)
			for _, s := range []struct {
				name string
				got  codeexec.Stream
			}{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
				if res.ExitCode != 0 || !strings.HasSuffix(s.got.Text, "\n"+sentinel+"\n") || s.got.TotalChars != want {
					errs <- fmt.Errorf("%s: exit %d, %s: %d chars of %d, ends %q",
						sentinel, res.ExitCode, s.name, s.got.TotalChars, want, s.got.Text[max(0, len(s.got.Text)-40):])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// RunBounded runs req, cancelling its context after cancelAt when non-zero,
// and fails the test when Execute has not returned after hardDeadline, so
// a broken kill fails instead of hanging. It returns the result and how
// long Execute took.
func RunBounded(t testing.TB, e codeexec.Executor, req *codeexec.Request, cancelAt time.Duration) (*codeexec.Result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cancelAt > 0 {
		time.AfterFunc(cancelAt, cancel)
	}
	type outcome struct {
		res *codeexec.Result
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := e.Execute(ctx, req)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("Execute: %v", o.err)
		}
		return o.res, time.Since(start)
	case <-time.After(hardDeadline):
		t.Fatalf("Execute still running after %v", hardDeadline)
		return nil, 0
	}
}

// ByteRange is n bytes counting up from 0, wrapping at 256.
func ByteRange(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// modeOr is the mode a file staged with mode m gets.
func modeOr(m fs.FileMode, script bool) fs.FileMode {
	switch {
	case m != 0:
		return m
	case script:
		return 0o755
	}
	return 0o644
}
