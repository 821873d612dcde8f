package scriptrun

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/adkskills/adkskills/internal/valid"
)

// Bounds on what the model may pass. They keep one call from pinning memory
// or the argv limit of the kernel; a legitimate script needs far less.
const (
	// MaxArgs is the number of argv entries a call may pass.
	MaxArgs = 1024
	// MaxArgBytes bounds the bytes of all args together.
	MaxArgBytes = 1 << 20
	// MaxArgEntryBytes bounds one argument: Linux refuses a single argv
	// string of 128 KiB or more (MAX_ARG_STRLEN, counting its NUL).
	MaxArgEntryBytes = 128<<10 - 1
	// MaxStdinBytes bounds stdin.
	MaxStdinBytes = 16 << 20
	// MaxScriptBytes bounds an inline script.
	MaxScriptBytes = 1 << 20
)

// Args reads a tool call's arguments, answering INVALID_ARGUMENTS with
// the argument's name for anything of the wrong shape.
type Args struct {
	m map[string]any
}

// ParseArgs accepts the args value ADK hands a tool and rejects keys not in
// known, so a misspelt parameter is reported instead of silently ignored.
func ParseArgs(v any, known ...string) (*Args, error) {
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("arguments must be a JSON object, got %T", v)
	}
	for k := range m {
		found := false
		for _, name := range known {
			found = found || k == name
		}
		if !found {
			return nil, fmt.Errorf("unknown argument %q (accepted: %s)", k, strings.Join(known, ", "))
		}
	}
	return &Args{m: m}, nil
}

// String returns a string argument; required ones must be non-empty. Every
// string must be valid UTF-8 without NUL bytes, and at most maxBytes long.
func (a *Args) String(name string, required bool, maxBytes int) (string, error) {
	v, ok := a.m[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("argument %q is required", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string, got %s", name, jsonType(v))
	}
	if required && s == "" {
		return "", fmt.Errorf("argument %q must not be empty", name)
	}
	if err := checkText(name, s, maxBytes); err != nil {
		return "", err
	}
	return s, nil
}

// Strings returns an array-of-strings argument (nil when absent), within
// MaxArgs entries and MaxArgBytes bytes in all.
func (a *Args) Strings(name string) ([]string, error) {
	v, ok := a.m[name]
	if !ok || v == nil {
		return nil, nil
	}
	var items []any
	switch t := v.(type) {
	case []any:
		items = t
	case []string:
		for _, s := range t {
			items = append(items, s)
		}
	default:
		return nil, fmt.Errorf("argument %q must be an array of strings, got %s", name, jsonType(v))
	}
	if len(items) > MaxArgs {
		return nil, fmt.Errorf("argument %q has %d entries; at most %d are allowed", name, len(items), MaxArgs)
	}
	out := make([]string, 0, len(items))
	total := 0
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("argument %q must be a string, got %s", fmt.Sprintf("%s[%d]", name, i), jsonType(it))
		}
		total += len(s)
		if err := checkText(fmt.Sprintf("%s[%d]", name, i), s, min(MaxArgEntryBytes, MaxArgBytes-total+len(s))); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func checkText(name, s string, maxBytes int) error {
	switch {
	case len(s) > maxBytes:
		return fmt.Errorf("argument %q is %d bytes; the limit is %d", name, len(s), maxBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("argument %q is not valid UTF-8", name)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("argument %q contains a NUL byte", name)
	}
	return nil
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, int, int64, float32:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// CleanPath checks a model-supplied path to a file inside a skill with
// valid.Path and returns its clean form; the error names the argument.
// Symlinks are not followed anywhere: staging stages regular files only.
func CleanPath(name, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("argument %q must not be empty", name)
	}
	c, err := valid.Path(p)
	switch {
	case err != nil:
		return "", fmt.Errorf("argument %q: %w", name, err)
	case c == ".":
		return "", fmt.Errorf("argument %q must name a file: %q", name, p)
	}
	return c, nil
}
