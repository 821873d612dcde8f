//go:build linux

package agentsandbox

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
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/truncate"
)

// This file is codeexec's behaviour suite (codeexec/conformance_test.go),
// copied with the host-only cases left out, until main exports it as
// codeexectest.Run: then TestConformance calls that and this file goes.
// Left out: WithPassEnv and WithWaitDelay (host options: in a pod nothing
// of the host's environment exists, and a process that escapes the run's
// session holds its output for sandboxd's own 5 s drain, then dies with the
// pod) and WithWorkspaceDir (the workspace is the pod; TestClaimDeleted
// checks it goes).

// The suite's names, from codeexec.
type (
	Request      = codeexec.Request
	File         = codeexec.File
	Result       = codeexec.Result
	Stream       = codeexec.Stream
	OutputLimits = codeexec.OutputLimits
	Interpreter  = codeexec.Interpreter
)

var (
	ErrInvalidRequest    = codeexec.ErrInvalidRequest
	ErrUnsupportedScript = codeexec.ErrUnsupportedScript
	ErrStart             = codeexec.ErrStart
)

const (
	DefaultMaxOutputChars = codeexec.DefaultMaxOutputChars
	EncodingRaw           = codeexec.EncodingRaw
	EncodingBase64        = codeexec.EncodingBase64
	// pipeBytes is what the suite's tail case prints past: more than a
	// gRPC flow-control window holds.
	pipeBytes = windowBytes
)

// newExecutorFunc builds the executor under test with options.
type newExecutorFunc func(opts ...Option) codeexec.Executor

// markerVar is the environment variable that tags every process of a test
// run, so the test can find survivors in /proc.
const markerVar = "ADKSKILLS_TEST_RUN"

// grace is how long past its limit a killed run may take to return on a
// contended machine. A broken kill makes the run last sleepSeconds.
const (
	grace        = 2 * time.Second
	sleepSeconds = 300
	hardDeadline = 30 * time.Second // a test gives up on a run after this
)

// runConformance runs the whole suite against newExec.
func runConformance(t *testing.T, newExec newExecutorFunc) {
	t.Run("Interpreters", func(t *testing.T) { testInterpreters(t, newExec) })
	t.Run("Environment", func(t *testing.T) { testEnvironment(t, newExec) })
	t.Run("SecretsDoNotLeak", func(t *testing.T) { testSecretsDoNotLeak(t, newExec) })
	t.Run("ExitCodes", func(t *testing.T) { testExitCodes(t, newExec) })
	t.Run("Stdin", func(t *testing.T) { testStdin(t, newExec) })
	t.Run("StagingIsByteIdentical", func(t *testing.T) { testStaging(t, newExec) })
	t.Run("InvalidRequests", func(t *testing.T) { testInvalidRequests(t, newExec) })
	t.Run("OutputCapping", func(t *testing.T) { testOutputCapping(t, newExec) })
	t.Run("OutputFiles", func(t *testing.T) { testOutputFiles(t, newExec) })
	t.Run("Symlinks", func(t *testing.T) { testSymlinks(t, newExec) })
	t.Run("OutputLimits", func(t *testing.T) { testOutputLimits(t, newExec) })
	t.Run("ProcessTree", func(t *testing.T) { testProcessTree(t, newExec) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newExec) })
	t.Run("OutputTail", func(t *testing.T) { testOutputTail(t, newExec) })
}

// files builds request files from path -> content.
func files(m map[string]string) []File {
	out := make([]File, 0, len(m))
	for p, c := range m {
		out = append(out, File{Path: p, Data: []byte(c)})
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// script is a request running one script file.
func script(path, src string) *Request {
	return &Request{Files: files(map[string]string{path: src}), Script: path}
}

// mustRun executes req and fails the test on an error.
func mustRun(t *testing.T, e codeexec.Executor, req *Request) *Result {
	t.Helper()
	res, err := e.Execute(context.Background(), req)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

func testInterpreters(t *testing.T, newExec newExecutorFunc) {
	e := newExec()
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
		t.Run(filepath.Ext(tt.path), func(t *testing.T) {
			req := script(tt.path, tt.src)
			// Arguments reach argv as is, never through a shell.
			req.Args = []string{"$HOME; rm -rf x", "two words"}
			res := mustRun(t, e, req)
			want := "out ['$HOME; rm -rf x', 'two words']\n"
			if res.ExitCode != 0 || res.Stdout.Text != want {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0, %q", res.ExitCode, res.Stdout.Text, res.Stderr.Text, want)
			}
		})
	}

	t.Run("ExplicitInterpreter", func(t *testing.T) {
		req := script("scripts/run.txt", "print('explicit')")
		req.Interpreter = &Interpreter{Language: "python", Command: []string{"python3", "-S"}}
		if res := mustRun(t, e, req); res.Stdout.Text != "explicit\n" {
			t.Errorf("stdout %q, stderr %q", res.Stdout.Text, res.Stderr.Text)
		}
	})
	t.Run("Unsupported", func(t *testing.T) {
		_, err := e.Execute(context.Background(), script("scripts/a.rb", "puts 1"))
		if !errors.Is(err, ErrUnsupportedScript) {
			t.Errorf("err = %v, want ErrUnsupportedScript", err)
		}
	})
	t.Run("MissingInterpreter", func(t *testing.T) {
		req := script("scripts/a.py", "print(1)")
		req.Interpreter = &Interpreter{Language: "none", Command: []string{"no-such-interpreter-adkskills"}}
		if _, err := e.Execute(context.Background(), req); !errors.Is(err, ErrStart) {
			t.Errorf("err = %v, want ErrStart", err)
		}
	})
	t.Run("SiblingImport", func(t *testing.T) {
		// PYTHONPATH = skill root: "from scripts.helper import x" works.
		req := &Request{
			Files: files(map[string]string{
				"scripts/__init__.py": "",
				"scripts/helper.py":   "VALUE = 'sibling'\n",
				"scripts/main.py":     "from scripts.helper import VALUE\nprint(VALUE)\n",
			}),
			Script: "scripts/main.py",
		}
		res := mustRun(t, e, req)
		if res.Stdout.Text != "sibling\n" {
			t.Errorf("stdout %q, stderr %q", res.Stdout.Text, res.Stderr.Text)
		}
		// PYTHONDONTWRITEBYTECODE: no __pycache__ among the outputs.
		if len(res.Files) != 0 || len(res.Omitted) != 0 {
			t.Errorf("files %v, omitted %v: want none", paths(res.Files), res.Omitted)
		}
	})
}

func testEnvironment(t *testing.T, newExec newExecutorFunc) {
	src := `import os, json
print(json.dumps({"cwd": os.getcwd(), "env": dict(os.environ)}))
open(os.path.join(os.environ["HOME"], "cache"), "w").write("runtime cache")
open(os.path.join(os.environ["TMPDIR"], "scratch"), "w").write("scratch")
`
	req := script("scripts/env.py", src)
	req.Env = map[string]string{"EXTRA": "from request", "LANG": "en_US.UTF-8"}
	res := mustRun(t, newExec(WithEnv(map[string]string{"EXTRA": "from operator", "OPERATOR": "yes"})), req)
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
		"OPERATOR":                "yes",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
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
		t.Errorf("files %v: caches in HOME/TMPDIR must not be outputs", paths(res.Files))
	}
}

func testSecretsDoNotLeak(t *testing.T, newExec newExecutorFunc) {
	const secret = "AIza-test-secret-must-not-leak"
	t.Setenv("GOOGLE_API_KEY", secret)
	t.Setenv("ADKSKILLS_PASSED", "passed")
	src := `import os
print(os.environ.get("GOOGLE_API_KEY", "absent"))
print(os.environ.get("ADKSKILLS_PASSED", "absent"))
print(open("/proc/self/environ", "rb").read().count(b"GOOGLE_API_KEY"))
`
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"Default", nil, "absent\nabsent\n0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, newExec(tt.opts...), script("scripts/leak.py", src))
			if res.Stdout.Text != tt.want {
				t.Errorf("stdout %q (stderr %q), want %q", res.Stdout.Text, res.Stderr.Text, tt.want)
			}
		})
	}
}

func testExitCodes(t *testing.T, newExec newExecutorFunc) {
	e := newExec()
	tests := []struct {
		name, src string
		want      int
	}{
		{"Zero", "exit 0", 0},
		{"Three", "echo oops >&2; exit 3", 3},
		{"SIGTERM", "kill -TERM $$", 128 + int(syscall.SIGTERM)},
		{"SIGKILL", "kill -KILL $$", 128 + int(syscall.SIGKILL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRun(t, e, script("scripts/exit.sh", tt.src))
			if res.ExitCode != tt.want || res.TimedOut {
				t.Errorf("exit %d timed out %v, want %d false", res.ExitCode, res.TimedOut, tt.want)
			}
			if res.Duration <= 0 {
				t.Errorf("duration %v", res.Duration)
			}
		})
	}
}

func testStdin(t *testing.T, newExec newExecutorFunc) {
	e := newExec()
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
			req := script("scripts/stdin.py", src)
			req.Stdin = tt.stdin
			if res := mustRun(t, e, req); res.Stdout.Text != tt.want {
				t.Errorf("stdout %q (stderr %q), want %q", res.Stdout.Text, res.Stderr.Text, tt.want)
			}
		})
	}
}

func testStaging(t *testing.T, newExec newExecutorFunc) {
	binary := make([]byte, 256*4)
	for i := range binary {
		binary[i] = byte(i)
	}
	src := `import hashlib, os, stat, sys
for p in sys.argv[1:]:
    data = open(p, "rb").read()
    print(p, len(data), hashlib.sha256(data).hexdigest(), oct(stat.S_IMODE(os.stat(p).st_mode)))
`
	req := &Request{
		Files: []File{
			{Path: "assets/blob.bin", Data: binary},
			{Path: "assets/tool", Data: []byte("#!/bin/sh\n"), Mode: 0o750},
			{Path: "data/deep/nested/x.txt", Data: []byte("ü\r\n")},
			{Path: "scripts/check.py", Data: []byte(src)},
		},
		Script: "scripts/check.py",
		Args:   []string{"assets/blob.bin", "assets/tool", "data/deep/nested/x.txt", "scripts/check.py"},
	}
	res := mustRun(t, newExec(), req)
	var want strings.Builder
	for _, f := range req.Files {
		mode := f.Mode
		switch {
		case mode != 0:
		case f.Path == req.Script:
			mode = 0o755
		default:
			mode = 0o644
		}
		fmt.Fprintf(&want, "%s %d %s 0o%o\n", f.Path, len(f.Data), sha256Hex(f.Data), mode)
	}
	if res.Stdout.Text != want.String() {
		t.Errorf("staged:\n%s\nstderr %s\nwant:\n%s", res.Stdout.Text, res.Stderr.Text, want.String())
	}
	if len(res.Files) != 0 {
		t.Errorf("files %v: staged files read but not changed are not outputs", paths(res.Files))
	}
}

func testInvalidRequests(t *testing.T, newExec newExecutorFunc) {
	e := newExec()
	ok := func(p string) File { return File{Path: p, Data: []byte("x")} }
	tests := []struct {
		name string
		req  *Request
	}{
		{"Nil", nil},
		{"NoFiles", &Request{Script: "a.py"}},
		{"ScriptNotAmongFiles", &Request{Files: []File{ok("a.py")}, Script: "b.py"}},
		{"EmptyScript", &Request{Files: []File{ok("a.py")}}},
		{"EmptyPath", &Request{Files: []File{ok(""), ok("a.py")}, Script: "a.py"}},
		{"Absolute", &Request{Files: []File{ok("/etc/x"), ok("a.py")}, Script: "a.py"}},
		{"DotDot", &Request{Files: []File{ok("../x"), ok("a.py")}, Script: "a.py"}},
		{"DotDotInside", &Request{Files: []File{ok("a/../../x"), ok("a.py")}, Script: "a.py"}},
		{"Dot", &Request{Files: []File{ok("."), ok("a.py")}, Script: "a.py"}},
		{"Unclean", &Request{Files: []File{ok("a//b"), ok("a.py")}, Script: "a.py"}},
		{"DotElement", &Request{Files: []File{ok("./a"), ok("a.py")}, Script: "a.py"}},
		{"TrailingSlash", &Request{Files: []File{ok("a/"), ok("a.py")}, Script: "a.py"}},
		{"Backslash", &Request{Files: []File{ok(`..\x`), ok("a.py")}, Script: "a.py"}},
		{"NUL", &Request{Files: []File{ok("a\x00b"), ok("a.py")}, Script: "a.py"}},
		{"Duplicate", &Request{Files: []File{ok("a.py"), ok("a.py")}, Script: "a.py"}},
		{"FileAndDir", &Request{Files: []File{ok("a"), ok("a/b"), ok("a.py")}, Script: "a.py"}},
		{"DirAndFile", &Request{Files: []File{ok("a/b"), ok("a"), ok("a.py")}, Script: "a.py"}},
		{"ScriptAbsolute", &Request{Files: []File{ok("a.py")}, Script: "/a.py"}},
		{"Base64", &Request{Files: []File{{Path: "a.py", Data: []byte("eA=="), Encoding: EncodingBase64}}, Script: "a.py"}},
		{"ModeSetuid", &Request{Files: []File{{Path: "a.py", Mode: 0o4755}}, Script: "a.py"}},
		{"ArgNUL", &Request{Files: []File{ok("a.py")}, Script: "a.py", Args: []string{"a\x00"}}},
		{"EnvName", &Request{Files: []File{ok("a.py")}, Script: "a.py", Env: map[string]string{"A=B": "x"}}},
		{"EnvEmptyName", &Request{Files: []File{ok("a.py")}, Script: "a.py", Env: map[string]string{"": "x"}}},
		{"EnvValueNUL", &Request{Files: []File{ok("a.py")}, Script: "a.py", Env: map[string]string{"A": "\x00"}}},
		{"NegativeTimeout", &Request{Files: []File{ok("a.py")}, Script: "a.py", Timeout: -time.Second}},
		{"NegativeLimit", &Request{Files: []File{ok("a.py")}, Script: "a.py", Limits: OutputLimits{MaxFiles: -1}}},
		{"BadInterpreter", &Request{Files: []File{ok("a.py")}, Script: "a.py", Interpreter: &Interpreter{Language: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Execute(context.Background(), tt.req)
			if !errors.Is(err, ErrInvalidRequest) || res != nil {
				t.Errorf("Execute = %v, %v; want nil, ErrInvalidRequest", res, err)
			}
		})
	}
}

func testOutputCapping(t *testing.T, newExec newExecutorFunc) {
	e := newExec()
	// Multi-byte characters, past the cap, on both streams.
	tests := []struct {
		name     string
		maxChars int // 0: the default
		chars    int
	}{
		{"UnderDefault", 0, DefaultMaxOutputChars},
		{"OverDefault", 0, 3*DefaultMaxOutputChars + 7},
		{"Small", 10, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// stdout: "é0123456789é0123..." ; stderr: the same in reverse
			src := `import sys
n = int(sys.argv[1])
s = "".join("é" if i % 11 == 0 else str(i % 11 - 1) for i in range(n))
sys.stdout.write(s)
sys.stderr.write(s[::-1])
`
			req := script("scripts/noisy.py", src)
			req.Args = []string{strconv.Itoa(tt.chars)}
			req.MaxOutputChars = tt.maxChars
			res := mustRun(t, e, req)
			var b strings.Builder
			for i := range tt.chars {
				if i%11 == 0 {
					b.WriteString("é")
				} else {
					b.WriteString(strconv.Itoa(i%11 - 1))
				}
			}
			cap := cmp.Or(tt.maxChars, DefaultMaxOutputChars)
			for _, s := range []struct {
				name string
				got  Stream
				full string
			}{{"stdout", res.Stdout, b.String()}, {"stderr", res.Stderr, reverse(b.String())}} {
				want := Stream{Text: truncate.String(s.full, cap), TotalChars: int64(tt.chars), Truncated: tt.chars > cap}
				if s.got != want {
					t.Errorf("%s: got %d chars total %d truncated %v, want %d chars total %d truncated %v",
						s.name, len([]rune(s.got.Text)), s.got.TotalChars, s.got.Truncated,
						len([]rune(want.Text)), want.TotalChars, want.Truncated)
				}
			}
		})
	}
}

func testOutputFiles(t *testing.T, newExec newExecutorFunc) {
	staged := map[string]string{
		"data/same.txt":      "unchanged content",
		"data/rewritten.txt": "AAAAAAAA", // rewritten with the same size and mtime
		"data/grown.txt":     "short",
		"data/deleted.txt":   "gone",
		"data/chmod.txt":     "only the mode changes",
	}
	src := `import os
os.makedirs("dist/deep", exist_ok=True)
open("dist/deep/report.bin", "wb").write(bytes(range(256)))
open("top.txt", "w").write("top")
open("a.txt", "w").write("sorts before a/")
os.makedirs("a", exist_ok=True)
open("a/b.txt", "w").write("nested")
st = os.stat("data/rewritten.txt")
open("data/rewritten.txt", "w").write("BBBBBBBB")
os.utime("data/rewritten.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
open("data/grown.txt", "a").write(" and longer")
os.remove("data/deleted.txt")
os.chmod("data/chmod.txt", 0o600)
open("data/same.txt").read()
os.makedirs("empty/dir", exist_ok=True)
`
	staged["scripts/write.py"] = src
	req := &Request{Files: files(staged), Script: "scripts/write.py"}
	res := mustRun(t, newExec(), req)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Text)
	}
	want := map[string]string{
		"a.txt":                "sorts before a/",
		"a/b.txt":              "nested",
		"data/grown.txt":       "short and longer",
		"data/rewritten.txt":   "BBBBBBBB",
		"dist/deep/report.bin": string(byteRange(256)),
		"top.txt":              "top",
	}
	got := map[string]string{}
	for _, f := range res.Files {
		got[f.Path] = string(f.Data)
		if f.Encoding != EncodingRaw {
			t.Errorf("%s: encoding %q, want raw", f.Path, f.Encoding)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files:\n got %q\nwant %q", got, want)
	}
	if !slices.IsSortedFunc(res.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("files not sorted by path: %v", paths(res.Files))
	}
	if len(res.Omitted) != 0 {
		t.Errorf("omitted %v, want none", res.Omitted)
	}
}

func testSymlinks(t *testing.T, newExec newExecutorFunc) {
	src := `import os
open(os.path.join(os.environ["HOME"], "outside.txt"), "w").write("outside the skill root")
os.symlink("/etc/passwd", "passwd")
os.symlink(os.path.join(os.environ["HOME"], "outside.txt"), "outside.txt")
os.symlink("/etc", "etc")
os.symlink(os.environ["HOME"], "home")
os.symlink("scripts/links.py", "inside.py")
os.symlink("/nonexistent/dangling", "dangling")
os.mkdir("out")
os.symlink("/etc/hostname", "out/hostname")
os.mkfifo("fifo")
open("real.txt", "w").write("real")
`
	res := mustRun(t, newExec(), script("scripts/links.py", src))
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Text)
	}
	if got := paths(res.Files); !slices.Equal(got, []string{"real.txt"}) {
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

func testOutputLimits(t *testing.T, newExec newExecutorFunc) {
	e := newExec()
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
		limits      OutputLimits
		wantFiles   []string
		wantOmitted map[string]string
	}{
		{"Count", 5, false, OutputLimits{MaxFiles: 3},
			[]string{"f0", "f1", "f2"}, map[string]string{"f3": "3 files", "f4": "3 files"}},
		{"PerFile", 3, true, OutputLimits{MaxFileBytes: size},
			[]string{"f0", "f2"}, map[string]string{"f1": fmt.Sprintf("%d-byte limit per file", size)}},
		{"Total", 3, false, OutputLimits{MaxTotalBytes: 2*size + size/2},
			[]string{"f0", "f1"}, map[string]string{"f2": fmt.Sprintf("%d-byte limit for all files", 2*size+size/2)}},
		{"Defaults", 3, false, OutputLimits{}, []string{"f0", "f1", "f2"}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := script("scripts/many.py", src)
			big := "no"
			if tt.big {
				big = "big"
			}
			req.Args = []string{strconv.Itoa(tt.n), strconv.Itoa(size), big}
			req.Limits = tt.limits
			res := mustRun(t, e, req)
			if got := paths(res.Files); !slices.Equal(got, tt.wantFiles) {
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

// treeCase is a run whose process tree must be gone when Execute returns.
type treeCase struct {
	name     string
	src      string        // bash
	timeout  time.Duration // the request's
	cancelAt time.Duration // cancel the context after this; 0: never
	within   time.Duration // Execute must return within this
	timedOut bool
	exitCode int
}

func testProcessTree(t *testing.T, newExec newExecutorFunc) {
	const limit = time.Second
	killed := 128 + int(syscall.SIGKILL)
	sleep := fmt.Sprintf("sleep %d", sleepSeconds)
	tests := []treeCase{
		// The script exits at once; its background child holds stdout.
		{name: "BackgroundChild", src: sleep + " &\necho started", timeout: time.Minute, within: grace},
		// Same, with the child's output sent elsewhere: nothing holds the
		// call, the child must still die with the run.
		{name: "DetachedChild", src: "nohup " + sleep + " >/dev/null 2>&1 &\necho started", timeout: time.Minute, within: grace},
		{name: "InfiniteLoop", src: "while :; do :; done", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "TrapsSIGTERM", src: "trap 'echo ignored' TERM\n" + sleep + " &\nwhile :; do sleep 0.1; done", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "Python", src: "python3 -c 'import subprocess, time; subprocess.Popen([\"sleep\", \"" + strconv.Itoa(sleepSeconds) + "\"]); time.sleep(" + strconv.Itoa(sleepSeconds) + ")'", timeout: limit, within: limit + grace, timedOut: true, exitCode: killed},
		{name: "ContextCancelled", src: sleep + " &\nwait", timeout: time.Minute, cancelAt: limit / 2, within: limit/2 + grace, timedOut: true, exitCode: killed},
	}
	// A WaitDelay longer than every bound: only the group kill can end
	// these runs in time.
	e := newExec()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := newMarker(t)
			req := script("scripts/tree.sh", tt.src)
			req.Timeout = tt.timeout
			req.Env = map[string]string{markerVar: marker}
			res, elapsed := runBounded(t, e, req, tt.cancelAt, marker)
			if elapsed > tt.within {
				t.Errorf("Execute took %v, want within %v", elapsed, tt.within)
			}
			if res.TimedOut != tt.timedOut || res.ExitCode != tt.exitCode {
				t.Errorf("timed out %v exit %d, want %v %d (stderr %q)", res.TimedOut, res.ExitCode, tt.timedOut, tt.exitCode, res.Stderr.Text)
			}
			if pids := survivors(marker); len(pids) > 0 {
				t.Errorf("processes of the run survived it: %v", describe(pids))
			}
		})
	}
}

func testConcurrent(t *testing.T, newExec newExecutorFunc) {
	const n = 16
	e := newExec()
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
			req := &Request{
				Files:  files(map[string]string{"scripts/c.py": src, "data/in.txt": token}),
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
				errs <- fmt.Errorf("%s: files %v", token, res.Files)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Sizes of testOutputTail.
const (
	tailRuns        = 16            // concurrent runs
	tailStreamBytes = 3 * pipeBytes // printed on each stream before the sentinel: more than a pipe holds
)

// testOutputTail: a run that exits 0 returns the end of its output, however
// far behind the reader is when the script exits. Many concurrent runs fill
// their pipes and exit at once, so the readers lag; a WaitDelay much shorter
// than that lag must not cut the streams, because every writer is dead and
// the pipes are only waiting to be drained.
func testOutputTail(t *testing.T, newExec newExecutorFunc) {
	e := newExec()
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
	errs := make(chan error, tailRuns)
	for i := range tailRuns {
		wg.Go(func() {
			sentinel := fmt.Sprintf("END-%02d-%s", i, randHex(4))
			req := script("scripts/tail.py", src)
			req.Args = []string{strconv.Itoa(tailStreamBytes), sentinel}
			res, err := e.Execute(context.Background(), req)
			if err != nil {
				errs <- err
				return
			}
			want := int64(tailStreamBytes + len(sentinel) + 1)
			for _, s := range []struct {
				name string
				got  Stream
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

// runBounded runs req, cancelling its context after cancelAt when non-zero,
// and gives up after hardDeadline (killing the run's processes) so a broken
// kill fails the test instead of hanging it.
func runBounded(t *testing.T, e codeexec.Executor, req *Request, cancelAt time.Duration, marker string) (*Result, time.Duration) {
	t.Helper()
	t.Cleanup(func() { killMarked(marker) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cancelAt > 0 {
		time.AfterFunc(cancelAt, cancel)
	}
	type outcome struct {
		res *Result
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
		killMarked(marker)
		t.Fatalf("Execute still running after %v", hardDeadline)
		return nil, 0
	}
}

// newMarker returns a value for markerVar unique to this test run.
func newMarker(t *testing.T) string {
	return strings.ReplaceAll(t.Name(), "/", ".") + "-" + randHex(8)
}

// survivors returns the live (non-zombie) processes whose environment
// carries markerVar=marker, waiting briefly for SIGKILLed ones to finish
// exiting.
func survivors(marker string) []int {
	var pids []int
	for deadline := time.Now().Add(grace); ; time.Sleep(20 * time.Millisecond) {
		pids = markedProcesses(marker)
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
	}
}

// markedProcesses scans /proc for live processes tagged with marker.
func markedProcesses(marker string) []int {
	needle := []byte(markerVar + "=" + marker + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue // exited, waiting to be reaped
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(environ, needle) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killMarked SIGKILLs every process tagged with marker (test cleanup only).
func killMarked(marker string) {
	for _, pid := range markedProcesses(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// describe names pids with their command lines.
func describe(pids []int) []string {
	var out []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func paths(fs []File) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func byteRange(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
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
