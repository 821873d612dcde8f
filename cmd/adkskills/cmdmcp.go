package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/mcpskills"
	"github.com/adkskills/adkskills/skilltoolset"
)

const mcpAbout = `Serves the skills over the Model Context Protocol, to any MCP client
(Claude Desktop, Gemini CLI, Codex, VS Code, ADK's McpToolset...): the
Skills extension (skills/list, skills/get, every file as a skill:// resource
with its digest, resources/directory/read) and the tool run_skill_script,
with the same arguments, caps and error codes as in an agent. The files a
run writes are saved in the artifact store and come back as resource links
(artifact:///NAME/VERSION) that resources/read returns, also to a later
server on the same store. With --inline the client's model may also send
scripts of its own (run_skill_inline_script): each runs only after the
client's user approves it in the client (MCP elicitation); a client that
cannot ask is not offered the tool.

On stdio (the default) the server has one client, the local user, whose
files are the session --session of the store. With --http ADDR it serves
streamable HTTP at http://ADDR/mcp, each MCP session with its own files
(--share-files: all in --session), and answers only this machine unless
--allow-remote is given: whoever reaches it can run the skills' scripts on
this host. Logs go to stderr. Ctrl-C stops it.`

// mcpPath is where --http serves MCP.
const mcpPath = "/mcp"

// mcpShutdown bounds how long Ctrl-C waits for HTTP requests in flight.
const mcpShutdown = 5 * time.Second

func mcpCommand(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet("mcp", "adkskills mcp [flags]", mcpAbout)
	skills := skillsFlag(fs)
	var st storeFlags
	st.register(fs)
	var ex execFlags
	ex.register(fs)
	inline := fs.Bool("inline", false, "offer run_skill_inline_script: the client's model may send its own scripts, each run only after the client's user approves it")
	addr := fs.String("http", "", "serve streamable HTTP on `ADDR` (host:port, e.g. localhost:8090) at /mcp instead of stdio")
	allowRemote := fs.Bool("allow-remote", false, "with --http, answer requests from other machines too (anyone who reaches the port can run the skills' scripts here)")
	share := fs.Bool("share-files", false, "with --http, every MCP session sees the files of --session (default: each session its own)")
	pos, _, code, done := c.parse(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.usageError(fs, "mcp: unexpected argument %q", pos[0])
	}
	if err := ex.check(); err != nil {
		return c.usageError(fs, "mcp: %v", err)
	}
	if *addr == "" && (*allowRemote || *share) {
		return c.usageError(fs, "mcp: --allow-remote and --share-files are for --http")
	}
	if st.session == "" {
		return c.usageError(fs, "mcp: --session must not be empty")
	}
	wb, code := c.open(ctx, *skills, st.dir, &ex)
	if wb == nil {
		return code
	}
	defer wb.close()
	base := mcpskills.Scope{AppName: appName, UserID: c.userID(), SessionID: st.session}
	scope := mcpskills.SessionScope(base)
	if *share {
		scope = func(*mcp.ServerSession) mcpskills.Scope { return base }
	}
	s, err := mcpskills.New(skilltoolset.NewFSSource(wb.root.FS()), wb.exe, wb.store,
		mcpskills.WithInlineScripts(*inline),
		mcpskills.WithLimits(codeexec.Limits{Timeout: ex.timeout, MaxOutputChars: ex.maxChars}),
		mcpskills.WithLogger(c.logger(slog.LevelWarn)),
		mcpskills.WithScope(scope),
		mcpskills.WithImplementation(mcp.Implementation{Name: "adkskills", Title: "Agent Skills (adkskills)", Version: serverVersion()}))
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	if *addr == "" {
		err = s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(c.stdin), Writer: nopWriteCloser{c.stdout}, MaxLineLength: mcpskills.MaxRequestBytes})
	} else {
		err = c.serveMCP(ctx, s, *addr, *allowRemote, wb)
	}
	if ctx.Err() != nil {
		return exitOK // Ctrl-C is how the server stops
	}
	if err != nil {
		c.errorf("mcp: %v", err)
		return exitFailure
	}
	return exitOK
}

// serveMCP serves s over streamable HTTP on addr until ctx ends, guarded
// as adkskills web is unless allowRemote.
func (c *cli) serveMCP(ctx context.Context, s *mcpskills.Server, addr string, allowRemote bool, wb *workbench) error {
	h, err := s.HTTPHandler(nil)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(mcpPath, h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: localOnly("mcp", mux, allowRemote), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(c.stdout, "adkskills mcp: serving http://%s%s (skills from %s, files saved to %s). Ctrl-C to stop.\n",
		ln.Addr(), mcpPath, wb.skillsDir, wb.storeDir)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), mcpShutdown)
		defer cancel()
		_ = srv.Shutdown(sctx)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// serverVersion is the module version the binary was built from, or
// "(devel)".
func serverVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// nopWriteCloser is a writer the transport may close without closing it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
