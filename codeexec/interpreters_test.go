package codeexec

import (
	"errors"
	"strings"
	"testing"
)

func TestForFile(t *testing.T) {
	table := DefaultInterpreters()
	tests := []struct {
		name, script, head string
		want               string // the language; "" for ErrUnsupportedScript
		errPiece           string
	}{
		{"extension wins", "scripts/a.py", "#!/bin/bash\n", "python", ""},
		{"no extension, env python3", "scripts/tool", "#!/usr/bin/env python3\n", "python", ""},
		{"no extension, python (unversioned)", "scripts/tool", "#!/usr/bin/python\n", "python", ""},
		{"no extension, python3.12", "scripts/tool", "#!/usr/bin/env python3.12\n", "python", ""},
		{"no extension, bash", "bin/run", "#!/bin/bash\n", "bash", ""},
		{"no extension, env -S node", "bin/serve", "#!/usr/bin/env -S node --no-warnings\n", "node", ""},
		{"unknown extension falls back to #!", "scripts/tool.cgi", "#!/usr/bin/env python3\n", "python", ""},
		{"no extension, no #!", "scripts/tool", "print(1)\n", "", `no interpreter for "scripts/tool": supported: .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or node`},
		{"#! names an unknown program", "scripts/tool", "#!/usr/bin/env ruby\n", "", `"scripts/tool" is a ruby script (its #! line), and no interpreter runs it`},
		{"sh is not bash", "scripts/tool", "#!/bin/sh\n", "", "is a sh script"},
		{"data file", "scripts/office/schemas/wml.xsd", "<?xml version=\"1.0\"?>", "", `no interpreter for "scripts/office/schemas/wml.xsd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := table.ForFile(tt.script, []byte(tt.head))
			if tt.want == "" {
				if !errors.Is(err, ErrUnsupportedScript) || !strings.Contains(err.Error(), tt.errPiece) {
					t.Fatalf("ForFile(%q) = %+v, %v; want ErrUnsupportedScript containing %q", tt.script, in, err, tt.errPiece)
				}
				return
			}
			if err != nil || in.Language != tt.want {
				t.Fatalf("ForFile(%q) = %+v, %v; want %s", tt.script, in, err, tt.want)
			}
		})
	}
}

// TestForProgramUsesTheTable: an operator's entry is found by its command
// or its language, so a table decides which #! lines run.
func TestForProgramUsesTheTable(t *testing.T) {
	table := append(DefaultInterpreters(),
		Interpreter{Language: "posix", Command: []string{"/bin/sh", "-e"}},
		Interpreter{Language: "ruby", Command: []string{"ruby3.3"}})
	for prog, want := range map[string]string{"sh": "posix", "posix": "posix", "ruby": "ruby", "ruby3.1": "ruby", "node": "node"} {
		in, err := table.forProgram(prog)
		if err != nil || in.Language != want {
			t.Errorf("forProgram(%q) = %+v, %v; want %s", prog, in, err, want)
		}
	}
	for _, prog := range []string{"", "3", "perl"} {
		if _, err := table.forProgram(prog); !errors.Is(err, ErrUnsupportedScript) {
			t.Errorf("forProgram(%q) = %v; want ErrUnsupportedScript", prog, err)
		}
	}
}

func TestSupported(t *testing.T) {
	tests := []struct {
		table Interpreters
		want  string
	}{
		{DefaultInterpreters(), "supported: .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or node"},
		{Interpreters{{Language: "py", Extensions: []string{".py"}, Command: []string{"python3"}}}, "supported: .py, or a #! line naming python3"},
		{Interpreters{{Language: "sh", Command: []string{"sh"}}}, "supported: a #! line naming sh"},
		{nil, "no interpreter is configured"},
	}
	for _, tt := range tests {
		if got := tt.table.Supported(); got != tt.want {
			t.Errorf("Supported() = %q, want %q", got, tt.want)
		}
	}
}
