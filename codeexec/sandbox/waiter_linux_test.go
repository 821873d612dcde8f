package sandbox

import (
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// waiterDumpArg, after "--", makes this test binary print what it was
// started with (see TestWaiterDump).
const waiterDumpArg = "adkskills-waiter-dump"

// waiterDump is what TestWaiterDump prints: bytes, as any may be in an
// argument or a variable.
type waiterDump struct {
	Args [][]byte `json:"args"`
	Env  [][]byte `json:"env"`
	Dir  string   `json:"dir"`
	GoFD string   `json:"go_fd"` // what goFD is, if it is open
}

// TestWaiterDump is not a test of its own: the waiter's program tests
// execute this binary through it, and it prints its arguments after
// waiterDumpArg, its environment, its folder and its goFD, then exits.
func TestWaiterDump(t *testing.T) {
	args := flag.Args()
	if len(args) == 0 || args[0] != waiterDumpArg {
		t.Skip("run by the waiter's program tests")
	}
	dir, _ := os.Getwd()
	fd, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(goFD))
	bytes := func(ss []string) [][]byte {
		b := make([][]byte, len(ss))
		for i, s := range ss {
			b[i] = []byte(s)
		}
		return b
	}
	_ = json.NewEncoder(os.Stdout).Encode(waiterDump{Args: bytes(args[1:]), Env: bytes(os.Environ()), Dir: dir, GoFD: fd})
	os.Exit(0)
}

// runProgram runs the waiter's program for args and env as the waiter
// would (the host's shell, an empty environment, in /, goFD open on a
// pipe) and returns what the test binary it executes saw, and the pipe's
// name.
func runProgram(t *testing.T, exact bool, args, env []string) (gotArgs, gotEnv []string, pipe string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	envPath, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env")
	}
	dir := t.TempDir()
	argv := append([]string{exe, "-test.run=^TestWaiterDump$", "--", waiterDumpArg}, args...)
	prog, err := program(envPath, exact, dir, argv, env)
	if err != nil {
		t.Fatalf("program: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	pipe, _ = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(r.Fd())))
	cmd := exec.Command(shPath, "-c", prog)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = make([]*os.File, goFD-2) // goFD is the last
	cmd.ExtraFiles[goFD-3] = r
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s\nprogram:\n%s", err, out, prog)
	}
	var d waiterDump
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if d.Dir != dir {
		t.Errorf("folder %q, want %q", d.Dir, dir)
	}
	if d.GoFD == pipe {
		t.Errorf("the script inherited the waiter's pipe %s", pipe)
	}
	strs := func(bs [][]byte) []string {
		s := make([]string, len(bs))
		for i, b := range bs {
			s[i] = string(b)
		}
		return s
	}
	return strs(d.Args), strs(d.Env), pipe
}

// envMap is env as the environment it makes: the last of a name wins.
func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestWaiterProgram: the script gets exactly its arguments and its
// environment, whatever bytes they hold, in its folder, without the
// waiter's pipe, whether the shell exports the environment itself or
// env does.
func TestWaiterProgram(t *testing.T) {
	if _, err := os.Stat(shPath); err != nil {
		t.Skip("no " + shPath)
	}
	tricky := []string{"", " ", "'", `'\''`, `"`, "\\", "$HOME", "$(touch /tmp/x)", "`id`", "a\nb", "*", "~", "-i", "--", "a=b", "\t", "é ✓", "; exit 3", "'\n'"}
	tests := []struct {
		name string
		args []string
		env  []string
	}{
		{"plain", []string{"a", "b c"}, []string{"PATH=/usr/bin:/bin", "HOME=/workspace/home", "PWD=/workspace/s"}},
		{"tricky arguments", tricky, []string{"A=1"}},
		{"tricky values", nil, slices.Collect(func(yield func(string) bool) {
			for i, v := range tricky {
				if !yield("V" + strconv.Itoa(i) + "=" + v) {
					return
				}
			}
		})},
		{"no environment", []string{"x"}, nil},
		{"a name twice", nil, []string{"A=1", "B=2", "A=3"}},
		// Names the shell would not export as given: env -i sets them.
		{"shell's own names", nil, []string{"LINENO=7", "IFS=x", "PPID=1", "OPTIND=9", "SHLVL=4", "_=u", "OLDPWD=/o", "PWD=/p"}},
		{"not a shell variable's name", nil, []string{"A-B=1", "1A=2", "A.B=3", "é=4"}},
	}
	for _, tt := range tests {
		for _, exact := range []bool{true, false} {
			t.Run(tt.name+"/exact="+strconv.FormatBool(exact), func(t *testing.T) {
				t.Parallel()
				args, env, _ := runProgram(t, exact, tt.args, tt.env)
				if !slices.Equal(args, tt.args) && len(args)+len(tt.args) > 0 {
					t.Errorf("arguments %q, want %q", args, tt.args)
				}
				if got, want := envMap(env), envMap(tt.env); !maps.Equal(got, want) || len(env) != len(want) {
					t.Errorf("environment %q, want %q", env, want)
				}
			})
		}
	}
}

// TestWaiterProgramRefuses: what the program could not say exactly is
// refused, and the run starts the usual way.
func TestWaiterProgramRefuses(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		env  []string
	}{
		{"no command", nil, nil},
		{"a command env would take for a variable", []string{"/a=b/python3"}, nil},
		{"a NUL in an argument", []string{"/usr/bin/python3", "a\x00b"}, nil},
		{"a NUL in a value", []string{"/usr/bin/python3"}, []string{"A=a\x00b"}},
		{"a name env would take for an option", []string{"/usr/bin/python3"}, []string{"-i=1"}},
		{"an empty name", []string{"/usr/bin/python3"}, []string{"=1"}},
		{"no =", []string{"/usr/bin/python3"}, []string{"A"}},
	}
	for _, tt := range tests {
		for _, exact := range []bool{true, false} {
			if _, err := program("/usr/bin/env", exact, "/workspace/s", tt.argv, tt.env); !errors.Is(err, errNotForWaiter) {
				t.Errorf("%s, exact %v: %v, want errNotForWaiter", tt.name, exact, err)
			}
		}
	}
}

// FuzzWaiterProgram: any argument and variable reach the script as given,
// or the program is refused (a NUL byte; a name env cannot set).
func FuzzWaiterProgram(f *testing.F) {
	if _, err := os.Stat(shPath); err != nil {
		f.Skip("no " + shPath)
	}
	f.Add("a'b", "NAME", "v'al\nue", true)
	f.Add("$(id)", "A_1", "`id`", false)
	f.Add("-", "LINENO", "x", true)
	f.Fuzz(func(t *testing.T, arg, name, value string, exact bool) {
		env := []string{name + "=" + value}
		if _, err := program("/usr/bin/env", exact, "/w", []string{"/bin/x", arg}, env); err != nil {
			if !errors.Is(err, errNotForWaiter) {
				t.Fatal(err)
			}
			k, _, _ := strings.Cut(env[0], "=")
			if !hasNUL(arg) && !hasNUL(env[0]) && k != "" && k[0] != '-' {
				t.Fatalf("refused %q %q: %v", arg, env, err)
			}
			return
		}
		gotArgs, gotEnv, _ := runProgram(t, exact, []string{arg}, env)
		if len(gotArgs) != 1 || gotArgs[0] != arg {
			t.Errorf("arguments %q, want %q", gotArgs, arg)
		}
		if got, want := envMap(gotEnv), envMap(env); !maps.Equal(got, want) || len(gotEnv) != 1 {
			t.Errorf("environment %q, want %q", gotEnv, env)
		}
	})
}

// TestExportsNothing: dash exports nothing of its own, so the waiter
// exports the environment itself; bash exports SHLVL and _, so env sets
// it.
func TestExportsNothing(t *testing.T) {
	envPath, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env")
	}
	tests := []struct {
		shell string
		want  bool
	}{
		{"dash", true},
		{"bash", false},
		{filepath.Join(t.TempDir(), "no-such-shell"), false},
	}
	for _, tt := range tests {
		sh := tt.shell
		if !filepath.IsAbs(sh) {
			if sh, err = exec.LookPath(sh); err != nil {
				t.Logf("no %s here", tt.shell)
				continue
			}
		}
		if got := exportsNothing(sh, envPath); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.shell, got, tt.want)
		}
	}
}
