package skillfs

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/tool/skilltoolset/skill"
)

func TestParseLenient(t *testing.T) {
	cases := []struct {
		name      string
		in        string
		desc      string
		body      string
		extra     []string
		metadata  map[string]string
		warning   string // a piece of the one warning, if any
		wantLine  int
		wantError string
	}{
		{name: "plain", in: "---\nname: demo\ndescription: Does things.\n---\n# Body\n", desc: "Does things.", body: "# Body\n"},
		{name: "crlf", in: "---\r\nname: demo\r\ndescription: Does things.\r\n---\r\nbody\r\n", desc: "Does things.", body: "body\r\n"},
		{name: "bom", in: "\ufeff---\nname: demo\ndescription: D.\n---\n", desc: "D.", body: ""},
		{name: "no trailing newline", in: "---\nname: demo\ndescription: D.\n---", desc: "D.", body: ""},
		{name: "folded", in: "---\nname: demo\ndescription: >\n  Folded\n  text.\n---\n", desc: "Folded text.\n", body: ""},
		{name: "extra keys", in: "---\nname: demo\nargument-hint: \"[file]\"\ndescription: D.\nuser-invocable: true\nversion: 1.2.0\n---\nb\n",
			desc: "D.", body: "b\n", extra: []string{"argument-hint", "user-invocable", "version"}},
		{name: "metadata numbers", in: "---\nname: demo\ndescription: D.\nmetadata:\n  version: 1.0\n  updated: 2026-03-13\n---\n",
			desc: "D.", metadata: map[string]string{"version": "1.0", "updated": "2026-03-13"}},
		{name: "no opening", in: "name: demo\n", wantLine: 1, wantError: "must start with a '---' line"},
		{name: "empty", in: "", wantLine: 1, wantError: "must start with a '---' line"},
		{name: "no closing", in: "---\nname: demo\ndescription: D.\n", wantLine: 1, wantError: "no closing '---' line"},
		{name: "duplicate key", in: "---\nname: demo\ndescription: D.\nname: demo\n---\n", wantLine: 4, wantError: `key "name" is defined twice`},
		{name: "metadata map value", in: "---\nname: demo\ndescription: D.\nmetadata:\n  a: b\n  nested:\n    x: y\n---\n", wantLine: 6, wantError: `metadata "nested" must be a string, got a mapping`},
		{name: "yaml syntax", in: "---\nname: demo\ndescription: D.\nbad: key: value\n---\n", wantLine: 4, wantError: "invalid YAML"},
		{name: "tab indent", in: "---\nname: demo\n\tdescription: D.\n---\n", wantLine: 3, wantError: "invalid YAML"},
		{name: "list description", in: "---\nname: demo\ndescription: [TODO: fill in]\n---\n", wantLine: 3, wantError: `"description" must be a string, got a list`},
		{name: "mapping name", in: "---\nname:\n  a: b\ndescription: D.\n---\n", wantLine: 3, wantError: `"name" must be a string, got a mapping`},
		{name: "scalar metadata", in: "---\nname: demo\ndescription: D.\nmetadata: x\n---\n", wantLine: 4, wantError: `"metadata" must be a mapping`},
		{name: "not a mapping", in: "---\n- a\n- b\n---\n", wantLine: 2, wantError: "must be a YAML mapping"},
		{name: "missing description", in: "---\nname: demo\n---\n", wantError: "description must be between 1 and 1024"},
		{name: "long description loads whole", in: "---\nname: demo\ndescription: " + strings.Repeat("d", MaxDescriptionBytes+1) + "\n---\n",
			desc: strings.Repeat("d", MaxDescriptionBytes+1), warning: "the description is 1025 characters, over the limit of 1024: the skill is loaded with it whole"},
		{name: "long block description", in: "---\nname: demo\ndescription: |-\n  " + strings.Repeat("d", MaxDescriptionBytes) + "\n  e\n---\n",
			desc: strings.Repeat("d", MaxDescriptionBytes) + "\ne", warning: "1026 characters"},
		{name: "long in bytes only", in: "---\nname: demo\ndescription: " + strings.Repeat("é", MaxDescriptionBytes/2+1) + "\n---\n",
			desc: strings.Repeat("é", MaxDescriptionBytes/2+1), warning: "513 characters, 1026 bytes (ADK counts bytes)"},
		{name: "description at the limit", in: "---\nname: demo\ndescription: " + strings.Repeat("d", MaxDescriptionBytes) + "\n---\n", desc: strings.Repeat("d", MaxDescriptionBytes)},
		{name: "bad name", in: "---\nname: Bad_Name\ndescription: D.\n---\n", wantLine: 2, wantError: "lowercase"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.in))
			if c.wantError != "" {
				require.Error(t, err)
				var pe *ParseError
				require.True(t, errors.As(err, &pe), "%T", err)
				assert.Contains(t, pe.Msg, c.wantError)
				assert.Equal(t, c.wantLine, pe.Line, pe.Error())
				assert.ErrorIs(t, err, skill.ErrInvalidFrontmatter)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "demo", p.Frontmatter.Name)
			assert.Equal(t, c.desc, p.Frontmatter.Description)
			assert.Equal(t, c.body, p.Body)
			assert.Equal(t, c.extra, p.Extra)
			if c.warning == "" {
				assert.Empty(t, p.Warnings)
			} else if assert.Len(t, p.Warnings, 1) {
				assert.Contains(t, p.Warnings[0], c.warning)
			}
			if c.metadata != nil {
				assert.Equal(t, c.metadata, p.Frontmatter.Metadata)
			}
		})
	}
}

// TestParseAllowedTools pins how allowed-tools reads, the same under both
// ADK majors: the specification's string (tools separated by spaces or
// commas, parentheses kept whole) and the list earlier clients write.
func TestParseAllowedTools(t *testing.T) {
	cases := []struct {
		name      string
		value     string
		want      []string
		wantError string
	}{
		{name: "spec string", value: "Read Bash(git:*)", want: []string{"Read", "Bash(git:*)"}},
		{name: "commas", value: "Read, Grep,Write", want: []string{"Read", "Grep", "Write"}},
		{name: "separators in parentheses", value: "\"Bash(git add, git commit) Read\"", want: []string{"Bash(git add, git commit)", "Read"}},
		{name: "list", value: "[Read, Bash]", want: []string{"Read", "Bash"}},
		{name: "empty", value: "", want: nil},
		{name: "unclosed", value: "Bash(git", wantError: "allowed-tools must be a whitespace- or comma-separated list of Tool or Tool(well-balanced expression): unclosed '('"},
		{name: "unopened", value: "Read)", wantError: "unexpected ')'"},
		{name: "number", value: "5", wantError: "allowed-tools must be a string or a sequence of strings"},
		{name: "mapping", value: "{a: b}", wantError: "allowed-tools must be a string or a sequence of strings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte("---\nname: demo\ndescription: D.\nallowed-tools: " + c.value + "\n---\n"))
			if c.wantError != "" {
				var pe *ParseError
				require.ErrorAs(t, err, &pe)
				assert.Contains(t, pe.Msg, c.wantError)
				assert.Equal(t, 4, pe.Line, pe.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, p.Frontmatter.AllowedTools)
		})
	}
}

func TestParseErrorText(t *testing.T) {
	assert.Equal(t, "line 3: bad", (&ParseError{Line: 3, Msg: "bad"}).Error())
	assert.Equal(t, "bad", (&ParseError{Msg: "bad"}).Error())
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: demo\ndescription: D.\n---\nbody"))
	f.Add([]byte("---\nname: demo\nx: [1, 2]\ndescription: D.\n---\n"))
	f.Add([]byte("---\r\n---\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := Parse(in)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %T %v", err, err)
			}
			if pe.Line < 0 {
				t.Fatalf("negative line %d", pe.Line)
			}
			return
		}
		// What ADK's parser accepts, but for a long description, which
		// loads with a warning.
		fm := *p.Frontmatter
		if len(fm.Description) > MaxDescriptionBytes {
			if len(p.Warnings) == 0 {
				t.Fatalf("a %d-byte description loaded without a warning", len(fm.Description))
			}
			fm.Description = "d"
		}
		if err := skill.Validate(&fm); err != nil {
			t.Fatalf("accepted a frontmatter ADK rejects: %v", err)
		}
		if !strings.HasSuffix(string(in), p.Body) {
			t.Fatalf("body %q is not the end of the input", p.Body)
		}
	})
}
