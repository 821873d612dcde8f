package codeexec

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/adkskills/adkskills/internal/valid"
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

// forScript returns the interpreter for a script path by its extension
// (case-insensitive), or an error wrapping ErrUnsupportedScript.
func (t Interpreters) forScript(script string) (Interpreter, error) {
	ext := strings.ToLower(path.Ext(script))
	for _, in := range t {
		if ext != "" && slices.Contains(in.Extensions, ext) {
			return in, nil
		}
	}
	return Interpreter{}, fmt.Errorf("%w: no interpreter for %q (supported: %s)", ErrUnsupportedScript, script, strings.Join(t.extensions(), ", "))
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
func (t Interpreters) extensions() []string {
	var out []string
	for _, in := range t {
		out = append(out, in.Extensions...)
	}
	return out
}

// Clone returns a deep copy of t (nil stays nil), so that later edits of
// one do not reach the other.
func (t Interpreters) Clone() Interpreters {
	if t == nil {
		return nil
	}
	out := make(Interpreters, len(t))
	for i, in := range t {
		in.Extensions = append([]string(nil), in.Extensions...)
		in.Command = append([]string(nil), in.Command...)
		out[i] = in
	}
	return out
}

// InterpretersOf returns the table e runs scripts with: the result of its
// Interpreters() method when it has one and it is not empty, else
// DefaultInterpreters. Tools ask it which extensions run and which inline
// languages exist, so that one table decides both.
func InterpretersOf(e Executor) Interpreters {
	if t, ok := e.(interface{ Interpreters() Interpreters }); ok {
		if table := t.Interpreters(); len(table) > 0 {
			return table
		}
	}
	return DefaultInterpreters()
}

// unversioned drops a trailing version from a program name: "python3.12"
// and "python3" are "python".
func unversioned(name string) string {
	return strings.TrimRight(name, "0123456789.")
}

// forProgram returns the interpreter a #! line naming prog asks for: the
// first entry whose language or whose command's program has prog's name,
// a version suffix aside ("python", "python3" and "python3.12" all name
// the python3 entry). The error wraps ErrUnsupportedScript.
func (t Interpreters) forProgram(prog string) (Interpreter, error) {
	want := unversioned(valid.Base(prog))
	if want != "" {
		for _, in := range t {
			if unversioned(in.Language) == want || (len(in.Command) > 0 && unversioned(valid.Base(in.Command[0])) == want) {
				return in, nil
			}
		}
	}
	return Interpreter{}, fmt.Errorf("%w: no interpreter runs %q (supported: %s)", ErrUnsupportedScript, prog, strings.Join(t.programs(), ", "))
}

// programs lists the program names a #! line may give for the table's
// entries (their commands' programs), in table order.
func (t Interpreters) programs() []string {
	out := make([]string, 0, len(t))
	for _, in := range t {
		if len(in.Command) > 0 {
			out = append(out, valid.Base(in.Command[0]))
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
	in, err := t.forScript(script)
	if err == nil {
		return in, nil
	}
	prog, ok := valid.Shebang(head)
	if !ok {
		return Interpreter{}, fmt.Errorf("%w: no interpreter for %q: %s", ErrUnsupportedScript, script, t.Supported())
	}
	if in, err := t.forProgram(prog); err == nil {
		return in, nil
	}
	return Interpreter{}, fmt.Errorf("%w: %q is a %s script (its #! line), and no interpreter runs it: %s", ErrUnsupportedScript, script, prog, t.Supported())
}

// Runs reports why the table cannot run the file script whose first
// bytes are head (see ForFile), or nil when it runs it. With a nil head only
// the extension counts.
func (t Interpreters) Runs(script string, head []byte) error {
	_, err := t.ForFile(script, head)
	return err
}

// Supported says, for messages, which files the table runs: "supported:
// .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or
// node".
func (t Interpreters) Supported() string {
	exts := strings.Join(t.extensions(), ", ")
	var names string
	if progs := t.programs(); len(progs) > 0 {
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

// scriptHead is the start of req's script, from Files or Skill; nil when
// it cannot be read (the run then fails on it as it would anyway).
func scriptHead(req *Request) []byte {
	for _, f := range req.Files {
		if f.Path == req.Script {
			return f.Data[:min(len(f.Data), valid.HeadBytes)]
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
	head, _ := valid.ReadHead(f)
	return head
}
