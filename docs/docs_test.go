// Package docs holds the reference documentation; its test keeps README.md a
// first page and every relative link of the documentation working.
package docs

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxReadmeLines is how long the first page may grow.
const maxReadmeLines = 300

// linkRe finds Markdown links and images: [text](target) and ![alt](target),
// target without spaces, an optional "title" after it.
var linkRe = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// fenceRe starts or ends a fenced code block.
var fenceRe = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")

// root is the repository root, the folder above this package.
func root(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("..")
	require.NoError(t, err)
	return p
}

// documents are README.md and docs/*.md, slash-separated, relative to root.
func documents(t testing.TB) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root(t), "docs", "*.md"))
	require.NoError(t, err)
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, "docs/"+filepath.Base(d))
	}
	return out
}

func TestReadmeIsAFirstPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	require.NoError(t, err)
	lines := strings.Count(string(data), "\n")
	assert.LessOrEqual(t, lines, maxReadmeLines, "README.md is %d lines: move the reference into docs/", lines)
	assert.Contains(t, string(data), "\n<!-- test commands -->\n```sh\n", "the test commands .ci/run extracts")
}

// TestLinksResolve: every relative link of the documentation names a file
// or folder of the repository, and its #anchor a heading of that file.
func TestLinksResolve(t *testing.T) {
	dir := root(t)
	var missing []string
	for _, doc := range documents(t) {
		for _, l := range links(t, filepath.Join(dir, filepath.FromSlash(doc))) {
			target, anchor, _ := strings.Cut(l.target, "#")
			if strings.Contains(target, ":") || strings.HasPrefix(l.target, "//") {
				continue // a URL: https:, mailto:
			}
			file := doc
			if target != "" {
				file = path.Clean(path.Join(path.Dir(doc), target))
			}
			where := filepath.Join(dir, filepath.FromSlash(file))
			fi, err := os.Stat(where)
			if err != nil {
				missing = append(missing, doc+":"+l.line+": "+l.target+": no "+file)
				continue
			}
			if anchor != "" {
				if fi.IsDir() || !slices.Contains(anchors(t, where), anchor) {
					missing = append(missing, doc+":"+l.line+": "+l.target+": no heading #"+anchor+" in "+file)
				}
			}
		}
	}
	assert.Empty(t, missing, "links that lead nowhere")
}

// link is one link of a document.
type link struct {
	target string
	line   string
}

// links returns the links of a Markdown file outside code blocks and code
// spans.
func links(t testing.TB, file string) []link {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var out []link
	fence := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(strings.Trim(line, " "+m[1][:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		for _, m := range linkRe.FindAllStringSubmatch(withoutCodeSpans(line), -1) {
			out = append(out, link{target: m[1], line: strconv.Itoa(n)})
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// withoutCodeSpans blanks what lies between backticks on a line.
func withoutCodeSpans(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "`")
}

// anchors returns the anchors of a Markdown file's headings, made as
// GitHub makes them: lower case, punctuation dropped, spaces to hyphens, a
// repeated heading suffixed -1, -2, ...
func anchors(t testing.TB, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []string
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(data), "\n") {
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			if fence == "" {
				fence = m[1]
			} else if m[1][0] == fence[0] && len(m[1]) >= len(fence) {
				fence = ""
			}
			continue
		}
		if fence != "" || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := slug(text)
		if k := seen[a]; k > 0 {
			out = append(out, a+"-"+strconv.Itoa(k))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// slug is GitHub's anchor of a heading's text.
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Which module for which ADK", "which-module-for-which-adk"},
		{"ADK's web UI", "adks-web-ui"},
		{"Traps, and what adkskills web does about them", "traps-and-what-adkskills-web-does-about-them"},
		{"list and validate", "list-and-validate"},
		{"`run` and v2.2.0", "run-and-v220"},
		{"Über_alles", "über_alles"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, slug(tt.in), tt.in)
	}
}

// TestLinksOfAFile: links in code blocks and code spans are text, not links;
// repeated headings get numbered anchors.
func TestLinksOfAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.md")
	require.NoError(t, os.WriteFile(file, []byte("# A\n[one](a.md) and ![img](b.png \"t\") `[no](c.md)`\n"+
		"````\n```\n[no](d.md)\n````\n[two](e.md#x) [web](https://x.y/z)\n# A\n## B c\n"), 0o644))
	var got []string
	for _, l := range links(t, file) {
		got = append(got, l.line+" "+l.target)
	}
	assert.Equal(t, []string{"2 a.md", "2 b.png", "7 e.md#x", "7 https://x.y/z"}, got)
	assert.Equal(t, []string{"a", "a-1", "b-c"}, anchors(t, file))
}
