package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adkskills/adkskills/model/scripted"
)

func TestWebUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"write timeout not over the script timeout", []string{"web", "--timeout", "30s", "--write-timeout", "30s"}, "--write-timeout (30s) must be longer than --timeout (30s)"},
		{"port out of range", []string{"web", "--port", "70000"}, "--port must be 1..65535"},
		{"an argument", []string{"web", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars, _ := store(t)
			vars["GOOGLE_API_KEY"] = "k"
			o := invoke(t, invocation{vars: vars, args: tt.args})
			assert.Equal(t, exitUsage, o.code)
			assert.Contains(t, o.stderr, tt.stderr)
		})
	}
}

func TestNotLocal(t *testing.T) {
	tests := []struct {
		name         string
		remote, host string
		origin       string
		refused      string // part of the reason; "" when answered
	}{
		{"loopback", "127.0.0.1:5000", "localhost:8080", "", ""},
		{"loopback IPv6", "[::1]:5000", "[::1]:8080", "http://[::1]:8080", ""},
		{"the UI's own page", "127.0.0.1:5000", "127.0.0.1:8080", "http://localhost:8080", ""},
		{"another machine", "192.168.1.20:5000", "localhost:8080", "", "comes from 192.168.1.20:5000"},
		{"DNS rebinding", "127.0.0.1:5000", "evil.example:8080", "", `names the host "evil.example:8080"`},
		{"another site's page", "127.0.0.1:5000", "localhost:8080", "https://evil.example", `from the page "https://evil.example"`},
		{"an opaque origin", "127.0.0.1:5000", "localhost:8080", "null", `from the page "null"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api/list-apps", nil)
			r.RemoteAddr, r.Host = tt.remote, tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			got := notLocal(r)
			if tt.refused == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.refused)
			}
		})
	}
}

// TestWebAnswersOnlyThisMachine: the running server refuses a request that
// names another host or comes from another site's page, unless started with
// --allow-remote.
func TestWebAnswersOnlyThisMachine(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow-remote=%v", allow), func(t *testing.T) {
			args := []string{"--skills", testSkills(t)}
			if allow {
				args = append(args, "--allow-remote")
			}
			srv := startWeb(t, scripted.New("m"), args...)
			for _, h := range []struct{ header, value string }{{"Host", "evil.example"}, {"Origin", "https://evil.example"}, {"", ""}} {
				req, err := http.NewRequest(http.MethodGet, srv.url+"/api/list-apps", nil)
				require.NoError(t, err)
				switch h.header {
				case "Host":
					req.Host = h.value
				case "Origin":
					req.Header.Set("Origin", h.value)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := http.StatusOK
				if h.header != "" && !allow {
					want = http.StatusForbidden
					assert.Contains(t, string(body), "--allow-remote")
				}
				assert.Equal(t, want, resp.StatusCode, "%s %s: %s", h.header, h.value, body)
			}
		})
	}
}

// TestWebWriteTimeout: ADK's server cuts a turn's reply at --write-timeout,
// on /run and on the web UI's /run_sse alike, and by default a turn whose
// script takes its whole time limit arrives whole. Each hang.sh run takes
// the whole --timeout (1s): however slow the machine, three of them outlast
// a 1.5s write timeout, and one stays far within the default (1s plus 2m).
func TestWebWriteTimeout(t *testing.T) {
	hang := map[string]any{"skill_name": "shell-tools", "script_path": "scripts/hang.sh"}
	tests := []struct {
		endpoint     string
		writeTimeout string // "": the default
		runs         int
		whole        bool
	}{
		{"/api/run", "", 1, true},
		{"/api/run", "1500ms", 3, false},
		{"/api/run_sse", "", 1, true},
		{"/api/run_sse", "1500ms", 3, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d runs", tt.endpoint, tt.runs), func(t *testing.T) {
			t.Parallel()
			var steps []scripted.Step
			for range tt.runs {
				steps = append(steps, scripted.Call("run_skill_script", hang))
			}
			m := scripted.New("m", append(steps, scripted.Say("the turn is over"))...)
			args := []string{"--skills", testSkills(t), "--timeout", "1s"}
			if tt.writeTimeout != "" {
				args = append(args, "--write-timeout", tt.writeTimeout)
			}
			srv := startWeb(t, m, args...)
			resp, err := http.Post(srv.url+"/api/apps/adkskills/users/user/sessions", "application/json", strings.NewReader("{}"))
			require.NoError(t, err)
			var sess struct {
				ID string `json:"id"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&sess))
			resp.Body.Close()

			start := time.Now()
			body := fmt.Sprintf(`{"appName":"adkskills","userId":"user","sessionId":%q,"newMessage":{"role":"user","parts":[{"text":"hang"}]}}`, sess.ID)
			var reply []byte
			if resp, err = http.Post(srv.url+tt.endpoint, "application/json", strings.NewReader(body)); err == nil {
				reply, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			whole := err == nil && strings.Contains(string(reply), "the turn is over")
			assert.Equal(t, tt.whole, whole, "after %v: %v %s", time.Since(start), err, reply)
		})
	}
}
