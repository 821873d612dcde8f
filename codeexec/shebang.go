package codeexec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// MaxShebangBytes is how much of a file's head a #! line is looked for in:
// the kernel itself reads no more of it (Linux's BINPRM_BUF_SIZE).
const MaxShebangBytes = 256

// ReadHead reads the first MaxShebangBytes of r (fewer when r is shorter):
// what ForFile needs to see a script's #! line.
func ReadHead(r io.Reader) ([]byte, error) {
	buf := make([]byte, MaxShebangBytes)
	n, err := io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return buf[:n], err
}

// scriptHead is the start of req's script, from Files or Skill; nil when
// it cannot be read (the run then fails on it as it would anyway).
func scriptHead(req *Request) []byte {
	for _, f := range req.Files {
		if f.Path == req.Script {
			return f.Data[:min(len(f.Data), MaxShebangBytes)]
		}
	}
	if req.Skill == nil {
		return nil
	}
	f, err := req.Skill.Open(req.Script)
	if err != nil {
		return nil
	}
	defer f.Close()
	head, _ := ReadHead(f)
	return head
}

// ShebangProgram returns the base name of the program a script's #! line
// names, or false when head does not start with one. The program is the
// interpreter itself ("#!/bin/bash": "bash") or, through env, the first
// word env would run ("#!/usr/bin/env python3": "python3";
// "#!/usr/bin/env -S node --no-warnings": "node"; env's options and
// NAME=value assignments are skipped). Only the first line of head counts.
func ShebangProgram(head []byte) (string, bool) {
	line, ok := bytes.CutPrefix(head, []byte("#!"))
	if !ok {
		return "", false
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	words := strings.Fields(string(line))
	if len(words) == 0 {
		return "", false
	}
	prog := words[0]
	if base(prog) == "env" {
		prog = envProgram(words[1:])
	}
	prog = base(prog)
	if prog == "" || prog == "." || prog == ".." || prog == "/" {
		return "", false
	}
	return prog, true
}

// envProgram is the program env(1) would run given args: the first word
// that is neither an option nor a NAME=value assignment. -S (split the
// string) only splits, which strings.Fields has done already.
func envProgram(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir":
			i++ // the option's value
		case strings.HasPrefix(a, "--split-string="):
			return strings.TrimPrefix(a, "--split-string=")
		case strings.HasPrefix(a, "-S") && len(a) > 2:
			return a[2:]
		case strings.HasPrefix(a, "-"), strings.Contains(a, "="):
			// another option, or an assignment
		default:
			return a
		}
	}
	return ""
}

// base is the last element of a slash-separated path.
func base(p string) string {
	if p == "" {
		return ""
	}
	return path.Base(p)
}

// unversioned drops a trailing version from a program name: "python3.12"
// and "python3" are "python".
func unversioned(name string) string {
	return strings.TrimRight(name, "0123456789.")
}

// ForProgram returns the interpreter a #! line naming prog asks for: the
// first entry whose language or whose command's program has prog's name,
// a version suffix aside ("python", "python3" and "python3.12" all name
// the python3 entry). The error wraps ErrUnsupportedScript.
func (t Interpreters) ForProgram(prog string) (Interpreter, error) {
	want := unversioned(base(prog))
	if want != "" {
		for _, in := range t {
			if unversioned(in.Language) == want || (len(in.Command) > 0 && unversioned(base(in.Command[0])) == want) {
				return in, nil
			}
		}
	}
	return Interpreter{}, fmt.Errorf("%w: no interpreter runs %q (supported: %s)", ErrUnsupportedScript, prog, strings.Join(t.Programs(), ", "))
}

// Programs lists the program names a #! line may give for the table's
// entries (their commands' programs), in table order.
func (t Interpreters) Programs() []string {
	out := make([]string, 0, len(t))
	for _, in := range t {
		if len(in.Command) > 0 {
			out = append(out, base(in.Command[0]))
		}
	}
	return out
}

// ForRequest chooses req's interpreter as every executor does:
// req.Interpreter when set (an invalid one wraps ErrInvalidRequest), else
// the entry for the script's extension or its #! line (ForFile, the head
// read from req.Files or, bounded, from req.Skill).
func (t Interpreters) ForRequest(req *Request) (Interpreter, error) {
	if in := req.Interpreter; in != nil {
		if err := (Interpreters{*in}).Validate(); err != nil {
			return Interpreter{}, fmt.Errorf("%w: interpreter: %w", ErrInvalidRequest, err)
		}
		return *in, nil
	}
	return t.ForFile(req.Script, scriptHead(req))
}

// ForFile returns the interpreter for a script file: by its extension when
// the table runs that extension, else by the program its #! line names
// (head is the start of the file; ReadHead reads enough). The interpreter
// runs the script as for its extension: words after the program on the
// #! line are not passed. The error wraps ErrUnsupportedScript.
func (t Interpreters) ForFile(script string, head []byte) (Interpreter, error) {
	in, err := t.ForScript(script)
	if err == nil {
		return in, nil
	}
	prog, ok := ShebangProgram(head)
	if !ok {
		return Interpreter{}, fmt.Errorf("%w: no interpreter for %q: %s", ErrUnsupportedScript, script, t.Supported())
	}
	if in, err := t.ForProgram(prog); err == nil {
		return in, nil
	}
	return Interpreter{}, fmt.Errorf("%w: %q is a %s script (its #! line), and no interpreter runs it: %s", ErrUnsupportedScript, script, prog, t.Supported())
}

// Supported says, for messages, which files the table runs: "supported:
// .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or
// node".
func (t Interpreters) Supported() string {
	exts := strings.Join(t.Extensions(), ", ")
	var names string
	if progs := t.Programs(); len(progs) > 0 {
		names = progs[len(progs)-1]
		if len(progs) > 1 {
			names = strings.Join(progs[:len(progs)-1], ", ") + " or " + names
		}
	}
	switch {
	case exts == "" && names == "":
		return "no interpreter is configured"
	case names == "":
		return "supported: " + exts
	case exts == "":
		return "supported: a #! line naming " + names
	}
	return "supported: " + exts + ", or a #! line naming " + names
}
