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
	"slices"
	"strings"
)

// rootV2Version is the version a v2 module requires the module
// github.com/adkskills/adkskills/v2 at: the nested modules require the root
// at a placeholder (v0.0.0) and replace it with its directory, and a /v2
// path takes only v2 versions, so its twin requires v2.0.0 with the same
// replacement.
const rootV2Version = "v2.0.0"

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
// go.mod and go.sum of v2 itself and of each nested module (directories
// relative to v2, as Plan reports them).
func keptByGo(modules []string) func(rel string) bool {
	return func(rel string) bool {
		dir, name := path.Split(rel)
		dir = strings.TrimSuffix(dir, "/")
		return (name == "go.mod" || name == "go.sum") && (dir == "" || slices.Contains(modules, dir))
	}
}

// syncGoMod makes dir/go.mod the v2 twin of src, the go.mod of the same
// directory in the root (the root's own, or a nested module's): its path
// moved under /v2, src's direct requirements at src's versions (ADK v1
// replaced by ADK v2 at cfg.ADKVersion, the root module by
// github.com/adkskills/adkskills/v2), src's replace and tool directives
// (module paths moved the same way) instead of whatever dir/go.mod had, and
// then whatever go mod tidy settles (the indirect requirements, a newer
// version a dependency needs, the go line ADK v2 needs). Given the same
// inputs it writes the same go.mod and go.sum.
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
// go line into dir unless dir has one. A nested module's must be there
// before v2/ is tidied, or go mod tidy in v2/ takes its packages for v2's.
func ensureGoMod(src *goMod, dir string, cfg Config) error {
	gomod := filepath.Join(dir, "go.mod")
	_, err := os.Stat(gomod)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.WriteFile(gomod, fmt.Appendf(nil, "module %s\n\ngo %s\n", rewritePath(src.Module.Path, cfg.Module), src.Go), 0o644)
}

// goModEdits are the go mod edit flags that give a v2 go.mod src's path,
// direct requirements, replacements and tools.
func goModEdits(src *goMod, cfg Config) ([]string, error) {
	args := []string{"-module=" + rewritePath(src.Module.Path, cfg.Module), "-droprequire=" + adkPath, "-droprequire=" + cfg.Module}
	local := func(p string) bool {
		return slices.ContainsFunc(src.Replace, func(r replace) bool {
			return r.Old.Path == p && r.New.Version == ""
		})
	}
	for _, r := range src.Require {
		if r.Indirect {
			continue
		}
		p, v := rewritePath(r.Path, cfg.Module), r.Version
		switch {
		case r.Path == adkPath:
			p, v = adkPath+majorSuffix, cfg.ADKVersion
		case r.Path == cfg.Module && !local(r.Path):
			return nil, fmt.Errorf("%s requires %s %s without replacing it by a directory: its v2 twin cannot name a v2 version of it", src.Module.Path, r.Path, r.Version)
		case r.Path == cfg.Module:
			v = rootV2Version
		}
		args = append(args, "-require="+p+"@"+v)
	}
	for _, r := range src.Replace {
		old := modVersion{Path: rewritePath(r.Old.Path, cfg.Module), Version: r.Old.Version}
		switch {
		case r.Old.Path == adkPath:
			return nil, fmt.Errorf("%s replaces %s: a replacement of ADK v1 has no v2 twin", src.Module.Path, r.Old)
		case r.Old.Path == cfg.Module:
			old.Version = "" // a v0 or v1 version names no version of a /v2 module
		}
		args = append(args, "-replace="+old.String()+"="+r.New.String())
	}
	for _, t := range src.Tool {
		args = append(args, "-tool="+rewritePath(t.Path, cfg.Module))
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
