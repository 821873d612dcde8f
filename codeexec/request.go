package codeexec

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf8"
)

// validateRequest reports the first malformed part of req, wrapping
// ErrInvalidRequest: a nil request; a file path that is empty, absolute,
// not clean, has a ".." element, a backslash or a NUL, or that is named
// twice or is both a file and a directory; content in an encoding the
// executor does not stage; a script that is not among the files; an
// argument or environment variable a process cannot carry; a negative
// timeout or limit.
func validateRequest(req *Request) error {
	if req == nil {
		return fmt.Errorf("%w: nil request", ErrInvalidRequest)
	}
	files := make(map[string]bool, len(req.Files))
	dirs := map[string]bool{}
	for _, f := range req.Files {
		if err := checkPath(f.Path); err != nil {
			return fmt.Errorf("%w: file: %w", ErrInvalidRequest, err)
		}
		if files[f.Path] {
			return fmt.Errorf("%w: file %q named twice", ErrInvalidRequest, f.Path)
		}
		if dirs[f.Path] {
			return fmt.Errorf("%w: %q is both a file and a directory", ErrInvalidRequest, f.Path)
		}
		files[f.Path] = true
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if files[d] {
				return fmt.Errorf("%w: %q is both a file and a directory", ErrInvalidRequest, d)
			}
			dirs[d] = true
		}
		switch f.Encoding {
		case EncodingRaw, EncodingUTF8:
		default:
			return fmt.Errorf("%w: file %q: encoding %q: host executors stage raw bytes (decode it first)", ErrInvalidRequest, f.Path, f.Encoding)
		}
		if f.Mode&^fs.ModePerm != 0 {
			return fmt.Errorf("%w: file %q: mode %v: only permission bits may be set", ErrInvalidRequest, f.Path, f.Mode)
		}
	}
	if err := checkPath(req.Script); err != nil {
		return fmt.Errorf("%w: script: %w", ErrInvalidRequest, err)
	}
	if !files[req.Script] {
		return fmt.Errorf("%w: script %q is not among the request's files", ErrInvalidRequest, req.Script)
	}
	for i, a := range req.Args {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("%w: argument %d contains NUL", ErrInvalidRequest, i)
		}
	}
	for k, v := range req.Env {
		if err := CheckEnv(k, v); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
		}
	}
	switch l := req.Limits; {
	case req.Timeout < 0:
		return fmt.Errorf("%w: negative timeout %v", ErrInvalidRequest, req.Timeout)
	case l.MaxFiles < 0 || l.MaxFileBytes < 0 || l.MaxTotalBytes < 0:
		return fmt.Errorf("%w: negative output limit %+v", ErrInvalidRequest, l)
	}
	return nil
}

// CleanPath is the one check of a path inside a skill folder, wherever it
// comes from (a request's files, a model's script_path, a resource path): it
// must be relative, use "/" separators, hold no NUL, be valid UTF-8 and never
// climb with "..". It returns the path cleaned ("./a//b" is "a/b"); "." is
// returned for the folder itself and is the caller's to refuse.
func CleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty path")
	case strings.ContainsAny(p, "\\\x00"):
		return "", fmt.Errorf("path %q contains a backslash or NUL", p)
	case !utf8.ValidString(p):
		return "", fmt.Errorf("path %q is not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("path %q is absolute", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("path %q leaves the skill folder with \"..\"", p)
		}
	}
	return path.Clean(p), nil
}

// checkPath reports why p cannot name a file of a request: it must be a
// clean path of a file under the skill root.
func checkPath(p string) error {
	c, err := CleanPath(p)
	switch {
	case err != nil:
		return err
	case c == ".":
		return fmt.Errorf("path %q names the skill folder, not a file", p)
	case c != p:
		return fmt.Errorf("path %q is not clean (want %q)", p, c)
	}
	return nil
}

// stage writes req's files into the skill root byte for byte, with their
// modes, through an os.Root on it.
func (ws *workspace) stage(req *Request) error {
	root, err := os.OpenRoot(ws.skill)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrWorkspace, err)
	}
	defer root.Close()
	for _, f := range req.Files {
		if d := path.Dir(f.Path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("%w: stage %q: %w", ErrWorkspace, f.Path, err)
			}
		}
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
			if f.Path == req.Script {
				mode = 0o755
			}
		}
		if err := writeNew(root, f.Path, f.Data, mode); err != nil {
			return fmt.Errorf("%w: stage %q: %w", ErrWorkspace, f.Path, err)
		}
	}
	return nil
}

// writeNew creates name in root with data and exactly mode (the umask does
// not apply).
func writeNew(root *os.Root, name string, data []byte, mode fs.FileMode) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
