// Package mcpskills serves Agent Skills over the Model Context Protocol and
// reads them back: the Skills extension (SEP-2640, io.modelcontextprotocol/
// skills) with every file's digest, and the script tools run_skill_script
// and run_skill_inline_script of package runscript, with the same
// arguments, caps, error codes and executors as in an ADK agent.
//
// New builds the server; run it on stdio, or serve streamable HTTP with
// HTTPHandler:
//
//	s, err := mcpskills.New(skilltoolset.NewFSSource(os.DirFS("skills")), sandbox.New(), store)
//	...
//	err = s.Run(ctx, &mcp.StdioTransport{MaxLineLength: mcpskills.MaxRequestBytes})
//
// The files a run saves land in the artifact store and come back in the
// tool result as resource_link items (artifact:///NAME/VERSION) that
// resources/read resolves, also in a later server process on the same
// store. NewSource is the other side: a skill.Source over a remote
// server's skills, each file checked against its digest before anything
// runs.
package mcpskills

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// Defaults of the server's options.
const (
	// DefaultPageSize is how many skills one page of skills/list holds, and
	// how many entries one of resources/directory/read.
	DefaultPageSize = 50
	// DefaultSessionTimeout closes an HTTP session idle this long.
	DefaultSessionTimeout = time.Hour
)

// MaxRequestBytes bounds one request over HTTP (and one line on stdio): it
// fits the largest call the tools accept (runscript.MaxStdinBytes of stdin,
// runscript.MaxArgBytes of arguments, runscript.MaxScriptBytes of script),
// JSON-escaped at twice its size. A larger request is refused before it is
// read whole.
const MaxRequestBytes = 2*(runscript.MaxStdinBytes+runscript.MaxArgBytes+runscript.MaxScriptBytes) + 1<<20

// Scope says whose files a call sees: the app, user and session of the
// artifact store they are saved under.
type Scope struct {
	AppName, UserID, SessionID string
}

// DefaultScope is the scope of New without WithScope: app "adkskills",
// user "local", session "mcp" (for a client without an MCP session ID).
var DefaultScope = Scope{AppName: "adkskills", UserID: "local", SessionID: "mcp"}

// SessionScope is the scoping most servers want: base's app and user; an
// MCP session with an ID (streamable HTTP) gets its own artifact session,
// named after it, so one client never sees another's files; a session
// without one (stdio: one local user) gets base.SessionID, which every
// server process on the store shares.
func SessionScope(base Scope) func(*mcp.ServerSession) Scope {
	return func(ss *mcp.ServerSession) Scope {
		sc := base
		if id := ss.ID(); id != "" {
			sc.SessionID = "mcp-" + id
		}
		return sc
	}
}

// Option configures New. An option given an invalid value makes New fail.
type Option func(*config) error

type config struct {
	inline   bool
	tool     runscript.Config
	scope    func(*mcp.ServerSession) Scope
	pageSize int
	impl     *mcp.Implementation
}

// WithInlineScripts offers run_skill_inline_script: a client's model may
// send code of its own, which runs only after the client's user approves
// it through MCP elicitation (the client shows the whole script). A client
// that did not declare elicitation is not offered the tool and cannot run
// it. Off by default.
func WithInlineScripts(enabled bool) Option {
	return func(c *config) error {
		c.inline = enabled
		return nil
	}
}

// WithLimits bounds every run: its time, its output, the files it returns,
// the bytes it stages (zero fields keep the codeexec defaults, negative is
// an error), as runscript.Config.Limits.
func WithLimits(l codeexec.Limits) Option {
	return func(c *config) error {
		c.tool.Limits = l
		return l.Validate()
	}
}

// WithInputLimits bounds the files input_files passes into one run, as
// runscript.Config.InputLimits.
func WithInputLimits(l codeexec.FileLimits) Option {
	return func(c *config) error {
		c.tool.InputLimits = l
		return l.Validate()
	}
}

// WithLogger sets where what clients must not see goes: host paths,
// executor failures, skills left out (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("WithLogger: the logger is nil")
		}
		c.tool.Logger = l
		return nil
	}
}

// WithScope sets whose files each MCP session sees (default
// SessionScope(DefaultScope)). f must return non-empty names.
func WithScope(f func(*mcp.ServerSession) Scope) Option {
	return func(c *config) error {
		if f == nil {
			return errors.New("WithScope: the function is nil")
		}
		c.scope = f
		return nil
	}
}

// WithPageSize sets how many skills a page of skills/list holds (default
// DefaultPageSize).
func WithPageSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("WithPageSize: %d is not positive", n)
		}
		c.pageSize = n
		return nil
	}
}

// WithImplementation sets the name and version the server gives clients
// (default "adkskills" and "(devel)").
func WithImplementation(impl mcp.Implementation) Option {
	return func(c *config) error {
		if impl.Name == "" {
			return errors.New("WithImplementation: the name is empty")
		}
		c.impl = &impl
		return nil
	}
}

// Server serves skills, their files and the script tools to MCP clients.
// It is safe for concurrent use: one Server serves every session of an HTTP
// handler.
type Server struct {
	srv       *mcp.Server
	cat       *catalog
	runner    *runscript.Runner
	inliner   *runinline.Runner
	arts      artifact.Service
	scope     func(*mcp.ServerSession) Scope
	pageSize  int
	inline    bool
	logger    *slog.Logger
	misses    *missCounter
	approvals *approvals
}

// New returns a server of the skills of src. Scripts run through exec (nil:
// the tools answer NO_CODE_EXECUTOR); the files they write are saved in arts
// (nil: listed, not saved, and input_files is refused). src is what
// skilltoolset.NewFSSource returns for a folder, or any skill.Source.
func New(src skill.Source, exec codeexec.Executor, arts artifact.Service, opts ...Option) (*Server, error) {
	if src == nil {
		return nil, errors.New("mcpskills: a skill source is required")
	}
	cfg := config{scope: SessionScope(DefaultScope), pageSize: DefaultPageSize,
		impl: &mcp.Implementation{Name: "adkskills", Version: "(devel)"}}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("mcpskills: %w", err)
		}
	}
	logger := cfg.tool.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if s, ok := src.(*skillfs.Source); ok {
		src = s.WithLogger(logger)
	}
	cfg.tool.Source, cfg.tool.Executor, cfg.tool.Logger = src, exec, logger
	runner, err := runscript.NewRunner(cfg.tool)
	if err != nil {
		return nil, fmt.Errorf("mcpskills: %w", err)
	}
	inliner, err := runinline.NewRunner(cfg.tool)
	if err != nil {
		return nil, fmt.Errorf("mcpskills: %w", err)
	}
	s := &Server{
		cat:    &catalog{src: src, logger: logger},
		runner: runner, inliner: inliner, arts: arts, scope: cfg.scope, pageSize: cfg.pageSize,
		inline: cfg.inline && exec != nil, logger: logger,
		misses: newMissCounter(), approvals: newApprovals(),
	}
	s.srv = mcp.NewServer(cfg.impl, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       logger,
		PageSize:     cfg.pageSize,
		Capabilities: &mcp.ServerCapabilities{
			Extensions: map[string]any{ExtensionKey: Extension{DirectoryRead: true}},
		},
	})
	s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "skill-file", Title: "A file of a skill",
		URITemplate: SkillScheme + "://{skill}/{+path}",
		Description: "Any file of a skill, SKILL.md included; skills/list gives each skill's files with their digests.",
	}, s.readSkillFile)
	s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "saved-file", Title: "A file a script run saved",
		URITemplate: ArtifactScheme + ":///{+file}",
		Description: "A file a run of run_skill_script or run_skill_inline_script saved in this session: artifact:///NAME/VERSION, or artifact:///NAME for the latest version.",
	}, s.readArtifact)
	s.addTools()
	for _, err := range []error{
		mcp.AddReceivingCustomMethod(s.srv, MethodList, s.list),
		mcp.AddReceivingCustomMethod(s.srv, MethodGet, s.get),
		mcp.AddReceivingCustomMethod(s.srv, MethodDirectoryRead, s.readDirectory),
	} {
		if err != nil {
			return nil, fmt.Errorf("mcpskills: %w", err)
		}
	}
	s.srv.AddReceivingMiddleware(s.middleware)
	return s, nil
}

// instructions tell a client's model what the server offers.
const instructions = "This server serves Agent Skills (the MCP Skills extension: skills/list, skills/get, and each skill's " +
	"files as skill:// resources, SKILL.md first) and runs their scripts with run_skill_script. " +
	"Read a skill's SKILL.md before using it. The files a script writes come back as resource links (artifact:///...) " +
	"that resources/read returns, and that input_files of a later run accepts."

// MCP returns the SDK's server, to connect it to any transport or to add
// features of your own.
func (s *Server) MCP() *mcp.Server { return s.srv }

// Run serves one client on t until it disconnects or ctx ends: for the
// standard streams, &mcp.StdioTransport{MaxLineLength: MaxRequestBytes}.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.srv.Run(ctx, t)
}

// HTTPHandler serves streamable HTTP, one MCP session per client, each
// with its own files under SessionScope. opts may be nil; a zero
// MaxRequestBodyBytes becomes MaxRequestBytes, a zero SessionTimeout
// DefaultSessionTimeout. Stateless is refused: without sessions the
// clients would share one session's files, and elicitation could not
// reach anyone. The handler trusts whoever reaches it: put it behind a
// guard of who may (the adkskills command answers only loopback unless
// told otherwise).
func (s *Server) HTTPHandler(opts *mcp.StreamableHTTPOptions) (http.Handler, error) {
	var o mcp.StreamableHTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.Stateless {
		return nil, errors.New("mcpskills: a stateless HTTP handler has no sessions to keep clients' files apart")
	}
	if o.MaxRequestBodyBytes == 0 {
		o.MaxRequestBodyBytes = MaxRequestBytes
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.Logger == nil {
		o.Logger = s.logger
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &o), nil
}

// scopeOf is the scope of a session's calls, checked.
func (s *Server) scopeOf(ss *mcp.ServerSession) (Scope, error) {
	sc := s.scope(ss)
	if sc.AppName == "" || sc.UserID == "" || sc.SessionID == "" {
		return Scope{}, fmt.Errorf("mcpskills: the scope function returned an empty name: %+v", sc)
	}
	return sc, nil
}

// cacheable is the caching hints of a result to a request with meta: the
// 2026-07-28 era's fields, and its resultType when the request is of that
// era.
func cacheable(meta mcp.Meta, scope string) Cacheable {
	c := Cacheable{CacheScope: scope}
	if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); v >= "2026-07-28" {
		c.ResultType = "complete"
	}
	return c
}

// invalidParams is the JSON-RPC error of a request the server cannot
// answer as sent.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// notFound is the JSON-RPC error of a skill or file the server does not
// have: invalid params whose data names the URI, as mcp.ResourceNotFoundError
// writes it (SEP-2164), with a message that says what is missing.
func notFound(uri, what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: what,
		Data: []byte(fmt.Sprintf(`{"uri":%q}`, uri))}
}

// internalError hides a failure's details from the client and logs them.
func (s *Server) internalError(method string, err error) error {
	s.logger.Error("adkskills: "+method+" failed", "error", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + " failed (details in the server's log)"}
}

// cursor is a page's position: the last name of the previous page, opaque
// to the client.
func encodeCursor(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("after:" + after))
}

// decodeCursor reads a cursor encodeCursor made.
func decodeCursor(c string) (string, error) {
	if len(c) > maxURIBytes {
		return "", invalidParams("the cursor is %d bytes: not one this server gave", len(c))
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	after, ok := strings.CutPrefix(string(b), "after:")
	if err != nil || !ok {
		return "", invalidParams("the cursor %q is not one this server gave", c)
	}
	return after, nil
}

// page returns the page of names (sorted) after the cursor's name, at most
// s.pageSize of them, as indexes, and the next cursor ("" on the last page).
func (s *Server) page(names []string, cursor string) (start, end int, next string, err error) {
	if cursor != "" {
		after, err := decodeCursor(cursor)
		if err != nil {
			return 0, 0, "", err
		}
		for start < len(names) && names[start] <= after {
			start++
		}
	}
	end = min(start+s.pageSize, len(names))
	if end < len(names) {
		next = encodeCursor(names[end-1])
	}
	return start, end, next, nil
}
