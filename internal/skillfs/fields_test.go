package skillfs

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFields(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"spec keys", "name: a\ndescription: b\nmetadata:\n  k: v\nallowed-tools: Read Bash", `{"name":"a","description":"b","metadata":{"k":"v"},"allowed-tools":"Read Bash"}`},
		{"extra keys", "name: a\nversion: 1.2.0\nuser-invocable: true\nargument-hint: \"[x]\"", `{"name":"a","version":"1.2.0","user-invocable":true,"argument-hint":"[x]"}`},
		{"core schema ints", "a: 12\nb: -3\nc: +4\nd: 0o17\ne: 0x1F\nf: 0755\ng: 1_000", `{"a":12,"b":-3,"c":4,"d":15,"e":31,"f":755,"g":"1_000"}`},
		{"core schema floats", "a: 1.5\nb: 1.0\nc: .5\nd: 1e3\ne: .inf\nf: .nan", `{"a":1.5,"b":1,"c":0.5,"d":1000,"e":".inf","f":".nan"}`},
		{"big integers", "a: 12345678901234567890\nb: 0xFFFFFFFFFFFFFFFFFF", `{"a":12345678901234567890,"b":"0xFFFFFFFFFFFFFFFFFF"}`},
		{"YAML 1.1 words are strings", "a: yes\nb: No\nc: on\nd: y", `{"a":"yes","b":"No","c":"on","d":"y"}`},
		{"booleans and nulls", "a: true\nb: False\nc: TRUE\nd: null\ne: ~\nf:", `{"a":true,"b":false,"c":true,"d":null,"e":null,"f":null}`},
		{"dates are strings", "a: 2024-01-02\nb: 2024-01-02T10:00:00Z", `{"a":"2024-01-02","b":"2024-01-02T10:00:00Z"}`},
		{"quoted and block scalars", "a: \"12\"\nb: 'true'\nc: |\n  x\n  y\nd: >\n  p\n  q", `{"a":"12","b":"true","c":"x\ny\n","d":"p q\n"}`},
		{"explicit tags", "a: !!str 12\nb: !!int \"7\"\nc: !!null x\nd: !custom v", `{"a":"12","b":7,"c":null,"d":"v"}`},
		{"aliases and merge key", "base: &b {x: 1}\nuse: *b\nm:\n  <<: *b\n  y: 2", `{"base":{"x":1},"use":{"x":1},"m":{"<<":{"x":1},"y":2}}`},
		{"lists", "a: [1, two, [3]]\nb:\n  - x\n  - {k: v}", `{"a":[1,"two",[3]],"b":["x",{"k":"v"}]}`},
		{"scalar keys", "1: one\ntrue: yes", `{"1":"one","true":"yes"}`},
		{"empty frontmatter", "", `{}`},
	}
	for _, c := range cases {
		got, err := Fields([]byte("---\n" + c.yaml + "\n---\nbody\n"))
		require.NoError(t, err, c.name)
		b, err := json.Marshal(got)
		require.NoError(t, err, c.name)
		assert.JSONEq(t, c.want, string(b), c.name)
	}
}

func TestFieldsRefuses(t *testing.T) {
	cases := map[string]string{
		"no frontmatter":  "# just markdown\n",
		"unclosed":        "---\nname: a\n",
		"not a mapping":   "---\n- a\n- b\n---\n",
		"a scalar":        "---\nhello\n---\n",
		"invalid YAML":    "---\na: [\n---\n",
		"complex key":     "---\n? [a, b]\n: c\n---\n",
		"too deep":        "---\na: " + strings.Repeat("[", maxFieldDepth+2) + strings.Repeat("]", maxFieldDepth+2) + "\n---\n",
		"alias expansion": "---\n" + laughs(9) + "---\n",
	}
	for name, in := range cases {
		_, err := Fields([]byte(in))
		assert.Error(t, err, name)
	}
}

// laughs is a YAML "billion laughs": n levels of aliases, each ten of the
// one before.
func laughs(n int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [x]\n")
	for i := 1; i <= n; i++ {
		refs := strings.TrimSuffix(strings.Repeat("*l"+strconv.Itoa(i-1)+", ", 10), ", ")
		b.WriteString("l" + strconv.Itoa(i) + ": &l" + strconv.Itoa(i) + " [" + refs + "]\n")
	}
	return b.String()
}

// FuzzFields: whatever a SKILL.md holds, Fields either fails or returns
// values JSON can carry.
func FuzzFields(f *testing.F) {
	for _, s := range []string{"---\nname: a\n---\n", "---\na: &x [*x]\n---\n", "---\na: 0o7\nb: .inf\n---\n", "---\n? a\n---\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Fields(in)
		if err != nil {
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("%q: fields JSON cannot carry: %v", in, err)
		}
	})
}
