package deps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/adkskills/adkskills/internal/truncate"
)

// Running pip and npm: the operator's environment, a time limit, the whole
// process group killed when it is over, the output kept within bounds and
// read line by line for the lines that say what went wrong.

// maxScanLine bounds one line kept for classification, maxScanLines how
// many are kept.
const (
	maxScanLine  = 1024
	maxScanLines = 64
)

// installerEnv is the environment pip and npm run with: Config.Env or
// the agent's own, without what would move their output somewhere else
// than the store chooses (drop), with set on top.
func (s *Store) installerEnv(drop []string, set ...string) []string {
	base := s.cfg.Env
	if base == nil {
		base = os.Environ()
	}
	var out []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			if strings.EqualFold(k, d) {
				keep = false
			}
		}
		for _, kv2 := range set {
			if k2, _, _ := strings.Cut(kv2, "="); k2 == k {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// lookupIn returns the value of name in env ("K=V" entries, last wins).
func lookupIn(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// lookPath finds prog (a name, or a path) in the PATH of env.
func lookPath(prog string, env []string) (string, error) {
	if strings.ContainsRune(prog, filepath.Separator) || strings.Contains(prog, "/") {
		return exec.LookPath(prog)
	}
	for _, d := range filepath.SplitList(lookupIn(env, "PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(d, prog)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH %q", prog, lookupIn(env, "PATH"))
}

// outputScan is an installer's output: capped as a whole, and its lines
// (each cut at maxScanLine) kept when keep says so, up to maxScanLines.
type outputScan struct {
	mu    sync.Mutex
	all   *truncate.Capper
	keep  func(line string) bool
	lines []string
	part  []byte // the line being read
}

func newOutputScan(keep func(string) bool) *outputScan {
	return &outputScan{all: truncate.NewCapper(maxOutputChars), keep: keep}
}

// Write takes output of both streams (they share one scan).
func (o *outputScan) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	_, _ = o.all.Write(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxScanLine - len(o.part); room > 0 {
			o.part = append(o.part, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			break
		}
		o.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// endLine files the line read so far.
func (o *outputScan) endLine() {
	line := strings.TrimSpace(strings.ToValidUTF8(string(o.part), "\uFFFD"))
	o.part = o.part[:0]
	if line != "" && len(o.lines) < maxScanLines && o.keep(line) {
		o.lines = append(o.lines, line)
	}
}

// text is the capped output; kept the lines kept (a last line without a
// newline included).
func (o *outputScan) text() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all.String()
}

func (o *outputScan) kept() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.part) > 0 {
		o.endLine()
	}
	return o.lines
}

// run runs argv in dir with env until it ends or the install timeout or
// ctx ends it (the caller tells the latter by ctx.Err()); its output goes
// to out. It returns the exit error.
func (s *Store) run(ctx context.Context, dir string, argv, env []string, out *outputScan) error {
	timeout := s.cfg.InstallTimeout
	if timeout <= 0 {
		timeout = DefaultInstallTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = out, out
	setGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil && ctx.Err() == nil && runCtx.Err() != nil {
		return fmt.Errorf("timed out after %v", timeout)
	}
	return err
}

// exitDetail says how a failed run ended.
func exitDetail(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}
