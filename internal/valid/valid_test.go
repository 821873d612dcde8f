package valid

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPath(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{in: "scripts/x.py", want: "scripts/x.py"},
		{in: "./scripts/x.py", want: "scripts/x.py"},
		{in: "scripts//x.py", want: "scripts/x.py"},
		{in: "a/./b/", want: "a/b"},
		{in: "x.sh", want: "x.sh"},
		{in: ".", want: "."},
		{in: "./", want: "."},
		{in: "..a/b..", want: "..a/b.."},
		{in: "", err: "empty path"},
		{in: "/etc/passwd", err: "is absolute"},
		{in: "../other/x.py", err: "leaves the skill folder"},
		{in: "scripts/../../x.py", err: "leaves the skill folder"},
		{in: "scripts/..", err: "leaves the skill folder"},
		{in: "a/../b", err: "leaves the skill folder"},
		{in: `scripts\x.py`, err: "backslash"},
		{in: "scripts/x\x00.py", err: "NUL"},
		{in: "scripts/\xff.py", err: "not valid UTF-8"},
	}
	for _, c := range cases {
		got, err := Path(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Path(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Path(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestEnv(t *testing.T) {
	cases := []struct {
		name, value, err string
	}{
		{name: "A", value: "x"},
		{name: "A_B", value: ""},
		{name: "A", value: "x=y"},
		{name: "", value: "x", err: "empty"},
		{name: "A=B", value: "x", err: "contains '='"},
		{name: "A\x00", value: "x", err: "NUL"},
		{name: "A", value: "x\x00", err: "value contains NUL"},
	}
	for _, c := range cases {
		err := Env(c.name, c.value)
		if c.err == "" {
			if err != nil {
				t.Errorf("Env(%q, %q) = %v", c.name, c.value, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Env(%q, %q) = %v; want an error with %q", c.name, c.value, err, c.err)
		}
	}
}

// FuzzPath checks that an accepted path is clean, relative, stays inside
// the folder, and is a fixed point.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"scripts/x.py", "./a//b", "../x", "/abs", "a\\b", ".", "a/..", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := Path(p)
		if err != nil {
			return
		}
		switch {
		case c == "" || strings.HasPrefix(c, "/") || strings.ContainsAny(c, "\\\x00") || !utf8.ValidString(c):
			t.Fatalf("Path(%q) = %q: not a clean relative path", p, c)
		case c == ".." || strings.HasPrefix(c, "../") || strings.Contains(c, "/../") || strings.HasSuffix(c, "/.."):
			t.Fatalf("Path(%q) = %q climbs out", p, c)
		}
		if again, err := Path(c); err != nil || again != c {
			t.Fatalf("Path(%q) = %q, but Path(%q) = %q, %v", p, c, c, again, err)
		}
	})
}

func TestFilePath(t *testing.T) {
	tests := []struct {
		p     string
		piece string // "" when the path names a file
	}{
		{"scripts/a.py", ""},
		{"a", ""},
		{".", "names the skill folder"},
		{"./a", "not clean"},
		{"a//b", "not clean"},
		{"a/", "not clean"},
		{"../a", `".."`},
		{"/a", "absolute"},
		{"", "empty"},
	}
	for _, tt := range tests {
		err := FilePath(tt.p)
		if (err == nil) != (tt.piece == "") || err != nil && !strings.Contains(err.Error(), tt.piece) {
			t.Errorf("FilePath(%q) = %v, want %q", tt.p, err, tt.piece)
		}
	}
}

func TestBase(t *testing.T) {
	for p, want := range map[string]string{"": "", "/usr/bin/env": "env", "python3": "python3", "a/b/": "b", "/": "/"} {
		if got := Base(p); got != want {
			t.Errorf("Base(%q) = %q, want %q", p, got, want)
		}
	}
}
