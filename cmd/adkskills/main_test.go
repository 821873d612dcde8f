package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain fails the run when a test wrote into the package folder, the
// process working directory: the command must never default to it.
func TestMain(m *testing.M) {
	followCurrentProvider()
	before := dirEntries(".")
	code := runTests(m)
	if after := dirEntries("."); !slices.Equal(before, after) {
		fmt.Fprintf(os.Stderr, "tests changed the working directory:\nbefore %v\nafter  %v\n", before, after)
		code = 1
	}
	os.Exit(code)
}

func dirEntries(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// repoRoot is the module root.
func repoRoot(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return p
}

func testSkills(t testing.TB) string { return filepath.Join(repoRoot(t), "testdata", "skills") }
func badSkills(t testing.TB) string  { return filepath.Join(repoRoot(t), "testdata", "badskills") }
func catalogueSkills(t testing.TB) string {
	return filepath.Join(repoRoot(t), "testdata", "catalogue")
}

// invocation is one in-process run of the command.
type invocation struct {
	args  []string
	stdin string
	vars  map[string]string // the environment; nil gets a fresh store
	wd    string
	user  string // the artifact store's user ("": the OS user)
	// kube finds --agent-sandbox's cluster (nil: the kubeconfig).
	kube func(getenv func(string) string) (*kubeTarget, error)
}

type outcome struct {
	code           int
	stdout, stderr string
}

// store returns an environment whose artifact store is a fresh temporary
// folder, and that folder.
func store(t *testing.T) (map[string]string, string) {
	dir := t.TempDir()
	return map[string]string{"ADKSKILLS_ARTIFACTS": dir, "HOME": t.TempDir()}, dir
}

func invoke(t *testing.T, in invocation) outcome {
	t.Helper()
	vars := in.vars
	if vars == nil {
		vars, _ = store(t)
	}
	var stdout, stderr bytes.Buffer
	e := env{getenv: func(k string) string { return vars[k] }, wd: in.wd, user: in.user, kube: in.kube}
	code := run(context.Background(), in.args, strings.NewReader(in.stdin), &stdout, &stderr, e)
	return outcome{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestHelpAndUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a prefix of stdout; stderr must be empty
		stderr string // a piece of stderr; stdout must be empty
	}{
		{name: "no command", args: nil, code: exitUsage, stderr: "Commands:"},
		{name: "help", args: []string{"--help"}, code: exitOK, stdout: "adkskills runs Agent Skills' scripts"},
		{name: "help word", args: []string{"help"}, code: exitOK, stdout: "adkskills runs"},
		{name: "help for a command", args: []string{"help", "validate"}, code: exitOK, stdout: "Usage: adkskills validate [--skills DIR]"},
		{name: "run help", args: []string{"run", "--help"}, code: exitOK, stdout: "Usage: adkskills run [flags] SKILL SCRIPT [-- ARGS...]"},
		{name: "run -h", args: []string{"run", "-h"}, code: exitOK, stdout: "Usage: adkskills run"},
		{name: "list help", args: []string{"list", "--help"}, code: exitOK, stdout: "Usage: adkskills list [--skills DIR]"},
		{name: "validate help", args: []string{"validate", "--help"}, code: exitOK, stdout: "Usage: adkskills validate"},
		{name: "chat help", args: []string{"chat", "--help"}, code: exitOK, stdout: "Usage: adkskills chat [flags]"},
		{name: "artifacts help", args: []string{"artifacts", "--help"}, code: exitOK, stdout: "Usage: adkskills artifacts [ls] [flags]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := invoke(t, invocation{args: tt.args})
			assert.Equal(t, tt.code, o.code, "stderr: %s", o.stderr)
			if tt.stdout != "" {
				assert.True(t, strings.HasPrefix(o.stdout, tt.stdout), "stdout: %s", o.stdout)
				assert.Empty(t, o.stderr)
			}
			if tt.stderr != "" {
				assert.Contains(t, o.stderr, tt.stderr)
				assert.Empty(t, o.stdout)
			}
		})
	}
}

// TestUsageErrors: a malformed command line is its cause on one line and
// where the usage is on the next, nothing more, and exit status 2.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		cause string // the first line, after "adkskills: "
		help  string // the command whose --help the second line names ("": the main one)
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`, ""},
		{"run bad flag", []string{"run", "--bogus", "a", "b"}, "run: unknown flag --bogus; the script's own arguments go after --: adkskills run SKILL SCRIPT -- --bogus", "run"},
		{"a script's flag before --", []string{"run", "report-writer", "scripts/report.py", "--name", "Ada"}, "run: unknown flag --name; the script's own arguments go after --: adkskills run SKILL SCRIPT -- --name", "run"},
		{"run without a script", []string{"run", "report-writer"}, "run needs a SKILL and a SCRIPT, e.g. adkskills run report-writer scripts/report.py -- Ada", "run"},
		{"list bad flag", []string{"list", "--nope"}, "list: unknown flag --nope (its flags: --skills)", "list"},
		{"validate DIR", []string{"validate", "x"}, `validate: unexpected argument "x": to check the skills in x, run adkskills validate --skills x`, "validate"},
		{"list DIR", []string{"list", "my skills"}, `list: unexpected argument "my skills": to list the skills in my skills, run adkskills list --skills 'my skills'`, "list"},
		{"validate two arguments", []string{"validate", "x", "y"}, `validate: unexpected argument "x"`, "validate"},
		{"chat bad flag", []string{"chat", "--timeout", "soon"}, `chat: invalid value "soon" for --timeout DURATION`, "chat"},
		{"a flag without its value", []string{"run", "x", "y", "--timeout"}, "run: --timeout needs a value: --timeout DURATION", "run"},
		{"a bad boolean", []string{"run", "--json=maybe", "x", "y"}, `run: invalid value "maybe" for --json (true or false)`, "run"},
		{"a bad number", []string{"artifacts", "cat", "x", "--version", "last"}, `artifacts: invalid value "last" for --version N`, "artifacts"},
		{"bad flag syntax", []string{"list", "---x"}, "list: bad flag syntax: ---x", "list"},
		{"deleted is for ls", []string{"artifacts", "cat", "x", "--deleted"}, "artifacts cat: --deleted is for ls", "artifacts"},
		{"artifacts bad flag", []string{"artifacts", "ls", "--x"}, "artifacts: unknown flag --x (its flags: --app, --artifacts, --deleted, --session, --user, --version)", "artifacts"},
		{"web and a model with the demo", []string{"web", "--demo", "--model", "gemini-2.5-pro"}, "web: --demo is the built-in demo model: leave out --model", "web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := invoke(t, invocation{args: tt.args})
			assert.Equal(t, exitUsage, o.code)
			pointer := "Run 'adkskills --help' for the commands.\n"
			if tt.help != "" {
				pointer = fmt.Sprintf("Run 'adkskills %s --help' for its usage.\n", tt.help)
			}
			assert.Equal(t, "adkskills: "+tt.cause+"\n"+pointer, o.stderr)
			assert.Empty(t, o.stdout)
		})
	}
}

// TestEveryCommandHasHelp keeps the command table and --help in step.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, cmd := range commands {
		o := invoke(t, invocation{args: []string{cmd.name, "--help"}})
		assert.Equal(t, exitOK, o.code, cmd.name)
		assert.True(t, strings.HasPrefix(o.stdout, "Usage: adkskills "+cmd.name), "%s: %s", cmd.name, o.stdout)
		assert.Contains(t, o.stdout, "\nFlags:\n", cmd.name)
	}
}

func TestSkillsDirDefault(t *testing.T) {
	folder := func(goMod string, withSkills bool) string {
		dir := t.TempDir()
		if goMod != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
		}
		if withSkills {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "testdata", "skills"), 0o755))
		}
		return dir
	}
	tests := []struct {
		name, wd, flag, want string
	}{
		{"a clone of this repository", repoRoot(t), "", filepath.Join("testdata", "skills")},
		{"this module, with a comment", folder("// mine\nmodule github.com/adkskills/adkskills // root\n\ngo 1.25\n", true), "", filepath.Join("testdata", "skills")},
		{"a user's repository with testdata/skills", folder("module example.com/mine\n", true), "", "skills"},
		{"a module whose path only starts like this one", folder("module github.com/adkskills/adkskills-fork\n", true), "", "skills"},
		{"testdata/skills without a go.mod", folder("", true), "", "skills"},
		{"this module without testdata/skills", folder("module github.com/adkskills/adkskills\n", false), "", "skills"},
		{"flag wins", repoRoot(t), "mine", "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cli{env: env{getenv: func(string) string { return "" }, wd: tt.wd}}
			assert.Equal(t, tt.want, c.skillsDir(tt.flag))
		})
	}
}

func TestGoModule(t *testing.T) {
	tests := []struct{ in, want string }{
		{"module example.com/a\n", "example.com/a"},
		{"\n// a comment\nmodule\texample.com/a // trailing\n", "example.com/a"},
		{"module \"example.com/q\"\n", "example.com/q"},
		{"modules example.com/a\nmodule example.com/b\n", "example.com/b"},
		{"go 1.25\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, goModule(strings.NewReader(tt.in)), "%q", tt.in)
	}
}

// TestSkillsDefaultInAUsersRepository: a user's own repository with a
// testdata/skills folder is not taken for this one's examples, and the
// error says why.
func TestSkillsDefaultInAUsersRepository(t *testing.T) {
	wd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(wd, "go.mod"), []byte("module example.com/mine\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(wd, "testdata", "skills", "fixture"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wd, "testdata", "skills", "fixture", "SKILL.md"), []byte("---\nname: fixture\ndescription: A test fixture.\n---\n"), 0o644))
	hint := "(set --skills; ./testdata/skills is the default only in a clone of github.com/adkskills/adkskills)"
	for _, cmd := range []string{"list", "validate", "run"} {
		args := []string{cmd}
		if cmd == "run" {
			args = append(args, "fixture", "scripts/x.py")
		}
		o := invoke(t, invocation{wd: wd, args: args})
		assert.Equal(t, exitUsage, o.code, cmd)
		assert.Contains(t, o.stderr, "skills folder skills does not exist", cmd)
		assert.Contains(t, o.stderr, hint, cmd)
		assert.NotContains(t, o.stdout, "fixture", cmd)
	}
}

func TestStoreDirDefault(t *testing.T) {
	wd := t.TempDir()
	tests := []struct {
		name string
		flag string
		vars map[string]string
		want string
	}{
		{"flag", "/x/store", map[string]string{"ADKSKILLS_ARTIFACTS": "/y"}, "/x/store"},
		{"relative flag is against the working directory", "store", nil, filepath.Join(wd, "store")},
		{"ADKSKILLS_ARTIFACTS", "", map[string]string{"ADKSKILLS_ARTIFACTS": "/y", "XDG_STATE_HOME": "/s", "HOME": "/h"}, "/y"},
		{"XDG_STATE_HOME", "", map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/adkskills/artifacts"},
		{"relative XDG_STATE_HOME is ignored", "", map[string]string{"XDG_STATE_HOME": "state", "HOME": "/h"}, "/h/.local/state/adkskills/artifacts"},
		{"HOME", "", map[string]string{"HOME": "/h"}, "/h/.local/state/adkskills/artifacts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cli{env: env{getenv: func(k string) string { return tt.vars[k] }, wd: wd}}
			got, err := c.storeDir(tt.flag)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// readAll reads a file the command printed the path of.
func readAll(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return string(b)
}

// FuzzGoModule: whatever the go.mod, the module path read is one word of
// one of its lines.
func FuzzGoModule(f *testing.F) {
	for _, s := range []string{"module example.com/a\n", "module \"x y\"\n", "// c\nmodule\tb // d\n", "modulex\n", "module"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := goModule(strings.NewReader(in))
		if got == "" {
			return
		}
		if strings.Contains(got, "\n") {
			t.Fatalf("%q gave %q, across lines", in, got)
		}
		if !strings.Contains(in, got) && !strings.Contains(in, strconv.Quote(got)) && !strings.Contains(in, "\"") && !strings.Contains(in, "`") {
			t.Fatalf("%q gave %q, which it does not hold", in, got)
		}
	})
}
