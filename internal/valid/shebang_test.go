package valid

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShebang(t *testing.T) {
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
			got, ok := Shebang([]byte(tt.head))
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("Shebang(%q) = %q, %v; want %q", tt.head, got, ok, tt.want)
			}
		})
	}
}

func TestReadHead(t *testing.T) {
	long := "#!/bin/bash\n" + strings.Repeat("x", 2*HeadBytes)
	for _, in := range []string{"", "#!/bin/bash\n", long} {
		got, err := ReadHead(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if want := in[:min(len(in), HeadBytes)]; string(got) != want {
			t.Errorf("ReadHead of %d bytes = %d bytes, want %d", len(in), len(got), len(want))
		}
	}
	if _, err := ReadHead(errReader{}); err == nil {
		t.Error("ReadHead hid a read error")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

// FuzzShebang: whatever the head, the program is a single path
// element taken from the first line of a head that starts with "#!".
func FuzzShebang(f *testing.F) {
	for _, s := range []string{"#!/usr/bin/env python3\n", "#!/bin/bash", "#! /usr/bin/env -S node --x\n", "#!/usr/bin/env -u A B=1 ruby", "#!\n", "print()", "#!/usr/bin/env --split-string=a b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		prog, ok := Shebang(head)
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
