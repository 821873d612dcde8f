package mcpskills

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adkskills/adkskills/internal/valid"
)

func TestParseSkillURI(t *testing.T) {
	cases := []struct {
		uri, name, path string
		dir             bool
	}{
		{"skill://demo/SKILL.md", "demo", "SKILL.md", false},
		{"skill://demo", "demo", ".", true},
		{"skill://demo/", "demo", ".", true},
		{"skill://demo/scripts/", "demo", "scripts", true},
		{"skill://a-1/a%20b/%C3%BC%23%3F.txt", "a-1", "a b/ü#?.txt", false},
		{"skill://demo/..x/.hidden", "demo", "..x/.hidden", false},
	}
	for _, c := range cases {
		name, p, dir, err := parseSkillURI(c.uri)
		require.NoError(t, err, c.uri)
		assert.Equal(t, []any{c.name, c.path, c.dir}, []any{name, p, dir}, c.uri)
	}
	for _, bad := range []string{"", "skill:", "skill://", "skill:///x", "skill://Demo/x", "skill://-a/x", "skill://a--b/x", "skill://a_b/x",
		"skill://" + strings.Repeat("a", 65) + "/x", "skill://demo/../x", "skill://demo/a/../../x", "skill://demo/%2e%2e/x", "skill://demo/a%2fb",
		"skill://demo/a%5cb", "skill://demo/a%00b", "skill://demo//x", "skill://demo/./x", "skill://demo/x?", "skill://demo/x?a", "skill://demo/x#",
		"skill://u@demo/x", "skill://demo:1/x", "skill://demo/%zz", "artifact:///x", "skill:demo/x", "http://demo/x"} {
		_, _, _, err := parseSkillURI(bad)
		assert.ErrorIs(t, err, ErrBadURI, bad)
	}
}

func TestParseArtifactURI(t *testing.T) {
	for _, c := range []struct {
		uri, name string
		version   int64
	}{
		{"artifact:///report.md/2", "report.md", 2},
		{"artifact:///report.md", "report.md", 0},
		{ArtifactURI("dist∕a b~20.txt", 7), "dist∕a b~20.txt", 7},
	} {
		name, v, err := parseArtifactURI(c.uri)
		require.NoError(t, err, c.uri)
		assert.Equal(t, c.name, name)
		assert.Equal(t, c.version, v)
	}
	for _, bad := range []string{"artifact://", "artifact:///", "artifact://h/x", "artifact:///x/0", "artifact:///x/01", "artifact:///x/+1",
		"artifact:///x/-1", "artifact:///x/1/2", "artifact:///x/9223372036854775808", "artifact:///a%2Fb/1", "artifact:///%00/1",
		"artifact:///x?v=1", "artifact:///x#1", "artifact:x", "skill://x/y"} {
		_, _, err := parseArtifactURI(bad)
		assert.ErrorIs(t, err, ErrBadURI, bad)
	}
}

// FuzzParseSkillURI: whatever a peer sends, an accepted URI names a valid
// skill and a clean path inside it, and the URI the server makes for that
// path reads back the same.
func FuzzParseSkillURI(f *testing.F) {
	for _, s := range []string{"skill://demo/SKILL.md", "skill://demo/a%20b/c", "skill://demo/%2e%2e/x", "skill://demo/", "skill://d/..%2f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		name, p, dir, err := parseSkillURI(uri)
		if err != nil {
			return
		}
		if !validName(name) {
			t.Fatalf("%q: invalid name %q", uri, name)
		}
		if c, err := valid.Path(p); err != nil || c != p {
			t.Fatalf("%q: path %q is not clean and inside", uri, p)
		}
		back := FileURI(name, p)
		if p == "." {
			back = dirURI(name, p)
		}
		n2, p2, _, err := parseSkillURI(back)
		if err != nil || n2 != name || p2 != p {
			t.Fatalf("%q -> (%q, %q, %v) -> %q -> (%q, %q, %v)", uri, name, p, dir, back, n2, p2, err)
		}
	})
}

// FuzzParseArtifactURI: an accepted URI names an artifact and a version,
// and ArtifactURI makes a URI that reads back the same.
func FuzzParseArtifactURI(f *testing.F) {
	for _, s := range []string{"artifact:///a/1", "artifact:///a", "artifact:///%E2%88%95/3", "artifact:///a/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		name, v, err := parseArtifactURI(uri)
		if err != nil {
			return
		}
		if name == "" || v < 0 || strings.ContainsAny(name, "/\\\x00") {
			t.Fatalf("%q: (%q, %d)", uri, name, v)
		}
		n2, v2, err := parseArtifactURI(ArtifactURI(name, v))
		if err != nil || n2 != name || v2 != v {
			t.Fatalf("%q -> (%q, %d) -> (%q, %d, %v)", uri, name, v, n2, v2, err)
		}
	})
}

func TestEntryJSON(t *testing.T) {
	e := &Entry{URI: "skill://s/SKILL.md", Frontmatter: map[string]any{"name": "s"}, Resources: []*FileEntry{{URI: "skill://s/SKILL.md", Digest: "sha256:x", Size: 3}}}
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, `{"uri":"skill://s/SKILL.md","frontmatter":{"name":"s"},"resources":[{"uri":"skill://s/SKILL.md","digest":"sha256:x","size":3}]}`, string(b))
	var back Entry
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, *e, back)

	b, err = json.Marshal(&Entry{URI: "u", Dynamic: true})
	require.NoError(t, err)
	assert.JSONEq(t, `{"uri":"u","frontmatter":{},"resources":"dynamic"}`, string(b))
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, back.Dynamic)
	assert.Nil(t, back.Resources)

	b, err = json.Marshal(&Entry{URI: "u"})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"resources":[]`)

	for _, bad := range []string{`{"uri":"u","frontmatter":{},"resources":"static"}`, `{"uri":"u","frontmatter":{}}`,
		`{"uri":"u","frontmatter":{},"resources":null}`, `{"uri":"u","resources":[]}`, `{"frontmatter":{},"resources":[]}`,
		`{"uri":"u","frontmatter":[],"resources":[]}`, `{"uri":"u","frontmatter":{},"resources":7}`, `[]`} {
		assert.Error(t, json.Unmarshal([]byte(bad), &back), bad)
	}
}

// FuzzEntryJSON: an entry that decodes encodes and decodes to itself.
func FuzzEntryJSON(f *testing.F) {
	f.Add(`{"uri":"u","frontmatter":{"a":1},"resources":[{"uri":"x","digest":"d","size":1}]}`)
	f.Add(`{"uri":"u","frontmatter":{},"resources":"dynamic"}`)
	f.Fuzz(func(t *testing.T, in string) {
		var e Entry
		if json.Unmarshal([]byte(in), &e) != nil {
			return
		}
		b, err := json.Marshal(&e)
		if err != nil {
			t.Fatalf("%q decoded but does not encode: %v", in, err)
		}
		var again Entry
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("%s does not decode again: %v", b, err)
		}
		b2, _ := json.Marshal(&again)
		if string(b) != string(b2) {
			t.Fatalf("not stable: %s then %s", b, b2)
		}
	})
}

func TestValidNameBounds(t *testing.T) {
	for name, ok := range map[string]bool{
		strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
		"az09-z": true, "a": true, "9": true, "": false,
		"a`": false, "a{": false, "a/": false, "a:": false, "aA": false, "a_b": false,
		"-a": false, "a-": false, "a--b": false,
	} {
		assert.Equal(t, ok, validName(name), "%q", name)
	}
}

func TestURILengthBound(t *testing.T) {
	prefix := "skill://demo/"
	at := prefix + strings.Repeat("a", maxURIBytes-len(prefix))
	_, _, _, err := parseSkillURI(at)
	assert.NoError(t, err, "a URI of exactly maxURIBytes")
	_, _, _, err = parseSkillURI(at + "a")
	assert.ErrorIs(t, err, ErrBadURI)
}
