package adktest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWebUIPath(t *testing.T) {
	cases := []struct{ url, want string }{
		{"/a/artifacts/report.md", "/a/artifacts/report.md"},
		{"/a/artifacts/dist/report.zip", "/a/artifacts/dist/report.zip"},
		{"/a/artifacts/dist%2Freport.zip", "/a/artifacts/dist%2Freport.zip"},
		{"/a/artifacts/my file ", "/a/artifacts/my%20file"},
		{"/a/artifacts/a\tb\nc", "/a/artifacts/abc"},
		{"/a/artifacts/a?b", "/a/artifacts/a"},
		{"/a/artifacts/a#b", "/a/artifacts/a"},
		{`/a/artifacts/a\b`, "/a/artifacts/a/b"},
		{"/a/artifacts/..", "/a/"},
		{"/a/artifacts/%2e%2E/versions/1", "/a/versions/1"},
		{"/a/artifacts/./x", "/a/artifacts/x"},
		{"/a/artifacts/é∕", "/a/artifacts/%C3%A9%E2%88%95"},
		{"/a/artifacts/<{x}>", "/a/artifacts/%3C%7Bx%7D%3E"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, WebUIPath(c.url), "%q", c.url)
	}
}
