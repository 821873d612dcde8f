package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goMod is what go mod edit -json reports of a go.mod.
type goMod struct {
	Module struct {
		Path string
	}
	Go      string
	Require []struct {
		Path     string
		Version  string
		Indirect bool
	}
}

// readModule reads dir/go.mod.
func readModule(dir string) (*goMod, error) {
	out, err := goCommand(dir, "mod", "edit", "-json")
	if err != nil {
		return nil, err
	}
	var m goMod
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("go mod edit -json: %w", err)
	}
	if m.Module.Path == "" {
		return nil, fmt.Errorf("%s: no module path", filepath.Join(dir, "go.mod"))
	}
	return &m, nil
}

// keptByGo reports the files of v2 that the go command maintains, not Sync.
func keptByGo(rel string) bool {
	return rel == "go.mod" || rel == "go.sum"
}

// syncGoMod makes out/go.mod the v2 module's: its path, the root's direct
// requirements at the root's versions (ADK v1 replaced by ADK v2 at
// cfg.ADKVersion), and then whatever go mod tidy settles (the indirect
// requirements, a newer version a dependency needs, the go line ADK v2
// needs). Given the same inputs it writes the same go.mod and go.sum.
func syncGoMod(root *goMod, out string, cfg Config) error {
	gomod := filepath.Join(out, "go.mod")
	if _, err := os.Stat(gomod); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(gomod, fmt.Appendf(nil, "module %s%s\n\ngo %s\n", cfg.Module, majorSuffix, root.Go), 0o644); err != nil {
			return err
		}
	}
	args := []string{"mod", "edit", "-module=" + cfg.Module + majorSuffix, "-droprequire=" + adkPath}
	for _, r := range root.Require {
		if r.Indirect {
			continue
		}
		p, v := r.Path, r.Version
		if p == adkPath {
			p, v = adkPath+majorSuffix, cfg.ADKVersion
		}
		args = append(args, "-require="+p+"@"+v)
	}
	if _, err := goCommand(out, args...); err != nil {
		return err
	}
	_, err := goCommand(out, "mod", "tidy")
	return err
}

// goCommand runs the go command in dir, outside any workspace (the two
// modules cannot share a build list) and with module downloads allowed.
func goCommand(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s (in %s): %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
