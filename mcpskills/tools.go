package mcpskills

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// addTools declares run_skill_script and, with inline scripts on,
// run_skill_inline_script, with the tools' own descriptions and schemas.
func (s *Server) addTools() {
	decl := s.runner.ScriptDeclaration()
	if p := decl.Parameters.Properties["skill_name"]; p != nil {
		p.Description = "The name of the skill, as skills/list (or resources/list) names it."
	}
	s.srv.AddTool(&mcp.Tool{
		Name: decl.Name, Title: "Run a skill's script",
		Description: decl.Description + " Each saved file is also a resource link in the result, readable with resources/read.",
		InputSchema: jsonSchema(decl.Parameters),
	}, s.runScript)
	if !s.inline {
		return
	}
	decl = s.inliner.Declaration()
	s.srv.AddTool(&mcp.Tool{
		Name: decl.Name, Title: "Run a script you write (the user approves it first)",
		Description: decl.Description + " The user is shown the whole script and asked to approve it (MCP elicitation).",
		InputSchema: jsonSchema(decl.Parameters),
	}, s.runInline)
}

// jsonSchema is a tool declaration's schema as JSON Schema.
func jsonSchema(g *genai.Schema) map[string]any {
	m := map[string]any{}
	if g.Type != "" {
		m["type"] = strings.ToLower(string(g.Type))
	}
	if g.Description != "" {
		m["description"] = g.Description
	}
	if len(g.Enum) > 0 {
		m["enum"] = g.Enum
	}
	if g.Items != nil {
		m["items"] = jsonSchema(g.Items)
	}
	if g.Type == genai.TypeObject {
		props := map[string]any{}
		for k, v := range g.Properties {
			props[k] = jsonSchema(v)
		}
		m["properties"] = props
		m["additionalProperties"] = false
		if len(g.Required) > 0 {
			m["required"] = g.Required
		}
	}
	return m
}

// mcpSession is one MCP session's side of a call, as runscript.Session.
type mcpSession struct {
	arts   agent.Artifacts
	key    string // the scope, as a key
	misses *missCounter
}

func (s *mcpSession) ArtifactStore() agent.Artifacts { return s.arts }
func (s *mcpSession) ScriptMissed() int              { return s.misses.add(s.key) }

// session returns the runscript.Session of a call of ss.
func (s *Server) session(ss *mcp.ServerSession) (*mcpSession, error) {
	sc, err := s.scopeOf(ss)
	if err != nil {
		return nil, err
	}
	out := &mcpSession{key: sc.AppName + "\x00" + sc.UserID + "\x00" + sc.SessionID, misses: s.misses}
	if s.arts != nil {
		out.arts = adkglue.SessionArtifacts(s.arts, sc.AppName, sc.UserID, sc.SessionID)
	}
	return out, nil
}

// runScript is run_skill_script: runscript's, for an MCP session.
func (s *Server) runScript(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sess, args, resp := s.prepare(req)
	if resp == nil {
		resp = s.runner.RunScript(ctx, sess, args)
	}
	if resp.Status != "" {
		s.misses.reset(sess.key) // a script ran: the turn's misses are over
	}
	return result(resp), nil
}

// prepare reads a call's session and arguments; input_files entries that
// are artifact URIs become the artifacts' names. The response is the
// refusal, when there is one.
func (s *Server) prepare(req *mcp.CallToolRequest) (*mcpSession, any, *runscript.Response) {
	sess, err := s.session(req.Session)
	if err != nil {
		s.logger.Error("adkskills: scoping an MCP session", "error", err)
		return &mcpSession{misses: s.misses}, nil, &runscript.Response{ErrorCode: runscript.CodeExecutionError, Error: "the server could not tell whose files this call sees (details in its log)"}
	}
	var args any
	if raw := req.Params.Arguments; len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return sess, nil, &runscript.Response{ErrorCode: runscript.CodeInvalidArguments, Error: "the arguments are not JSON: " + err.Error()}
		}
	}
	if err := inputURIs(args); err != nil {
		return sess, nil, &runscript.Response{ErrorCode: runscript.CodeInvalidArguments, Error: err.Error()}
	}
	return sess, args, nil
}

// inputURIs replaces, in the input_files of args, each artifact URI by the
// artifact's name: the file's latest version is what is passed in, as for
// a name. Entries of other shapes are left for runscript to judge.
func inputURIs(args any) error {
	m, _ := args.(map[string]any)
	list, _ := m["input_files"].([]any)
	for i, e := range list {
		raw, ok := e.(string)
		if !ok || !strings.HasPrefix(raw, ArtifactScheme+":") {
			continue
		}
		name, _, err := parseArtifactURI(raw)
		if err != nil {
			return fmt.Errorf("input_files[%d] %q: %v", i, raw, err)
		}
		list[i] = name
	}
	return nil
}

// result is a response as a tool result: its JSON (what an ADK model reads)
// as text and as structured content, and a resource link for each saved
// file. A call that ran no script is an error result.
func result(resp *runscript.Response) *mcp.CallToolResult {
	text, err := json.Marshal(resp)
	if err != nil {
		text = []byte(`{"error":"the response could not be encoded","error_code":"EXECUTION_ERROR"}`)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: json.RawMessage(text), IsError: resp.Failed()}
	for _, f := range resp.OutputFiles {
		if f.Artifact == "" {
			continue
		}
		size := f.SizeBytes
		res.Content = append(res.Content, &mcp.ResourceLink{URI: ArtifactURI(f.Artifact, f.Version), Name: f.Name,
			Title: f.Name + " (saved by the run)", MIMEType: f.MIMEType, Size: &size})
	}
	return res
}

// approvalID is the key of the approval request among a call's input
// requests.
const approvalID = "approve_script"

// approvalSchema is the form the client shows: one box the user ticks to
// run the script, unticked by default.
var approvalSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"approve": {Type: "boolean", Title: "Run this script",
			Description: "Tick to run the script shown above; leave unticked, or decline, to run nothing.",
			Default:     json.RawMessage("false")},
	},
	Required: []string{"approve"},
}

// runInline is run_skill_inline_script over MCP. The first call asks the
// client's user to approve the script (an elicitation carried by the
// result, SEP-2322, or sent by the SDK to a client of an earlier protocol);
// the retry that carries the answer runs the script, once, and only when
// it carries the request state this server issued for exactly this call
// and the user ticked the box. A client that cannot elicit runs nothing.
func (s *Server) runInline(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if !canElicit(req) {
		return result(&runscript.Response{ErrorCode: runscript.CodeConfirmationRejected, Error: runinline.Name +
			" runs a script only once this client's user approves it, and this client cannot ask (it declared no form elicitation): nothing ran"}), nil
	}
	sess, args, resp := s.prepare(req)
	if resp != nil {
		return result(resp), nil
	}
	ic, resp := s.inliner.Prepare(args)
	if resp != nil {
		return result(resp), nil
	}
	if state := req.Params.RequestState; state != "" {
		if !s.approvals.redeem(state, sess.key, ic.Digest()) {
			return result(&runscript.Response{ErrorCode: runscript.CodeConfirmationRejected,
				Error: "this approval is not one the server asked for this script, or was used or has expired: nothing ran; call again to be asked"}), nil
		}
		answer, _ := req.Params.InputResponses[approvalID].(*mcp.ElicitResult)
		if answer == nil || answer.Action != "accept" || answer.Content["approve"] != true {
			return result(runinline.Rejected()), nil
		}
		return result(s.inliner.Run(ctx, sess, ic)), nil
	}
	if resp := s.inliner.Check(ctx, sess, ic); resp != nil {
		return result(resp), nil
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalID: &mcp.ElicitParams{Message: ic.Prompt(), RequestedSchema: approvalSchema}},
		RequestState:  s.approvals.issue(sess.key, ic.Digest()),
	}, nil
}

// canElicit reports whether the client of a request declared form
// elicitation.
func canElicit(req mcp.Request) bool {
	r, ok := req.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	})
	if !ok {
		return false
	}
	caps := r.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil // {} means form, as before modes existed
}

// missCounter counts each scope's SCRIPT_NOT_FOUND answers since its last
// script ran: MCP has no turns, so a turn ends when a script runs.
type missCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// maxMissScopes bounds the scopes counted; past it the counts start over,
// which costs a model one more retry at most.
const maxMissScopes = 4096

func newMissCounter() *missCounter { return &missCounter{n: map[string]int{}} }

func (m *missCounter) add(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.n[key]; !ok && len(m.n) >= maxMissScopes {
		clear(m.n)
	}
	m.n[key]++
	return m.n[key]
}

func (m *missCounter) reset(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.n, key)
}

// Bounds on outstanding approval requests.
const (
	approvalTTL = 30 * time.Minute
	maxPending  = 1024
)

// approvals are the approval requests the server issued and no retry has
// redeemed: the request state of each is a random token, valid once, for
// one scope and one script.
type approvals struct {
	mu      sync.Mutex
	pending map[string]approval
	now     func() time.Time
}

type approval struct {
	key, digest string
	expires     time.Time
}

func newApprovals() *approvals {
	return &approvals{pending: map[string]approval{}, now: time.Now}
}

// issue records a request for the call of digest in the scope key and
// returns its token. Expired requests go; past maxPending, the oldest.
func (a *approvals) issue(key, digest string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	oldest, oldestAt := "", time.Time{}
	for t, ap := range a.pending {
		if !now.Before(ap.expires) {
			delete(a.pending, t)
		} else if oldest == "" || ap.expires.Before(oldestAt) {
			oldest, oldestAt = t, ap.expires
		}
	}
	if len(a.pending) >= maxPending {
		delete(a.pending, oldest)
	}
	token := rand.Text()
	a.pending[token] = approval{key: key, digest: digest, expires: now.Add(approvalTTL)}
	return token
}

// redeem consumes the token: true when it was issued for this scope and
// this call, and has not expired.
func (a *approvals) redeem(token, key, digest string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	ap, ok := a.pending[token]
	delete(a.pending, token)
	return ok && a.now().Before(ap.expires) && ap.key == key && ap.digest == digest
}

// readArtifact answers resources/read of an artifact:/// URI: a file of the
// caller's session, from the artifact store.
func (s *Server) readArtifact(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, version, err := parseArtifactURI(uri)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	if strings.HasPrefix(name, "user:") {
		return nil, notFound(uri, "only this session's files are served, not user-scoped artifacts")
	}
	if s.arts == nil {
		return nil, notFound(uri, "this server keeps no files: it has no artifact store")
	}
	sc, err := s.scopeOf(req.Session)
	if err != nil {
		return nil, s.internalError("resources/read", err)
	}
	got, err := s.arts.Load(ctx, &artifact.LoadRequest{AppName: sc.AppName, UserID: sc.UserID, SessionID: sc.SessionID, FileName: name, Version: version})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, notFound(uri, fmt.Sprintf("no file %q in this session", name))
	case err != nil:
		return nil, s.internalError("resources/read", err)
	case got.Part == nil:
		return nil, notFound(uri, fmt.Sprintf("file %q holds nothing", name))
	}
	var c *mcp.ResourceContents
	switch p := got.Part; {
	case p.InlineData != nil:
		c = contents(uri, p.InlineData.MIMEType, p.InlineData.Data)
	case p.FileData != nil:
		return nil, notFound(uri, fmt.Sprintf("file %q refers to a file elsewhere, by URI", name))
	default:
		c = contents(uri, "text/plain", []byte(p.Text))
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}, Cacheable: mcp.Cacheable{CacheScope: "private"}}, nil
}
