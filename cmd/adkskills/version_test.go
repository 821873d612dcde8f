package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionLine(t *testing.T) {
	mod := debug.Module{Path: "github.com/adkskills/adkskills"}
	build := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		m := mod
		m.Version = version
		return &debug.BuildInfo{GoVersion: "go1.25.0", Main: m, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"a release", build("v1.2.0"), true, "adkskills v1.2.0 (github.com/adkskills/adkskills, go1.25.0)"},
		{"a pseudo-version", build("v0.0.0-20260101120000-0123456789ab"), true, "adkskills v0.0.0-20260101120000-0123456789ab (github.com/adkskills/adkskills, go1.25.0)"},
		{"devel", build("(devel)"), true, "adkskills (devel): built from source, not from a release (github.com/adkskills/adkskills, go1.25.0)"},
		{"devel with a commit", build("(devel)", rev), true, "adkskills (devel): built from source, not from a release, commit 0123456789ab (github.com/adkskills/adkskills, go1.25.0)"},
		{"devel, modified", build("(devel)", rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), true,
			"adkskills (devel): built from source, not from a release, commit 0123456789ab with uncommitted changes (github.com/adkskills/adkskills, go1.25.0)"},
		{"no version, no module", &debug.BuildInfo{}, true, "adkskills (devel): built from source, not from a release"},
		{"no build info", nil, false, "adkskills (unknown version: built without module information)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, versionLine(tt.bi, tt.ok))
		})
	}
}

func TestVersionFlag(t *testing.T) {
	for _, arg := range []string{"--version", "-version"} {
		o := invoke(t, invocation{args: []string{arg}})
		assert.Equal(t, exitOK, o.code)
		assert.True(t, strings.HasPrefix(o.stdout, "adkskills "), o.stdout)
		assert.Equal(t, 1, strings.Count(o.stdout, "\n"), o.stdout)
		assert.Empty(t, o.stderr)
	}
	o := invoke(t, invocation{args: []string{"--help"}})
	assert.Contains(t, o.stdout, "'adkskills --version'")
}
