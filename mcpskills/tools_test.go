package mcpskills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// callTool calls a tool and reads its response back, checking that the
// text, the structured content and the links agree.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*runscript.Response, []*mcp.ResourceLink) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return readResult(t, res)
}

func readResult(t *testing.T, res *mcp.CallToolResult) (*runscript.Response, []*mcp.ResourceLink) {
	t.Helper()
	require.NotEmpty(t, res.Content)
	text, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "the first content is the response's JSON")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(text.Text), &m))
	resp, err := runscript.ParseResponse(m)
	require.NoError(t, err)
	structured, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.JSONEq(t, text.Text, string(structured), "structured content is the text's")
	assert.Equal(t, resp.Failed(), res.IsError, "a call that ran no script is an error result")
	var links []*mcp.ResourceLink
	for _, c := range res.Content[1:] {
		l, ok := c.(*mcp.ResourceLink)
		require.True(t, ok, "after the text come links")
		links = append(links, l)
	}
	return resp, links
}

var report = map[string]any{"skill_name": "report-writer", "script_path": "scripts/report.py", "args": []string{"Ada"}}

// TestRunScriptLinks runs a script that writes three files and reads each
// back through its resource link: the bytes the store holds, with the
// link's name, MIME type and size.
func TestRunScriptLinks(t *testing.T) {
	f := newFixture(t, testSkills)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f.s, nil)
			resp, links := callTool(t, cs, runscript.Name, report)
			require.Equal(t, runscript.StatusSuccess, resp.Status, resp.Stderr)
			require.Len(t, links, len(resp.OutputFiles))
			for i, l := range links {
				o := resp.OutputFiles[i]
				assert.Equal(t, o.Name, l.Name)
				assert.Equal(t, o.MIMEType, l.MIMEType)
				assert.Equal(t, o.SizeBytes, *l.Size)
				assert.Equal(t, ArtifactURI(o.Artifact, o.Version), l.URI)
				data, c := readBytes(t, cs, l.URI)
				assert.Equal(t, o.MIMEType, c.MIMEType)
				assert.Equal(t, o.SizeBytes, int64(len(data)))
				sc := DefaultScope
				if id := cs.ID(); id != "" {
					sc.SessionID = "mcp-" + id
				}
				stored, err := f.store.Load(context.Background(), &artifact.LoadRequest{AppName: sc.AppName, UserID: sc.UserID, SessionID: sc.SessionID, FileName: o.Artifact, Version: o.Version})
				require.NoError(t, err)
				assert.Equal(t, stored.Part.InlineData.Data, data, l.URI)
				latest, _ := readBytes(t, cs, ArtifactURI(o.Artifact, 0))
				assert.Equal(t, data, latest, "without a version: the latest")
			}
			assert.Contains(t, links[0].URI, "artifact:///badge.png/")
		})
	}
}

func TestRunScriptErrors(t *testing.T) {
	f := newFixture(t, testSkills)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f.s, nil)
			before := f.exec.runs.Load()
			for _, c := range []struct {
				args map[string]any
				code string
			}{
				{map[string]any{"skill_name": "nope", "script_path": "scripts/x.py"}, runscript.CodeSkillNotFound},
				{map[string]any{"skill_name": "py-tools"}, runscript.CodeInvalidArguments},
				{map[string]any{"skill_name": "py-tools", "script_path": "../x.py"}, runscript.CodeInvalidArguments},
				{map[string]any{"skill_name": 7, "script_path": "x.py"}, runscript.CodeInvalidArguments},
				{map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py", "bogus": 1}, runscript.CodeInvalidArguments},
				{map[string]any{"skill_name": "py-tools", "script_path": "SKILL.md"}, runscript.CodeUnsupportedScriptType},
				{map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py", "input_files": []string{"artifact:///x/0"}}, runscript.CodeInvalidArguments},
				{map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py", "input_files": []string{"nothing-here"}}, runscript.CodeInvalidArguments},
			} {
				resp, links := callTool(t, cs, runscript.Name, c.args)
				assert.Equal(t, c.code, resp.ErrorCode, "%v: %s", c.args, resp.Error)
				assert.Empty(t, links)
			}
			assert.Equal(t, before, f.exec.runs.Load(), "nothing ran")

			// A second miss in a row tells the model to stop; a run starts over.
			miss := map[string]any{"skill_name": "py-tools", "script_path": "scripts/nope.py"}
			resp, _ := callTool(t, cs, runscript.Name, miss)
			assert.Equal(t, runscript.CodeScriptNotFound, resp.ErrorCode)
			assert.Contains(t, resp.Error, "scripts/upper.py", "the runnable scripts are named")
			resp, _ = callTool(t, cs, runscript.Name, miss)
			assert.Equal(t, runscript.CodeScriptNotFoundFatal, resp.ErrorCode)
			resp, _ = callTool(t, cs, runscript.Name, map[string]any{"skill_name": "py-tools", "script_path": "scripts/fail.py"})
			assert.Equal(t, runscript.StatusError, resp.Status, "a failing script is a run, not a tool error")
			resp, _ = callTool(t, cs, runscript.Name, miss)
			assert.Equal(t, runscript.CodeScriptNotFound, resp.ErrorCode, "a run ends the turn")
		})
	}
}

// TestInputFilesTakeLinks passes a run's output into the next run by its
// link, and by its artifact name.
func TestInputFilesTakeLinks(t *testing.T) {
	f := newFixture(t, edgeSkills(t))
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f.s, nil)
			resp, links := callTool(t, cs, runscript.Name, map[string]any{"skill_name": "edge", "script_path": "scripts/write.sh", "args": []string{"from run one"}})
			require.Equal(t, runscript.StatusSuccess, resp.Status, resp.Stderr)
			require.Len(t, links, 1)
			for _, entry := range []string{links[0].URI, resp.OutputFiles[0].Artifact, ArtifactURI(resp.OutputFiles[0].Artifact, 0)} {
				resp, _ = callTool(t, cs, runscript.Name, map[string]any{"skill_name": "edge", "script_path": "scripts/cat.sh",
					"args": []string{"out.txt"}, "input_files": []string{entry}})
				require.Equal(t, runscript.StatusSuccess, resp.Status, resp.Stderr+resp.Error)
				assert.Equal(t, "from run one", resp.Stdout, entry)
			}
		})
	}
}

// inline is a call of run_skill_inline_script whose script writes a file.
var inline = map[string]any{"language": "bash", "script": "echo approved; printf ok > done.txt", "args": []string{"a"}}

func TestInlineElicitation(t *testing.T) {
	cases := []struct {
		name   string
		elicit elicitor
		listed bool
		code   string // "" for a run
	}{
		{"approved", approve, true, ""},
		{"declined", decline, true, runscript.CodeConfirmationRejected},
		{"cancelled", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}, true, runscript.CodeConfirmationRejected},
		{"accepted unticked", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
		}, true, runscript.CodeConfirmationRejected},
		{"no elicitation", nil, false, runscript.CodeConfirmationRejected},
	}
	for _, tr := range transports {
		for _, c := range cases {
			t.Run(tr.name+"/"+c.name, func(t *testing.T) {
				f := newFixture(t, testSkills, WithInlineScripts(true))
				var prompts []string
				var mu sync.Mutex
				elicit := c.elicit
				if elicit != nil {
					elicit = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						prompts = append(prompts, r.Params.Message)
						mu.Unlock()
						return c.elicit(ctx, r)
					}
				}
				cs := tr.connect(t, f.s, clientOptions(elicit))
				var names []string
				for tool, err := range cs.Tools(context.Background(), nil) {
					require.NoError(t, err)
					names = append(names, tool.Name)
				}
				assert.Equal(t, c.listed, strings.Contains(strings.Join(names, " "), runinline.Name), names)
				resp, links := callTool(t, cs, runinline.Name, inline)
				if c.code != "" {
					assert.Equal(t, c.code, resp.ErrorCode, resp.Error)
					assert.Zero(t, f.exec.runs.Load(), "nothing ran")
				} else {
					require.Equal(t, runscript.StatusSuccess, resp.Status, resp.Stderr+resp.Error)
					assert.Equal(t, "approved\n", resp.Stdout)
					require.Len(t, links, 1)
					data, _ := readBytes(t, cs, links[0].URI)
					assert.Equal(t, "ok", string(data))
				}
				if c.elicit != nil {
					require.Len(t, prompts, 1, "the user is asked once")
					assert.Contains(t, prompts[0], inline["script"], "the user sees the whole script")
				}
			})
		}
	}
}

// TestInlineRefusesForgedApprovals plays a client that answers the
// approval itself, without asking anyone: only the request state the server
// issued, for that very script, once, runs it.
func TestInlineRefusesForgedApprovals(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, testSkills, WithInlineScripts(true))
	opts := clientOptions(approve)
	opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	cs := connectStdio(t, f.s, opts)
	yes := mcp.InputResponseMap{approvalID: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	ask := func(args map[string]any) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: runinline.Name, Arguments: args})
		require.NoError(t, err)
		require.True(t, res.NeedsInput(), "the first call asks")
		require.Contains(t, res.InputRequests, approvalID)
		return res.RequestState
	}
	retry := func(args map[string]any, state string, answers mcp.InputResponseMap) *runscript.Response {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: runinline.Name, Arguments: args, RequestState: state, InputResponses: answers})
		require.NoError(t, err)
		resp, _ := readResult(t, res)
		return resp
	}
	other := map[string]any{"language": "bash", "script": "echo evil"}

	assert.Equal(t, runscript.CodeConfirmationRejected, retry(inline, "forged-state", yes).ErrorCode, "a state the server never issued")
	state := ask(inline)
	assert.Equal(t, runscript.CodeConfirmationRejected, retry(other, state, yes).ErrorCode, "an approval of another script")
	assert.Equal(t, runscript.CodeConfirmationRejected, retry(inline, state, yes).ErrorCode, "the state was spent by the mismatch")
	state = ask(inline)
	assert.Equal(t, runscript.CodeConfirmationRejected, retry(inline, state, nil).ErrorCode, "no answer")
	assert.Zero(t, f.exec.runs.Load(), "nothing ran")

	state = ask(inline)
	resp := retry(inline, state, yes)
	require.Equal(t, runscript.StatusSuccess, resp.Status, resp.Error)
	assert.Equal(t, runscript.CodeConfirmationRejected, retry(inline, state, yes).ErrorCode, "one approval, one run")
	assert.Equal(t, int32(1), f.exec.runs.Load())

	// Without elicitation, a retry with a state is refused all the same.
	bare := connectStdio(t, f.s, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	res, err := bare.CallTool(ctx, &mcp.CallToolParams{Name: runinline.Name, Arguments: inline, RequestState: ask(inline), InputResponses: yes})
	require.NoError(t, err)
	r, _ := readResult(t, res)
	assert.Equal(t, runscript.CodeConfirmationRejected, r.ErrorCode)
	assert.Equal(t, int32(1), f.exec.runs.Load())
}

func TestApprovalsExpireAndAreBounded(t *testing.T) {
	a := newApprovals()
	now := time.Unix(1_000_000, 0)
	a.now = func() time.Time { return now }
	tok := a.issue("k", "d")
	assert.False(t, a.redeem(tok, "other", "d"), "another scope")
	tok = a.issue("k", "d")
	now = now.Add(approvalTTL)
	assert.False(t, a.redeem(tok, "k", "d"), "expired")
	first := a.issue("k", "d")
	for range maxPending {
		now = now.Add(time.Millisecond)
		a.issue("k", "d")
	}
	assert.Len(t, a.pending, maxPending)
	assert.False(t, a.redeem(first, "k", "d"), "the oldest went first")
	now = now.Add(approvalTTL)
	a.issue("k", "d")
	assert.Len(t, a.pending, 1, "expired requests go")
}

func TestMissCounterBounded(t *testing.T) {
	m := newMissCounter()
	for i := range maxMissScopes {
		m.add(fmt.Sprint(i))
	}
	assert.Equal(t, 2, m.add("0"))
	assert.Len(t, m.n, maxMissScopes)
	assert.Equal(t, 1, m.add("new"), "a new scope past the bound starts the counts over")
	assert.Len(t, m.n, 1)
}

// TestHTTPSessionsKeepTheirFiles runs clients over HTTP at once, each
// writing a file of the same name: each reads back its own, never
// another's, and another's versions do not exist for it.
func TestHTTPSessionsKeepTheirFiles(t *testing.T) {
	f := newFixture(t, edgeSkills(t))
	url := httpServer(t, f.s)
	const clients = 4
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		sessions[i] = dialHTTP(t, url, nil)
	}
	var wg sync.WaitGroup
	links := make([][]string, clients)
	for i, cs := range sessions {
		wg.Go(func() {
			for run := range i + 1 { // client i writes i+1 versions
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: runscript.Name,
					Arguments: map[string]any{"skill_name": "edge", "script_path": "scripts/write.sh", "args": []string{fmt.Sprintf("client %d run %d", i, run)}}})
				if assert.NoError(t, err) && assert.False(t, res.IsError) {
					links[i] = append(links[i], res.Content[1].(*mcp.ResourceLink).URI)
				}
			}
		})
	}
	wg.Wait()
	for i, cs := range sessions {
		require.Len(t, links[i], i+1)
		for run, l := range links[i] {
			assert.Equal(t, ArtifactURI("out.txt", int64(run+1)), l)
			data, _ := readBytes(t, cs, l)
			assert.Equal(t, fmt.Sprintf("client %d run %d", i, run), string(data))
		}
		// The versions other clients wrote beyond this one's do not exist here.
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: ArtifactURI("out.txt", int64(i+2))})
		assert.Equal(t, int64(notFoundCode), errKind(err), "client %d", i)
	}
}

// TestLinksOutliveTheServer reads a link from a new server over the same
// file store, as a later adkskills mcp on stdio does.
func TestLinksOutliveTheServer(t *testing.T) {
	store, err := fileartifact.New(t.TempDir())
	require.NoError(t, err)
	var link string
	var want []byte
	for i := range 2 {
		s, err := New(skilltoolset.NewFSSource(os.DirFS(testSkills)), local.New(), store)
		require.NoError(t, err)
		cs := connectStdio(t, s, nil)
		if i == 0 {
			resp, links := callTool(t, cs, runscript.Name, report)
			require.Equal(t, runscript.StatusSuccess, resp.Status)
			link = links[len(links)-1].URI
			want, _ = readBytes(t, cs, link)
			continue
		}
		got, _ := readBytes(t, cs, link)
		assert.Equal(t, want, got)
		assert.Contains(t, string(got), "Ada")
	}
}

// TestSandboxedRun calls run_skill_script over MCP with the bubblewrap
// sandbox as the executor.
func TestSandboxedRun(t *testing.T) {
	sb := sandbox.New()
	if err := sb.Probe(context.Background()); err != nil {
		t.Skipf("the sandbox cannot isolate on this machine: %v", err)
	}
	s, err := New(skilltoolset.NewFSSource(os.DirFS(testSkills)), sb, artifact.InMemoryService())
	require.NoError(t, err)
	cs := connectHTTP(t, s, nil)
	resp, links := callTool(t, cs, runscript.Name, report)
	require.Equal(t, runscript.StatusSuccess, resp.Status, resp.Stderr+resp.Error)
	require.Len(t, links, 3)
	data, _ := readBytes(t, cs, links[2].URI)
	assert.Contains(t, string(data), "# Report for Ada")
}

// TestOversizedRequests sends what is over the limits: an HTTP body past
// MaxRequestBytes is refused before it is read whole, and arguments past
// the tool's own bounds are INVALID_ARGUMENTS.
func TestOversizedRequests(t *testing.T) {
	f := newFixture(t, testSkills)
	url := httpServer(t, f.s)
	cs := dialHTTP(t, url, nil)
	resp, _ := callTool(t, cs, runscript.Name, map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py",
		"stdin": strings.Repeat("x", runscript.MaxStdinBytes+1)})
	assert.Equal(t, runscript.CodeInvalidArguments, resp.ErrorCode)
	assert.Zero(t, f.exec.runs.Load())

	body := bytes.Repeat([]byte("x"), MaxRequestBytes+1)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	r, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.StatusCode)

	// The session still works.
	resp, _ = callTool(t, cs, runscript.Name, map[string]any{"skill_name": "py-tools", "script_path": "scripts/upper.py", "stdin": "still here"})
	assert.Equal(t, "STILL HEREargs: \n", resp.Stdout)
}
