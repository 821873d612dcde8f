package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/server/adkrest"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/internal/adktest"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
)

// subfolderScript writes files in subfolders whose names a URL path treats
// specially, each holding the run's argument.
const subfolderScript = `mkdir -p "out/sub dir" out/x
printf 'naive %s' "$1" > "out/sub dir/naïve #1?.txt"
printf 'percent %s' "$1" > "out/x/100%.csv"
printf 'tilde %s' "$1" > "out/x/a~2Fb.txt"
printf 'space %s' "$1" > "out/x/ends in space "
`

// TestOutputsLoadTheWayTheWebUIFetches runs scripts that write into
// subfolders twice, then asks ADK's REST server, over the same artifact
// service, for every output the way ADK's web UI does: the artifact name raw
// in the URL path, for the latest version and for /versions/N.
func TestOutputsLoadTheWayTheWebUIFetches(t *testing.T) {
	inline := func(arg string) map[string]any {
		return map[string]any{"language": "bash", "script": subfolderScript, "args": []any{arg}}
	}
	h := newHarness(t, harnessConfig{
		opts: []skilltoolset.Option{skilltoolset.WithInlineScripts(true)},
		steps: []scripted.Step{
			call("run_skill_script", reportArgs), say("one"),
			call("run_skill_inline_script", inline("v1")), say("two"),
			call("run_skill_script", reportArgs), say("three"),
			call("run_skill_inline_script", inline("v2")), say("four"),
		},
	})
	var outputs []map[string]any
	for turn := range 4 {
		events := h.say(fmt.Sprintf("turn %d", turn))
		tool := "run_skill_script"
		if turn%2 == 1 {
			tool = "run_skill_inline_script"
			events = confirm(h, confirmationCall(t, events), true)
		}
		_, resp := responseEvent(t, events, tool)
		require.Equal(t, "success", resp["status"], jsonOf(t, resp))
		if turn >= 2 {
			outputs = append(outputs, resp["output_files"].([]map[string]any)...)
		}
	}

	rest, err := adkrest.NewServer(adkrest.ServerConfig{SessionService: h.sessions, ArtifactService: h.artifacts})
	require.NoError(t, err)
	srv := httptest.NewServer(rest)
	defer srv.Close()
	get := func(path string) (int, []byte) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, body
	}

	var inSubfolders []string
	for _, out := range outputs {
		name, art := out["name"].(string), out["artifact"].(string)
		require.Equal(t, int64(2), out["version"], name)
		if !strings.Contains(name, "/") {
			continue
		}
		inSubfolders = append(inSubfolders, name)
		for _, v := range []int{0, 1, 2} {
			path := adktest.WebUIArtifactPath(appName, userID, h.sessionID, art, v)
			code, body := get(path)
			if !assert.Equal(t, http.StatusOK, code, "%s: GET %s: %s", name, path, body) {
				continue
			}
			var part genai.Part
			require.NoError(t, json.Unmarshal(body, &part))
			want := int64(v)
			if v == 0 {
				want = 2
			}
			require.NotNil(t, part.InlineData, "%s v%d", name, v)
			assert.Equal(t, h.load(art, want).InlineData.Data, part.InlineData.Data, "%s v%d", name, v)
		}
	}
	assert.ElementsMatch(t, []string{"dist/data/summary.json", "out/sub dir/naïve #1?.txt", "out/x/100%25.csv", "out/x/a~2Fb.txt", "out/x/ends in space "}, inSubfolders, "the manifest shows each path as DisplayPath does")

	// The listing the web UI shows holds the same names.
	code, body := get(fmt.Sprintf("/apps/%s/users/%s/sessions/%s/artifacts", appName, userID, h.sessionID))
	require.Equal(t, http.StatusOK, code, "%s", body)
	var listed []string
	require.NoError(t, json.Unmarshal(body, &listed))
	for _, out := range outputs {
		assert.True(t, slices.Contains(listed, out["artifact"].(string)), "%v in %v", out["artifact"], listed)
	}
}
