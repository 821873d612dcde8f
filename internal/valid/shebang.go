package valid

import (
	"bytes"
	"errors"
	"io"
	"path"
	"strings"
)

// HeadBytes is how much of a file's head a #! line is looked for in: the
// kernel itself reads no more of it (Linux's BINPRM_BUF_SIZE).
const HeadBytes = 256

// ReadHead reads the first HeadBytes of r (fewer when r is shorter): what
// Shebang needs to see a script's #! line.
func ReadHead(r io.Reader) ([]byte, error) {
	buf := make([]byte, HeadBytes)
	n, err := io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return buf[:n], err
}

// Shebang returns the base name of the program a script's #! line names,
// or false when head does not start with one. The program is the
// interpreter itself ("#!/bin/bash": "bash") or, through env, the first
// word env would run ("#!/usr/bin/env python3": "python3";
// "#!/usr/bin/env -S node --no-warnings": "node"; env's options and
// NAME=value assignments are skipped). Only the first line of head counts.
func Shebang(head []byte) (string, bool) {
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
	if Base(prog) == "env" {
		prog = envProgram(words[1:])
	}
	prog = Base(prog)
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

// Base is the last element of a slash-separated program path ("" for "").
func Base(p string) string {
	if p == "" {
		return ""
	}
	return path.Base(p)
}
