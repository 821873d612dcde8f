package codeexec

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Interpreter says how to run one language: the command that precedes the
// script path and its arguments.
type Interpreter struct {
	// Language is the name the model uses for inline scripts ("python").
	Language string
	// Extensions are the script extensions it runs, with the dot (".py").
	Extensions []string
	// Command is the argv prefix; the script path and the arguments follow.
	// Command[0] is looked up in PATH when it has no slash.
	Command []string
}

// Interpreters is an interpreter table: the one place that maps extensions,
// language names and the programs #! lines name (ForFile) to commands. The
// first entry that matches wins.
type Interpreters []Interpreter

// DefaultInterpreters returns a fresh copy of the default table: python3 for
// .py, bash for .sh and .bash, node for .js, .mjs and .cjs.
func DefaultInterpreters() Interpreters {
	return Interpreters{
		{Language: "python", Extensions: []string{".py"}, Command: []string{"python3"}},
		{Language: "bash", Extensions: []string{".sh", ".bash"}, Command: []string{"bash"}},
		{Language: "node", Extensions: []string{".js", ".mjs", ".cjs"}, Command: []string{"node"}},
	}
}

// Validate reports the first malformed entry: an empty language or command,
// an extension without a leading dot, or a language named twice.
func (t Interpreters) Validate() error {
	seen := map[string]bool{}
	for i, in := range t {
		switch {
		case in.Language == "":
			return fmt.Errorf("interpreter %d: empty language", i)
		case len(in.Command) == 0 || in.Command[0] == "":
			return fmt.Errorf("interpreter %q: empty command", in.Language)
		case seen[in.Language]:
			return fmt.Errorf("interpreter %q: language named twice", in.Language)
		}
		seen[in.Language] = true
		for _, ext := range in.Extensions {
			if len(ext) < 2 || ext[0] != '.' || strings.ContainsAny(ext[1:], "./\\") {
				return fmt.Errorf("interpreter %q: extension %q must look like \".py\"", in.Language, ext)
			}
		}
	}
	return nil
}

// ForScript returns the interpreter for a script path by its extension
// (case-insensitive), or an error wrapping ErrUnsupportedScript.
func (t Interpreters) ForScript(script string) (Interpreter, error) {
	ext := strings.ToLower(path.Ext(script))
	for _, in := range t {
		if ext != "" && slices.Contains(in.Extensions, ext) {
			return in, nil
		}
	}
	return Interpreter{}, fmt.Errorf("%w: no interpreter for %q (supported: %s)", ErrUnsupportedScript, script, strings.Join(t.Extensions(), ", "))
}

// ForLanguage returns the interpreter named lang, or an error wrapping
// ErrUnsupportedScript.
func (t Interpreters) ForLanguage(lang string) (Interpreter, error) {
	for _, in := range t {
		if in.Language == lang {
			return in, nil
		}
	}
	return Interpreter{}, fmt.Errorf("%w: unknown language %q (supported: %s)", ErrUnsupportedScript, lang, strings.Join(t.Languages(), ", "))
}

// Languages lists the table's language names in table order.
func (t Interpreters) Languages() []string {
	out := make([]string, 0, len(t))
	for _, in := range t {
		out = append(out, in.Language)
	}
	return out
}

// Extensions lists every extension the table runs, in table order.
func (t Interpreters) Extensions() []string {
	var out []string
	for _, in := range t {
		out = append(out, in.Extensions...)
	}
	return out
}
