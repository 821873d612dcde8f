package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryExitCodes builds the command and runs it as a subprocess from
// the repository root, as the README does, to check the exit-code contract
// through main and os.Exit.
func TestBinaryExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)

	home, artifacts := t.TempDir(), t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a piece of stdout
		stderr string // a piece of stderr
	}{
		{"README command", []string{"run", "report-writer", "scripts/report.py", "--", "Ada"}, 0, "report.md -> artifact \"report.md\" version 1", ""},
		{"failure", []string{"run", "shell-tools", "scripts/fail.sh", "--", "9"}, 9, "error, exit code 9", ""},
		{"signal-sized exit code is clamped", []string{"run", "shell-tools", "scripts/fail.sh", "--", "130"}, 125, "exit code 130", ""},
		{"timeout", []string{"run", "--timeout", "300ms", "shell-tools", "scripts/hang.sh"}, 124, ": timeout,", ""},
		{"tool error", []string{"run", "no-such-skill", "scripts/x.py"}, 1, "", "adkskills: SKILL_NOT_FOUND: "},
		{"usage error", []string{"run", "report-writer"}, 2, "", "adkskills: run needs a SKILL and a SCRIPT, e.g. adkskills run report-writer scripts/report.py -- Ada\nRun 'adkskills run --help' for its usage.\n"},
		{"bad flag", []string{"list", "--colour"}, 2, "", "adkskills: list: unknown flag --colour (its flags: --skills)"},
		{"help", []string{"run", "--help"}, 0, "Usage: adkskills run", ""},
		{"validate errors", []string{"validate", "--skills", "testdata/badskills"}, 1, "10 skills, 10 problems (7 errors, 3 warnings)", ""},
		{"validate clean", []string{"validate"}, 0, "5 skills, 3 problems (0 errors, 3 warnings)", ""},
		{"list", []string{"list"}, 0, "report-writer\n", ""},
		{"artifacts", []string{"artifacts", "cat", "report.md"}, 0, "# Report for Ada", ""},
		{"chat without a key", []string{"chat"}, 2, "", "export GOOGLE_API_KEY="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Dir = repoRoot(t)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ADKSKILLS_ARTIFACTS=" + artifacts}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			assert.Contains(t, stdout.String(), tt.stdout)
			assert.Contains(t, stderr.String(), tt.stderr)
			if tt.stderr == "" {
				assert.Empty(t, stderr.String())
			}
			if tt.code != 0 && !strings.HasPrefix(tt.args[0], "validate") && tt.stderr != "" {
				assert.True(t, strings.HasPrefix(stderr.String(), "adkskills: "), stderr.String())
			}
		})
	}
}

// buildBinary builds the command into a temporary folder.
func buildBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build with")
	}
	bin := filepath.Join(t.TempDir(), "adkskills")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}
