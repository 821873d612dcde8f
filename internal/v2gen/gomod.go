package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
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
	Replace []replace
	Tool    []struct {
		Path string
	}
}

// replace is a replace directive.
type replace struct {
	Old, New modVersion
}

// modVersion is one side of a replace directive; Version is empty for a
// directory (on the right) or for every version (on the left).
type modVersion struct {
	Path    string
	Version string
}

func (m modVersion) String() string {
	if m.Version == "" {
		return m.Path
	}
	return m.Path + "@" + m.Version
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

// keptByGo reports which files of v2 the go command maintains, not Sync:
// v2's go.mod and go.sum, and its go.work (see writeGoWork) and
// go.work.sum.
func keptByGo(rel string) bool {
	return rel == "go.mod" || rel == "go.sum" || rel == "go.work" || rel == "go.work.sum"
}

// writeGoWork makes dir (v2) a workspace of its own, at its go.mod's go
// version: the root's go.work holds the root's modules, and the two ADK
// majors cannot share a build list, so without it no go command would run
// in v2.
func writeGoWork(dir string) error {
	m, err := readModule(dir)
	if err != nil {
		return err
	}
	data := fmt.Appendf(nil, "// v2 is a workspace of its own: it cannot share the root's (go.work).\n// Written by internal/v2gen.\n\ngo %s\n\nuse .\n", m.Go)
	_, err = writeFile(filepath.Join(dir, "go.work"), File{Data: data, Mode: 0o644})
	return err
}

// syncGoMod makes dir/go.mod (v2's) the twin of src, the root's go.mod:
// its path moved under /v2, src's direct requirements at src's versions
// (ADK v1 replaced by ADK v2 at cfg.ADKVersion; the shared nested modules
// kept), src's replace and tool directives (a directory taken relative to
// dir) instead of whatever dir/go.mod had, and then whatever go mod tidy
// settles (the indirect requirements, a newer version a dependency needs,
// the go line ADK v2 needs). Given the same inputs it writes the same
// go.mod and go.sum.
func syncGoMod(src *goMod, dir string, cfg Config) error {
	args, err := goModEdits(src, cfg)
	if err != nil {
		return err
	}
	if err := ensureGoMod(src, dir, cfg); err != nil {
		return err
	}
	old, err := readModule(dir)
	if err != nil {
		return err
	}
	// Drop what the go.mod has from the last run first: go mod edit applies
	// its flags in order.
	var drops []string
	for _, r := range old.Replace {
		drops = append(drops, "-dropreplace="+r.Old.String())
	}
	for _, t := range old.Tool {
		drops = append(drops, "-droptool="+t.Path)
	}
	if _, err := goCommand(dir, append(append([]string{"mod", "edit"}, drops...), args...)...); err != nil {
		return err
	}
	_, err = goCommand(dir, "mod", "tidy")
	return err
}

// ensureGoMod writes a go.mod with src's module path (moved under /v2) and
// go line into dir unless dir has one.
func ensureGoMod(src *goMod, dir string, cfg Config) error {
	gomod := filepath.Join(dir, "go.mod")
	_, err := os.Stat(gomod)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.WriteFile(gomod, fmt.Appendf(nil, "module %s\n\ngo %s\n", rewritePath(src.Module.Path, cfg.Module), src.Go), 0o644)
}

// goModEdits are the go mod edit flags that give v2's go.mod src's path,
// direct requirements, replacements and tools.
func goModEdits(src *goMod, cfg Config) ([]string, error) {
	args := []string{"-module=" + rewritePath(src.Module.Path, cfg.Module), "-droprequire=" + adkPath}
	for _, r := range src.Require {
		if r.Indirect {
			continue
		}
		p, v := r.Path, r.Version
		if r.Path == adkPath {
			p, v = adkPath+majorSuffix, cfg.ADKVersion
		}
		args = append(args, "-require="+p+"@"+v)
	}
	up := strings.Repeat("../", strings.Count(cfg.Out, "/")+1)
	for _, r := range src.Replace {
		if r.Old.Path == adkPath {
			return nil, fmt.Errorf("%s replaces %s: a replacement of ADK v1 has no v2 twin", src.Module.Path, r.Old)
		}
		repl := r.New
		if repl.Version == "" && !filepath.IsAbs(repl.Path) {
			repl.Path = path.Clean(up + repl.Path) // relative to v2, not to the root
		}
		args = append(args, "-replace="+r.Old.String()+"="+repl.String())
	}
	for _, t := range src.Tool {
		args = append(args, "-tool="+rewritePath(t.Path, cfg.Module, cfg.Shared...))
	}
	return args, nil
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
