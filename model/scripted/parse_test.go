package scripted

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMessage(t *testing.T) {
	run := func(skill, script string, args ...any) map[string]any {
		return map[string]any{"skill_name": skill, "script_path": script, "args": append([]any{}, args...)}
	}
	withStdin := func(m map[string]any, stdin string) map[string]any {
		m["stdin"] = stdin
		return m
	}
	inline := func(lang, script string, args ...any) map[string]any {
		return map[string]any{"language": lang, "script": script, "args": append([]any{}, args...)}
	}
	tests := []struct {
		name string
		in   string
		tool string         // "" when an error is expected
		args map[string]any // the call's arguments
		err  string         // a piece of the error
	}{
		{"run", "run report-writer scripts/report.py Ada", "run_skill_script", run("report-writer", "scripts/report.py", "Ada"), ""},
		{"run without args", "run py-tools scripts/fail.py", "run_skill_script", run("py-tools", "scripts/fail.py"), ""},
		{"any case, any spacing", "  Run\tx  y \t z  ", "run_skill_script", run("x", "y", "z"), ""},
		{"quotes", `run s p 'a b' "c \"d\" \\ \e" f\ g '' ""`, "run_skill_script", run("s", "p", "a b", `c "d" \ \e`, "f g", "", ""), ""},
		{"quotes join a word", `run s p a'b c'"d"e`, "run_skill_script", run("s", "p", "ab cde"), ""},
		{"single quotes keep backslashes", `run s p 'a\b'`, "run_skill_script", run("s", "p", `a\b`), ""},
		{"non-ASCII", "run s p naïve ✓", "run_skill_script", run("s", "p", "naïve", "✓"), ""},
		{"flags are arguments", "run s p --style fancy -v", "run_skill_script", run("s", "p", "--style", "fancy", "-v"), ""},
		{"stdin as it is", "run py-tools scripts/upper.py a\nhello\nworld", "run_skill_script", withStdin(run("py-tools", "scripts/upper.py", "a"), "hello\nworld"), ""},
		{"stdin in a block", "run s p\n\n```\nhello\n```\n", "run_skill_script", withStdin(run("s", "p"), "hello\n"), ""},
		{"an empty block", "run s p\n```\n```", "run_skill_script", withStdin(run("s", "p"), ""), ""},
		{"CRLF", "run s p a\r\n```\r\nhi\r\n```\r\n", "run_skill_script", withStdin(run("s", "p", "a"), "hi\n"), ""},
		{"inline", "run-inline python\n```\nprint('hi')\n```", "run_skill_inline_script", inline("python", "print('hi')\n"), ""},
		{"inline with args", "RUN-INLINE bash one 'two words'\n```sh\necho \"$@\"\n```", "", nil, "run-inline bash, but the code block says sh"},
		{"inline language from the fence", "run-inline\n```python\nprint(1)\n```", "run_skill_inline_script", inline("python", "print(1)\n"), ""},
		{"inline args, language from the command", "run-inline bash a b\n~~~bash\necho \"$@\"\n~~~", "run_skill_inline_script", inline("bash", "echo \"$@\"\n", "a", "b"), ""},
		{"inline without a fence", "run-inline node\nconsole.log(1)\nconsole.log(2)", "run_skill_inline_script", inline("node", "console.log(1)\nconsole.log(2)"), ""},
		{"a longer fence holds a shorter one", "run-inline bash\n````\ncat <<'EOF'\n```\nEOF\n````", "run_skill_inline_script", inline("bash", "cat <<'EOF'\n```\nEOF\n"), ""},
		{"an indented fence", "run-inline bash\n   ```\n echo hi\n   ```", "run_skill_inline_script", inline("bash", " echo hi\n"), ""},
		{"a code span is no fence", "run-inline bash\n```echo``` hi", "run_skill_inline_script", inline("bash", "```echo``` hi"), ""},
		{"two backticks are no fence", "run-inline bash\n``x\necho", "run_skill_inline_script", inline("bash", "``x\necho"), ""},
		{"four spaces is no fence", "run-inline bash\n    ```\necho", "run_skill_inline_script", inline("bash", "    ```\necho"), ""},

		{"plain text", "write me a report", "", nil, ErrNotCommand.Error()},
		{"a word that starts like run", "running late", "", nil, ErrNotCommand.Error()},
		{"run later in the line", "please run x y", "", nil, ErrNotCommand.Error()},
		{"empty", "  \n ", "", nil, ErrNotCommand.Error()},
		{"run alone", "run", "", nil, "run needs a SKILL and a SCRIPT"},
		{"run with a skill only", "run report-writer", "", nil, "run needs a SKILL and a SCRIPT"},
		{"an open single quote", "run s p 'a b", "", nil, "run: a ' quote is not closed"},
		{"an open double quote", `run s p "a \"`, "", nil, `run: a " quote is not closed`},
		{"a final backslash", `run s p a\`, "", nil, "run: a backslash ends the line"},
		{"inline without code", "run-inline python", "", nil, "run-inline needs the code"},
		{"inline with an empty block", "run-inline python\n```\n\n```", "", nil, "run-inline needs the code"},
		{"inline without a language", "run-inline\n```\necho\n```", "", nil, "run-inline needs a LANGUAGE"},
		{"an open block", "run-inline bash\n```\necho", "", nil, "the code block is not closed: end it with a ``` line"},
		{"a tilde block closes with tildes", "run-inline bash\n~~~~\necho\n```\n", "", nil, "end it with a ~~~~ line"},
		{"text after the block", "run-inline bash\n```\necho\n```\nthanks!", "", nil, "text after the code block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := ParseMessage(tt.in)
			if tt.tool == "" {
				require.Error(t, err)
				assert.Nil(t, fc)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.tool, fc.Name)
			assert.Equal(t, tt.args, fc.Args)
		})
	}
}

func TestNotCommandIsASentinel(t *testing.T) {
	_, err := ParseMessage("hello")
	assert.True(t, errors.Is(err, ErrNotCommand))
	_, err = ParseMessage("run x")
	assert.False(t, errors.Is(err, ErrNotCommand))
}

func TestNeedsMore(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"run-inline python", true},
		{"  RUN-INLINE python  \n", true},
		{"run-inline python\n```", true},
		{"run-inline python\n```\nprint(1)", true},
		{"run-inline python\n```\nprint(1)\n```", false},
		{"run-inline python\nprint(1)", false},
		{"run s p", false},
		{"run s p\n~~~\nin", true},
		{"run s p\n~~~\nin\n```", true},
		{"run s p\n~~~\nin\n~~~~", false},
		{"hello", false},
		{"look: ```code```", false},
		{"```", true},
		{"```go\nx\n```\n```", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, NeedsMore(tt.in), "%q", tt.in)
	}
}

// shellQuote quotes a word for splitWords.
func shellQuote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// FuzzSplitWords: words quoted and joined split back into the same words,
// and no input panics.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"a b", `'a b' "c\"d"`, `x\ y`, "", "  ", `"\\"`, "naïve\t✓", `'`, `a\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := splitWords(s)
		if err != nil {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = shellQuote(w)
		}
		again, err := splitWords(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("%q: the quoted words %q do not split: %v", s, quoted, err)
		}
		if len(words) == 0 {
			words = nil
		}
		assert.Equal(t, words, again, "%q", s)
	})
}

// FuzzParseMessage: whatever the message, the parser answers with a call of
// one of the two tools, with the arguments the contract names, or an error.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{"run a b c", "run-inline python\n```\nx\n```", "run-inline\n~~~bash\ny\n~~~\n", "run a", "hello", "run a b\n```\n", "run-inline x\n```\n```\nz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fc, err := ParseMessage(s)
		if err != nil {
			require.Nil(t, fc)
			return
		}
		switch fc.Name {
		case "run_skill_script":
			assert.NotEmpty(t, fc.Args["skill_name"])
			assert.NotEmpty(t, fc.Args["script_path"])
		case "run_skill_inline_script":
			assert.NotEmpty(t, fc.Args["language"])
			assert.NotEmpty(t, strings.TrimSpace(fc.Args["script"].(string)))
		default:
			t.Fatalf("%q: call of %q", s, fc.Name)
		}
		_, ok := fc.Args["args"].([]any)
		assert.True(t, ok, "%q: args %T", s, fc.Args["args"])
	})
}
