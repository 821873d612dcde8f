// Command v2gen writes the module github.com/adkskills/adkskills/v2 (in v2/)
// from the root module, so that agents built on ADK Go v2
// (google.golang.org/adk/v2) can use adkskills while the root stays the one
// source.
//
// It mirrors the root's tree into v2/ and, in every Go file:
//   - rewrites import paths: github.com/adkskills/adkskills/… becomes
//     github.com/adkskills/adkskills/v2/…, and google.golang.org/adk/…
//     becomes google.golang.org/adk/v2/…; the module's own path is rewritten
//     in comments and other string literals too (documentation that names an
//     import path), while ADK paths in comments are kept, as they usually
//     cite ADK v1 source;
//   - writes the standard "// Code generated … DO NOT EDIT." header, naming
//     the root file to edit instead.
//
// The few API differences between the two ADK majors live in small
// hand-written files in the root, chosen by name:
//   - name_adk1.go (and name_adk1_test.go) is compiled in the root and left
//     out of v2;
//   - name_adk2.go (and name_adk2_test.go) starts with "//go:build ignore",
//     so the root build (go mod tidy included) never sees it, and becomes a
//     normal file in v2. It is written as it will be compiled there: against
//     google.golang.org/adk/v2.
//
// Every other file is mirrored byte for byte (test data above all, so the v2
// module is self-contained), except: v2/ itself, the nested modules and the directories named by
// -exclude, hidden files and directories outside testdata, and the root's
// top-level files other than Go files and licenses (go.mod, go.sum,
// README.md belong to the root). Files in v2/ that the root no longer
// produces are removed.
// Shared code that asks a context for Artifacts() is refused (see
// adkglue.Artifacts).
//
// A directory below the root that holds a go.mod of its own (outside
// testdata), such as codeexec, is a nested module: it touches no ADK, both
// majors use it at the same import paths, and it is not mirrored; imports
// of its packages (and mentions of its path) are kept as they are.
//
// v2's go.mod and go.sum are kept by the go command: v2gen sets the module
// path (moved under /v2), the direct requirements of the root's go.mod
// (google.golang.org/adk replaced by google.golang.org/adk/v2 at -adk) and
// its replace and tool directives (a replacement by a directory taken
// relative to v2/), then runs go mod tidy there.
// v2/README.md is written by v2gen.
//
// Run it from the root with go generate ./...; CI fails when v2/ differs from
// what it writes.
package main

//go:generate go run . -root ../.. -adk v2.2.0 -exclude cmd,deploy,docs,examples,internal/v2gen

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	root := flag.String("root", ".", "the root module's directory")
	adk := flag.String("adk", "", "the version of google.golang.org/adk/v2 that v2/go.mod requires (required)")
	exclude := flag.String("exclude", "", "comma-separated directories, relative to -root, left out of v2 (slash-separated)")
	tidy := flag.Bool("tidy", true, "set v2/go.mod's requirements and run go mod tidy in v2/")
	flag.Parse()
	if err := run(*root, *adk, *exclude, *tidy); err != nil {
		fmt.Fprintln(os.Stderr, "v2gen:", err)
		os.Exit(1)
	}
}

func run(root, adkVersion, exclude string, tidy bool) error {
	start := time.Now()
	if adkVersion == "" {
		return fmt.Errorf("-adk is required")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(adkVersion, "v2.") {
		return fmt.Errorf("-adk %s: want a google.golang.org/adk/v2 version, v2.x.y", adkVersion)
	}
	mod, err := readModule(root)
	if err != nil {
		return err
	}
	if strings.HasSuffix(mod.Module.Path, majorSuffix) {
		return fmt.Errorf("%s is the module %s: run v2gen on the root module", root, mod.Module.Path)
	}
	cfg := Config{
		Module:     mod.Module.Path,
		ADKVersion: adkVersion,
		Out:        "v2",
	}
	if exclude != "" {
		cfg.Exclude = strings.Split(exclude, ",")
	}
	files, modules, err := Plan(root, cfg)
	if err != nil {
		return err
	}
	cfg.Shared = modules
	out := filepath.Join(root, filepath.FromSlash(cfg.Out))
	st, err := Sync(out, files, keptByGo)
	if err != nil {
		return err
	}
	if tidy {
		if err := syncGoMod(mod, out, cfg); err != nil {
			return err
		}
		if err := writeGoWork(out); err != nil {
			return err
		}
	}
	fmt.Printf("v2gen: %d files in %s (%d written, %d removed), %d shared module(s), in %v\n",
		len(files), cfg.Out, st.Written, st.Removed, len(modules), time.Since(start).Round(time.Millisecond))
	return nil
}
