package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// shortRevision is how many hex digits of a commit --version prints.
const shortRevision = 12

// versionLine is what --version prints for the build info bi (ok false:
// the binary carries none). A release names its module version ("adkskills
// v1.2.0", as go install …@v1.2.0 builds it); a build from a checkout
// ("(devel)") says so, with the commit it was built from when Go recorded
// one.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "adkskills (unknown version: built without module information)"
	}
	v := bi.Main.Version
	var line string
	if v == "" || v == "(devel)" {
		line = "adkskills (devel): built from source, not from a release"
		if rev := setting(bi, "vcs.revision"); rev != "" {
			line += ", commit " + rev[:min(len(rev), shortRevision)]
			if setting(bi, "vcs.modified") == "true" {
				line += " with uncommitted changes"
			}
		}
	} else {
		line = "adkskills " + v
	}
	var about []string
	if bi.Main.Path != "" {
		about = append(about, bi.Main.Path)
	}
	if bi.GoVersion != "" {
		about = append(about, bi.GoVersion)
	}
	if len(about) > 0 {
		line += " (" + strings.Join(about, ", ") + ")"
	}
	return line
}

// setting returns a build setting's value, or "".
func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// printVersion prints the version line of this binary.
func (c *cli) printVersion() {
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprintln(c.stdout, versionLine(bi, ok))
}
