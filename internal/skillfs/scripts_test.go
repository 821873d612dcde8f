package skillfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adkskills/adkskills/codeexec"
)

const catalogue = "../../testdata/catalogue"

// TestScriptsFavourEntryPoints: in the catalogue-shaped fixtures, entry
// points (in scripts/, a #! line, a __main__ guard) come before helper
// modules and templates, and data is not a script.
func TestScriptsFavourEntryPoints(t *testing.T) {
	src := New(os.DirFS(catalogue), nil)
	tests := []struct {
		skill string
		want  []Script
	}{
		{"office-docs", []Script{
			{"scripts/accept.py", true},        // directly in scripts/
			{"scripts/office/unpack.py", true}, // a __main__ guard
			{"scripts/__init__.py", false},     // a package marker
			{"scripts/office/helpers/__init__.py", false},
			{"scripts/office/helpers/runs.py", false}, // a helper module
		}},
		{"shebang-tool", []Script{{"scripts/greet", true}}}, // no extension, a #! line
		{"art-templates", []Script{{"templates/sketch.js", false}}},
		{"web-builder", []Script{{"scripts/init.sh", true}}},
		{"screen-capture", []Script{{"scripts/capture.py", true}}}, // .ps1 and .swift: no interpreter
		{"wordy-api", nil},
	}
	for _, tt := range tests {
		t.Run(tt.skill, func(t *testing.T) {
			got, err := Scripts(context.Background(), src, tt.skill, codeexec.DefaultInterpreters())
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestScriptsExecutableBit: an executable file is an entry point wherever
// it is.
func TestScriptsExecutableBit(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"s/SKILL.md":      "---\nname: s\ndescription: S.\n---\n",
		"s/tools/run.py":  "print(1)\n",
		"s/tools/util.py": "X = 1\n",
	})
	require.NoError(t, os.Chmod(filepath.Join(dir, "s", "tools", "run.py"), 0o755))
	got, err := Scripts(context.Background(), New(os.DirFS(dir), nil), "s", codeexec.DefaultInterpreters())
	require.NoError(t, err)
	assert.Equal(t, []Script{{"tools/run.py", true}, {"tools/util.py", false}}, got)
}

// TestMainGuardScanIsBounded: a guard past MaxGuardScanBytes is not seen.
func TestMainGuardScanIsBounded(t *testing.T) {
	guard := "if __name__ == \"__main__\":\n    main()\n"
	tests := []struct {
		name   string
		before int // bytes of comment lines before the guard
		entry  bool
	}{
		{"near the start", 0, true},
		{"just inside the bound", MaxGuardScanBytes - len(guard), true},
		{"past the bound", MaxGuardScanBytes, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			line := "# " + strings.Repeat("x", 77) + "\n"
			pad := strings.Repeat(line, tt.before/len(line)) + strings.Repeat("#", tt.before%len(line))
			if tt.before%len(line) != 0 {
				pad = pad[:len(pad)-1] + "\n"
			}
			writeTree(t, dir, map[string]string{"s/SKILL.md": "---\nname: s\ndescription: S.\n---\n", "s/lib/tool.py": pad + guard})
			got, err := Scripts(context.Background(), New(os.DirFS(dir), nil), "s", codeexec.DefaultInterpreters())
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, tt.entry, got[0].Entry)
		})
	}
}

func TestListScripts(t *testing.T) {
	scripts := func(entries, helpers int) []Script {
		var out []Script
		for i := range entries {
			out = append(out, Script{fmt.Sprintf("scripts/e%02d.py", i), true})
		}
		for i := range helpers {
			out = append(out, Script{fmt.Sprintf("lib/h%02d.py", i), false})
		}
		return out
	}
	names := func(s []Script) string {
		var n []string
		for _, x := range s {
			n = append(n, x.Path)
		}
		return strings.Join(n, ", ")
	}
	max := MaxListedScripts
	tests := []struct {
		name    string
		scripts []Script
		want    string
	}{
		{"none", nil, ""},
		{"at the bound", scripts(2, max-2), names(scripts(2, max-2))},
		{"helpers cut", scripts(2, max+1), names(scripts(2, max-2)) + " and 3 more not listed (helper modules and templates)"},
		{"one helper cut", scripts(max, 1), names(scripts(max, 0)) + " and 1 more not listed (helper modules and templates)"},
		{"entry points cut", scripts(max+2, 0), names(scripts(max, 0)) + " and 2 more not listed (entry points)"},
		{"both cut", scripts(max+1, 2), names(scripts(max, 0)) + " and 3 more not listed (1 entry point, 2 helper modules and templates)"},
		{"both cut, one helper", scripts(max+2, 1), names(scripts(max, 0)) + " and 3 more not listed (2 entry points, 1 helper module or template)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ListScripts(tt.scripts))
		})
	}
}

func TestAnyScript(t *testing.T) {
	src := New(os.DirFS(catalogue), nil)
	noPython := codeexec.Interpreters{{Language: "bash", Extensions: []string{".sh"}, Command: []string{"bash"}}}
	tests := []struct {
		skill string
		table codeexec.Interpreters
		want  bool
	}{
		{"shebang-tool", codeexec.DefaultInterpreters(), true}, // by its #! line alone
		{"shebang-tool", noPython, false},
		{"web-builder", noPython, true},
		{"wordy-api", codeexec.DefaultInterpreters(), false},
	}
	for _, tt := range tests {
		t.Run(tt.skill, func(t *testing.T) {
			got, err := AnyScript(context.Background(), src, tt.skill, tt.table)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
