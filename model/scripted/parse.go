package scripted

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// The two commands a demo message may start with.
const (
	// RunCommand, "run SKILL SCRIPT [ARGS...]", is a run_skill_script call.
	RunCommand = "run"
	// InlineCommand, "run-inline LANGUAGE [ARGS...]" followed by the code,
	// is a run_skill_inline_script call.
	InlineCommand = "run-inline"
)

// ErrNotCommand is ParseMessage's error for a message that starts with
// neither command.
var ErrNotCommand = errors.New("not a run or run-inline command")

// ParseMessage reads a user's message the way the demo model does:
//
//	run SKILL SCRIPT [ARGS...]
//	run-inline LANGUAGE [ARGS...]
//	```python
//	print("the code")
//	```
//
// The first line is the command: "run" becomes a run_skill_script call,
// "run-inline" a run_skill_inline_script call. The lines after it are the
// code of run-inline (required) and the standard input of run (optional),
// inside a fenced code block (``` or ~~~ lines, whose info string may name
// run-inline's language instead) or as they are. Words split as a shell
// splits them, without expansion: '...' is literal, "..." keeps spaces and
// takes \" and \\, and a backslash escapes the next character. The command
// word's case does not matter.
//
// A message that starts with neither command is ErrNotCommand; a malformed
// command is an error that says what is wrong. The call's arguments are
// what a model would send; the tool checks them.
func ParseMessage(text string) (*genai.FunctionCall, error) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	line, rest, _ := strings.Cut(text, "\n")
	cmd, params := splitCommand(line)
	switch strings.ToLower(cmd) {
	case RunCommand, InlineCommand:
	default:
		return nil, ErrNotCommand
	}
	cmd = strings.ToLower(cmd)
	words, err := splitWords(params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	b, err := parseBlock(rest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if cmd == RunCommand {
		return runCall(words, b)
	}
	return inlineCall(words, b)
}

// runCall is the run_skill_script call of "run WORDS", with the block as its
// standard input.
func runCall(words []string, b block) (*genai.FunctionCall, error) {
	if len(words) < 2 {
		return nil, fmt.Errorf("%s needs a SKILL and a SCRIPT: %s SKILL SCRIPT [ARGS...]", RunCommand, RunCommand)
	}
	args := map[string]any{"skill_name": words[0], "script_path": words[1], "args": anys(words[2:])}
	if b.present {
		args["stdin"] = b.text
	}
	return &genai.FunctionCall{Name: runscript.Name, Args: args}, nil
}

// inlineCall is the run_skill_inline_script call of "run-inline WORDS" with
// the block as its code.
func inlineCall(words []string, b block) (*genai.FunctionCall, error) {
	var lang string
	if len(words) > 0 {
		lang, words = words[0], words[1:]
	}
	switch {
	case lang == "" && b.info == "":
		return nil, fmt.Errorf("%s needs a LANGUAGE: %s LANGUAGE [ARGS...], then the code", InlineCommand, InlineCommand)
	case lang == "":
		lang = b.info
	case b.info != "" && b.info != lang:
		return nil, fmt.Errorf("%s %s, but the code block says %s", InlineCommand, lang, b.info)
	}
	if strings.TrimSpace(b.text) == "" {
		return nil, fmt.Errorf("%s needs the code on the lines after %s %s, in a ``` block", InlineCommand, InlineCommand, lang)
	}
	return &genai.FunctionCall{Name: runinline.Name, Args: map[string]any{"language": lang, "script": b.text, "args": anys(words)}}, nil
}

// anys converts words to the []any a model's JSON arguments decode to.
func anys(words []string) []any {
	out := make([]any, 0, len(words))
	for _, w := range words {
		out = append(out, w)
	}
	return out
}

// splitCommand splits a line into its first word and the rest.
func splitCommand(line string) (cmd, rest string) {
	line = strings.TrimLeftFunc(line, unicode.IsSpace)
	i := strings.IndexFunc(line, unicode.IsSpace)
	if i < 0 {
		return line, ""
	}
	return line[:i], line[i:]
}

// splitWords splits s as a shell does, without expansion: whitespace
// separates words, '...' is literal, "..." keeps spaces and takes \" and
// \\ (a backslash before anything else stays), and a backslash outside
// quotes escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
			i += size
			continue
		case r == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("a ' quote is not closed")
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 2
		case r == '"':
			n, err := doubleQuoted(&w, s[i+1:])
			if err != nil {
				return nil, err
			}
			i += 1 + n
		case r == '\\':
			if i+1 == len(s) {
				return nil, errors.New("a backslash ends the line: it escapes nothing")
			}
			_, next := utf8.DecodeRuneInString(s[i+1:])
			w.WriteString(s[i+1 : i+1+next])
			i += 1 + next
		default:
			w.WriteString(s[i : i+size])
			i += size
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// doubleQuoted writes the content of a "..." word part to w; s starts after
// the opening quote. It returns how many bytes of s it read, closing quote
// included.
func doubleQuoted(w *strings.Builder, s string) (int, error) {
	for j := 0; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\'):
			w.WriteByte(s[j+1])
			j++
		default:
			w.WriteByte(c)
		}
	}
	return 0, errors.New(`a " quote is not closed`)
}

// block is what follows a command's line.
type block struct {
	present bool   // some text follows the command line
	text    string // the code, or the standard input
	info    string // the fence's info string ("python"); "" without a fence
}

// parseBlock reads the lines after a command: a fenced code block, whose
// content (with a final newline) is the text, or the lines as they are.
// Nothing but blank lines may follow a fenced block.
func parseBlock(rest string) (block, error) {
	if strings.TrimSpace(rest) == "" {
		return block{}, nil
	}
	lines := strings.Split(rest, "\n")
	first := 0
	for strings.TrimSpace(lines[first]) == "" {
		first++
	}
	mark, info, ok := openFence(lines[first])
	if !ok {
		return block{present: true, text: rest}, nil
	}
	for i := first + 1; i < len(lines); i++ {
		if !closesFence(lines[i], mark) {
			continue
		}
		if after := strings.Join(lines[i+1:], "\n"); strings.TrimSpace(after) != "" {
			return block{}, fmt.Errorf("text after the code block: put it inside, or leave it out")
		}
		text := strings.Join(lines[first+1:i], "\n")
		if i > first+1 {
			text += "\n"
		}
		return block{present: true, text: text, info: info}, nil
	}
	return block{}, fmt.Errorf("the code block is not closed: end it with a %s line", mark)
}

// openFence reports whether line opens a fenced code block (at most three
// spaces, then three or more backticks or tildes), with the fence and its
// info string's first word.
func openFence(line string) (mark, info string, ok bool) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || len(trimmed) < 3 {
		return "", "", false
	}
	c := trimmed[0]
	if c != '`' && c != '~' {
		return "", "", false
	}
	n := len(trimmed) - len(strings.TrimLeft(trimmed, string(c)))
	if n < 3 {
		return "", "", false
	}
	rest := trimmed[n:]
	if c == '`' && strings.ContainsRune(rest, '`') {
		return "", "", false // an inline code span, not a fence
	}
	if f := strings.Fields(rest); len(f) > 0 {
		info = f[0]
	}
	return trimmed[:n], info, true
}

// closesFence reports whether line closes a block opened with mark: the
// same character, at least as many times, and nothing else.
func closesFence(line, mark string) bool {
	t := strings.TrimSpace(line)
	if len(line)-len(strings.TrimLeft(line, " ")) > 3 || len(t) < len(mark) {
		return false
	}
	return strings.Trim(t, mark[:1]) == ""
}

// NeedsMore reports whether a message typed line by line is not complete
// yet: it is a run-inline command still waiting for its code, or it has
// opened a fenced code block that no line has closed. A terminal chat
// keeps reading lines while it is true.
func NeedsMore(text string) bool {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	line, rest, _ := strings.Cut(strings.TrimLeftFunc(text, unicode.IsSpace), "\n")
	if cmd, _ := splitCommand(line); strings.EqualFold(cmd, InlineCommand) && strings.TrimSpace(rest) == "" {
		return true
	}
	mark := ""
	for _, l := range strings.Split(text, "\n") {
		if mark == "" {
			if m, _, ok := openFence(l); ok {
				mark = m
			}
		} else if closesFence(l, mark) {
			mark = ""
		}
	}
	return mark != ""
}
