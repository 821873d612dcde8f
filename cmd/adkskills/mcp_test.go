package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/mcpskills"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

func TestMCPUsage(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"mcp", "--help"}, exitOK, "Usage: adkskills mcp [flags]", ""},
		{[]string{"mcp", "extra"}, exitUsage, "", `mcp: unexpected argument "extra"`},
		{[]string{"mcp", "--allow-remote"}, exitUsage, "", "--allow-remote and --share-files are for --http"},
		{[]string{"mcp", "--share-files"}, exitUsage, "", "--allow-remote and --share-files are for --http"},
		{[]string{"mcp", "--timeout", "0s"}, exitUsage, "", "--timeout must be positive"},
		{[]string{"mcp", "--session", ""}, exitUsage, "", "--session must not be empty"},
		{[]string{"mcp", "--skills", "/no/such/folder"}, exitUsage, "", "does not exist"},
		{[]string{"mcp", "--http", "256.0.0.1:1", "--skills", "TESTSKILLS"}, exitFailure, "", "mcp: listen tcp"},
	} {
		for i, a := range c.args {
			if a == "TESTSKILLS" {
				c.args[i] = testSkills(t)
			}
		}
		out := invoke(t, invocation{args: c.args})
		assert.Equal(t, c.code, out.code, "%v: %s", c.args, out.stderr)
		assert.Contains(t, out.stdout, c.stdout, c.args)
		assert.Contains(t, out.stderr, c.stderr, c.args)
	}
}

// stdioMCP runs adkskills mcp in-process on pipes, as a client's child
// process would, and connects a client to it.
func stdioMCP(t *testing.T, vars map[string]string, args ...string) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	e := env{getenv: func(k string) string { return vars[k] }, user: "tester"}
	go func() {
		done <- run(context.Background(), append([]string{"mcp", "--skills", testSkills(t)}, args...), inR, outW, &stderr, e)
		outW.Close()
	}()
	cs, err := mcpskills.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err, stderr.String())
	t.Cleanup(func() {
		cs.Close()
		select {
		case code := <-done:
			assert.Equal(t, exitOK, code, "adkskills mcp ends when its client does: %s", stderr.String())
		case <-time.After(browserWait):
			t.Errorf("adkskills mcp did not end with its client")
		}
	})
	return cs
}

// TestMCPStdio serves the skills on stdio: the catalogue, a run, its file
// read back, and the file in the store's session the command names, where
// adkskills artifacts finds it and a later server reads its link.
func TestMCPStdio(t *testing.T) {
	ctx := context.Background()
	vars, dir := store(t)
	var link string
	{
		cs := stdioMCP(t, vars, "--session", "mine")
		res, err := mcp.CallCustomMethod[*mcpskills.ListParams, *mcpskills.ListResult](ctx, cs, mcpskills.MethodList, &mcpskills.ListParams{})
		require.NoError(t, err)
		assert.Len(t, res.Skills, 5)
		out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: runscript.Name,
			Arguments: map[string]any{"skill_name": "report-writer", "script_path": "scripts/report.py", "args": []string{"Ada"}}})
		require.NoError(t, err)
		require.False(t, out.IsError)
		link = out.Content[len(out.Content)-1].(*mcp.ResourceLink).URI
		assert.Equal(t, "artifact:///report.md/1", link)
		cs.Close()
	}
	s, err := fileartifact.New(dir)
	require.NoError(t, err)
	got, err := s.Load(ctx, &artifact.LoadRequest{AppName: appName, UserID: "tester", SessionID: "mine", FileName: "report.md"})
	require.NoError(t, err)
	assert.Contains(t, string(got.Part.InlineData.Data), "# Report for Ada")

	later := stdioMCP(t, vars, "--session", "mine")
	rr, err := later.ReadResource(ctx, &mcp.ReadResourceParams{URI: link})
	require.NoError(t, err)
	assert.Equal(t, string(got.Part.InlineData.Data), rr.Contents[0].Text)
	other := stdioMCP(t, vars, "--session", "other")
	_, err = other.ReadResource(ctx, &mcp.ReadResourceParams{URI: link})
	assert.Error(t, err, "another session's server does not have it")
}

// httpMCP runs adkskills mcp --http on a free loopback port until the test
// ends and returns its URL.
func httpMCP(t *testing.T, args ...string) string {
	t.Helper()
	vars, _ := store(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	e := env{getenv: func(k string) string { return vars[k] }, user: "tester"}
	go func() {
		done <- run(ctx, append([]string{"mcp", "--skills", testSkills(t), "--http", "127.0.0.1:0"}, args...), strings.NewReader(""), &stdout, &stderr, e)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			assert.Equal(t, exitOK, code, "adkskills mcp --http exits 0 when stopped: %s", stderr.String())
		case <-time.After(browserWait):
			t.Errorf("adkskills mcp --http did not stop")
		}
	})
	re := regexp.MustCompile(`serving (http://\S+/mcp)`)
	deadline := time.Now().Add(browserWait)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("adkskills mcp --http exited with %d: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("adkskills mcp --http did not say where it serves: %s", stderr.String())
	return ""
}

func TestMCPHTTP(t *testing.T) {
	ctx := context.Background()
	url := httpMCP(t, "--inline")
	cs, err := mcpskills.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	defer cs.Close()
	out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: runinline.Name, Arguments: map[string]any{"language": "python", "script": "print(6*7)"}})
	require.NoError(t, err)
	assert.Contains(t, out.Content[0].(*mcp.TextContent).Text, `"stdout":"42\n"`)
	src, err := mcpskills.NewSource(cs)
	require.NoError(t, err)
	fms, err := src.ListFrontmatters(ctx)
	require.NoError(t, err)
	assert.Len(t, fms, 5)
}

// TestMCPHTTPAnswersOnlyThisMachine sends what a page of another site, or
// a DNS-rebinding name, sends: refused unless --allow-remote.
func TestMCPHTTPAnswersOnlyThisMachine(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(url, host, origin string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	guarded := httpMCP(t)
	assert.Equal(t, http.StatusOK, post(guarded, "", ""))
	assert.Equal(t, http.StatusForbidden, post(guarded, "evil.example:80", ""), "a DNS-rebinding name")
	assert.Equal(t, http.StatusForbidden, post(guarded, "", "http://evil.example"), "another site's page")
	assert.Equal(t, http.StatusOK, post(guarded, "", "http://localhost:3000"), "a local page")
	open := httpMCP(t, "--allow-remote")
	assert.NotEqual(t, http.StatusForbidden, post(open, "", "http://evil.example"))
}

// inspector is the MCP Inspector's CLI (npm @modelcontextprotocol/inspector,
// installed by .ci/run), or a skip.
func inspector(t *testing.T) string {
	p := os.Getenv("ADKSKILLS_MCP_INSPECTOR")
	if p == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("ADKSKILLS_MCP_INSPECTOR is not set; .ci/run installs the MCP Inspector and sets it")
		}
		t.Skip("the MCP Inspector is not installed: npm install --prefix DIR @modelcontextprotocol/inspector@2.12.0, " +
			"then ADKSKILLS_MCP_INSPECTOR=DIR/node_modules/.bin/mcp-inspector")
	}
	return p
}

// TestInspector has a client nobody here wrote check adkskills mcp, each
// step a new server process on the same store, as a client's config starts
// it: the Skills extension with its conformance and digest checks, the tool
// list, a sandboxed run, and the file it saved read through its link.
func TestInspector(t *testing.T) {
	insp := inspector(t)
	if testing.Short() {
		t.Skip("builds the binary and runs Node.js")
	}
	bin := filepath.Join(t.TempDir(), "adkskills")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	skills := inspectorSkills(t)
	home, artifacts := t.TempDir(), t.TempDir()
	server := []string{bin, "mcp", "--skills", skills}
	if sandbox.New().Probe(context.Background()) == nil {
		server = append(server, "--sandbox")
	} else if os.Getenv("CI") != "" {
		t.Fatal("the sandbox cannot isolate on this CI machine")
	}
	inspect := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(insp, append(append([]string{"--cli"}, server...), args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "ADKSKILLS_ARTIFACTS="+artifacts, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"))
		cmd.Dir = t.TempDir()
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, want, code, "mcp-inspector %v\nstdout: %s\nstderr: %s", args, stdout.String(), stderr.String())
		return stdout.String() + stderr.String()
	}

	verified := inspect(0, "--method", "skills/list", "--verify", "--require-digests")
	assert.Contains(t, verified, "Verified 6 skills")
	assert.Contains(t, verified, "no conformance errors")
	for line := range strings.Lines(verified) {
		if strings.HasPrefix(line, "{") {
			var report struct {
				Name    string `json:"name"`
				Outcome string `json:"outcome"`
			}
			require.NoError(t, json.Unmarshal([]byte(line), &report))
			assert.Equal(t, "verified", report.Outcome, report.Name)
		}
	}
	assert.Contains(t, inspect(0, "--method", "skills/get", "--uri", "skill://yaml-edge/SKILL.md", "--verify"), "Verified 1 skill")
	tools := inspect(0, "--method", "tools/list")
	assert.Contains(t, tools, `"name": "run_skill_script"`)
	assert.NotContains(t, tools, runinline.Name)

	called := inspect(0, "--method", "tools/call", "--tool-name", runscript.Name,
		"--tool-arg", "skill_name=report-writer", "script_path=scripts/report.py", `args=["Ada"]`)
	var res struct {
		Content []struct {
			Type, Text, URI, Name, MIMEType string
			Size                            int64
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal([]byte(called[:strings.LastIndex(called, "}")+1]), &res), called)
	require.False(t, res.IsError, called)
	var link string
	for _, c := range res.Content {
		if c.Type == "resource_link" && c.Name == "report.md" {
			link = c.URI
			assert.Equal(t, "text/markdown", c.MIMEType)
		}
	}
	require.NotEmpty(t, link, called)
	read := inspect(0, "--method", "resources/read", "--uri", link)
	assert.Contains(t, read, `# Report for Ada`)
	assert.Contains(t, read, `"cacheScope": "private"`)

	// A URI that climbs out of its skill is refused.
	inspect(1, "--method", "resources/read", "--uri", "skill://report-writer/%2e%2e/yaml-edge/SKILL.md")
}

// inspectorSkills is the test skills and one whose frontmatter uses what
// YAML readers may disagree on: the Inspector compares the listing with
// its own reading of the file.
func inspectorSkills(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(testSkills(t))))
	edge := filepath.Join(dir, "yaml-edge")
	require.NoError(t, os.MkdirAll(filepath.Join(edge, "assets"), 0o755))
	md := "---\nname: yaml-edge\ndescription: A skill whose frontmatter has every kind of YAML value.\n" +
		"license: MIT\nmetadata:\n  owner: tests\n  version: \"2\"\nversion: 1.0\nreleased: 2024-01-02\ncount: 0o17\nhex: 0x1F\n" +
		"flag: yes\nempty:\nquoted: \"42\"\nlist: [a, 1, true, null]\nanchor: &a {x: 1}\nalias: *a\nblock: |\n  line one\n  line two\n" +
		"folded: >\n  one\n  two\n---\n# YAML edge\n"
	require.NoError(t, os.WriteFile(filepath.Join(edge, "SKILL.md"), []byte(md), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(edge, "assets", "blob.bin"), []byte{0, 1, 0xff, 0xfe, '\n'}, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(edge, "assets", "empty.txt"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(edge, "assets", "a b #1.txt"), []byte("odd name\r\n"), 0o644))
	return dir
}

// TestMCPStdioProtocol reads what adkskills mcp writes on stdout: only
// JSON-RPC messages, one a line (logs go to stderr).
func TestMCPStdioProtocol(t *testing.T) {
	vars, _ := store(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	e := env{getenv: func(k string) string { return vars[k] }, user: "tester"}
	go func() {
		done <- run(context.Background(), []string{"mcp", "--skills", testSkills(t)}, inR, outW, &stderr, e)
		outW.Close()
	}()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://nope/SKILL.md"}}`+"\n")
	}()
	sc := bufio.NewScanner(outR)
	var lines []string
	for len(lines) < 2 && sc.Scan() {
		var msg map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &msg), "stdout holds only JSON-RPC: %q", sc.Text())
		lines = append(lines, sc.Text())
	}
	inW.Close()
	assert.Equal(t, exitOK, <-done, stderr.String())
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], fmt.Sprintf(`"code":%d`, jsonrpc.CodeInvalidParams))
	assert.Contains(t, lines[1], `no skill \"nope\"`)
}
