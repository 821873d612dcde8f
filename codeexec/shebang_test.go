package codeexec

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShebangProgram(t *testing.T) {
	tests := []struct {
		name, head string
		want       string // "" when there is no #! line
	}{
		{"env python3", "#!/usr/bin/env python3\nprint(1)\n", "python3"},
		{"absolute bash", "#!/bin/bash\necho\n", "bash"},
		{"space after #!", "#! /usr/bin/python3 -u\n", "python3"},
		{"env -S with flags", "#!/usr/bin/env -S node --no-warnings\n", "node"},
		{"env -S glued", "#!/usr/bin/env -Snode\n", "node"},
		{"env --split-string", "#!/usr/bin/env --split-string=python3 -u\n", "python3"},
		{"env options and assignments", "#!/usr/bin/env -i -u HOME LANG=C python3.12\n", "python3.12"},
		{"env program by path", "#!/usr/bin/env /opt/py/bin/python3\n", "python3"},
		{"CRLF", "#!/bin/bash\r\necho\r\n", "bash"},
		{"no newline", "#!/usr/bin/env node", "node"},
		{"only the first line", "#!\n#!/bin/bash\n", ""},
		{"bare env", "#!/usr/bin/env\n", ""},
		{"env with only options", "#!/usr/bin/env -i -u\n", ""},
		{"no #!", "print(1)\n", ""},
		{"#! not first", "\n#!/bin/bash\n", ""},
		{"BOM first", "\ufeff#!/bin/bash\n", ""},
		{"empty", "", ""},
		{"dot dot", "#!/usr/bin/env ..\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ShebangProgram([]byte(tt.head))
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("ShebangProgram(%q) = %q, %v; want %q", tt.head, got, ok, tt.want)
			}
		})
	}
}

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
		in, err := table.ForProgram(prog)
		if err != nil || in.Language != want {
			t.Errorf("ForProgram(%q) = %+v, %v; want %s", prog, in, err, want)
		}
	}
	for _, prog := range []string{"", "3", "perl"} {
		if _, err := table.ForProgram(prog); !errors.Is(err, ErrUnsupportedScript) {
			t.Errorf("ForProgram(%q) = %v; want ErrUnsupportedScript", prog, err)
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

func TestReadHead(t *testing.T) {
	long := "#!/bin/bash\n" + strings.Repeat("x", 2*MaxShebangBytes)
	for _, in := range []string{"", "#!/bin/bash\n", long} {
		got, err := ReadHead(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if want := in[:min(len(in), MaxShebangBytes)]; string(got) != want {
			t.Errorf("ReadHead of %d bytes = %d bytes, want %d", len(in), len(got), len(want))
		}
	}
	if _, err := ReadHead(errReader{}); err == nil {
		t.Error("ReadHead hid a read error")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

// FuzzShebangProgram: whatever the head, the program is a single path
// element taken from the first line of a head that starts with "#!".
func FuzzShebangProgram(f *testing.F) {
	for _, s := range []string{"#!/usr/bin/env python3\n", "#!/bin/bash", "#! /usr/bin/env -S node --x\n", "#!/usr/bin/env -u A B=1 ruby", "#!\n", "print()", "#!/usr/bin/env --split-string=a b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		prog, ok := ShebangProgram(head)
		if !ok {
			if prog != "" {
				t.Fatalf("not ok but program %q", prog)
			}
			return
		}
		if !bytes.HasPrefix(head, []byte("#!")) {
			t.Fatalf("%q has no #! but gave %q", head, prog)
		}
		if prog == "" || prog == "." || prog == ".." || strings.ContainsAny(prog, "/ \t\n") {
			t.Fatalf("%q gave the program %q", head, prog)
		}
		first, _, _ := bytes.Cut(head, []byte("\n"))
		if utf8.Valid(first) && !bytes.Contains(first, []byte(prog)) {
			t.Fatalf("%q gave %q, not on its first line", head, prog)
		}
	})
}
