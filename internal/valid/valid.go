// Package valid holds the checks of names that cross from a model or an
// operator into a script's world: a path inside a skill folder and an
// environment variable. It is a leaf: the executor, the tools and the skill
// source all use it, and it imports none of them.
package valid

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Path is the one check of a path inside a skill folder, wherever it comes
// from (a request's files, a model's script_path or input_files, a resource
// path): it must be relative, use "/" separators, hold no NUL, be valid UTF-8
// and never climb with "..". It returns the path cleaned ("./a//b" is
// "a/b"); "." is returned for the folder itself and is the caller's to
// refuse.
func Path(p string) (string, error) {
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

// FilePath reports why p cannot name a file inside a skill folder: it must
// pass Path, be clean already, and not be the folder itself.
func FilePath(p string) error {
	c, err := Path(p)
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

// Env reports an environment variable that cannot be passed to a process:
// an empty name, a name with '=' or NUL, a value with NUL.
func Env(name, value string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty environment variable name")
	case strings.ContainsAny(name, "=\x00"):
		return fmt.Errorf("environment variable name %q contains '=' or NUL", name)
	case strings.ContainsRune(value, 0):
		return fmt.Errorf("environment variable %q: value contains NUL", name)
	}
	return nil
}
