package mcpskills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/skilltoolset"
)

// testSkills is the repository's test skills folder.
const testSkills = "../testdata/skills"

// counting counts the runs that reach its executor.
type counting struct {
	codeexec.Executor
	runs atomic.Int32
}

func (c *counting) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	c.runs.Add(1)
	return c.Executor.Execute(ctx, req)
}

// fixture is a server over a skills folder with the local executor
// (counted) and an in-memory artifact store.
type fixture struct {
	s     *Server
	exec  *counting
	store artifact.Service
	dir   string
}

func newFixture(t testing.TB, dir string, opts ...Option) *fixture {
	t.Helper()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	f := &fixture{exec: &counting{Executor: local.New()}, store: artifact.InMemoryService(), dir: dir}
	opts = append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	f.s, err = New(skilltoolset.NewFSSource(root.FS()), f.exec, f.store, opts...)
	require.NoError(t, err)
	return f
}

// elicitor answers elicitation requests; nil declares no elicitation.
type elicitor func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)

// approve ticks the box; decline declines.
func approve(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
}

func decline(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// transport connects a client to a fixture's server: over the
// newline-delimited JSON of stdio (in memory), or over streamable HTTP.
type transport struct {
	name    string
	connect func(t testing.TB, s *Server, opts *mcp.ClientOptions) *mcp.ClientSession
}

var transports = []transport{
	{"stdio", connectStdio},
	{"http", connectHTTP},
}

func clientOptions(e elicitor) *mcp.ClientOptions {
	o := &mcp.ClientOptions{}
	if e != nil {
		o.ElicitationHandler = e
	}
	return o
}

func connectStdio(t testing.TB, s *Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := NewClient(&mcp.Implementation{Name: "test"}, opts).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// httpServer serves s's HTTP handler on loopback until the test ends.
func httpServer(t testing.TB, s *Server) string {
	t.Helper()
	h, err := s.HTTPHandler(nil)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func connectHTTP(t testing.TB, s *Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return dialHTTP(t, httpServer(t, s), opts)
}

func dialHTTP(t testing.TB, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := NewClient(&mcp.Implementation{Name: "test"}, opts).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// list, get and readDir send the extension's requests.
func list(ctx context.Context, cs *mcp.ClientSession, cursor string) (*ListResult, error) {
	return mcp.CallCustomMethod[*ListParams, *ListResult](ctx, cs, MethodList, &ListParams{Cursor: cursor})
}

func get(ctx context.Context, cs *mcp.ClientSession, uri string) (*GetResult, error) {
	return mcp.CallCustomMethod[*GetParams, *GetResult](ctx, cs, MethodGet, &GetParams{URI: uri})
}

func readDir(ctx context.Context, cs *mcp.ClientSession, uri, cursor string) (*DirectoryReadResult, error) {
	return mcp.CallCustomMethod[*DirectoryReadParams, *DirectoryReadResult](ctx, cs, MethodDirectoryRead, &DirectoryReadParams{URI: uri, Cursor: cursor})
}

// rpcCode is the JSON-RPC error code of err, or 0.
func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// readBytes reads a resource's bytes as a client does: its text, UTF-8,
// or its blob.
func readBytes(t *testing.T, cs *mcp.ClientSession, uri string) ([]byte, *mcp.ResourceContents) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1)
	c := res.Contents[0]
	if c.Blob != nil {
		return c.Blob, c
	}
	return []byte(c.Text), c
}

// folderFiles lists every regular file of a skill folder, relative to it,
// sorted, with the digest of its bytes: the manifest a client must get.
func folderFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = "sha256:" + hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

// skillNames lists the skill folders of dir.
func skillNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "SKILL.md")); err == nil {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// writeFiles writes files (path -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(data), 0o755))
	}
}

// edgeSkills is a skills folder with what testdata lacks: binary, empty
// and oddly named files, deep folders, a script that reads input files,
// and a secret beside the skills that no URI may reach.
func edgeSkills(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "skills")
	writeFiles(t, top, map[string]string{"secret.txt": "the host's secret\n"})
	writeFiles(t, dir, map[string]string{
		"edge/SKILL.md": "---\nname: edge\ndescription: Edge cases.\nmetadata:\n  owner: tests\n" +
			"version: 1.0\nreleased: 2024-01-02\ncount: 0o17\nbig: 12345678901234567890\nflag: yes\nempty:\n" +
			"quoted: \"42\"\nlist: [a, 1, true]\nanchor: &a {x: 1}\nalias: *a\n---\n# Edge\n",
		"edge/assets/blank.txt":       "",
		"edge/assets/blob.bin":        "\x00\x01\xff\xfe binary",
		"edge/assets/a b/ünï #1?.txt": "odd name\n",
		"edge/deep/a/b/c/d.txt":       "deep\n",
		"edge/scripts/cat.sh":         "#!/bin/bash\nfor f in \"$@\"; do cat \"$f\"; done\n",
		"edge/scripts/write.sh":       "#!/bin/bash\nprintf '%s' \"$1\" > out.txt\n",
		"other/SKILL.md":              "---\nname: other\ndescription: Another skill.\n---\nbody\n",
		"other/references/notes.md":   "# notes\n",
		"broken/SKILL.md":             "no frontmatter\n",
		"not-a-skill/readme.txt":      "no SKILL.md here\n",
	})
	return dir
}

func codeexecLimits(n int) codeexec.Limits    { return codeexec.Limits{MaxOutputChars: n} }
func codeexecFiles(n int) codeexec.FileLimits { return codeexec.FileLimits{MaxFiles: n} }

func skillfsSource(t *testing.T) skill.Source {
	t.Helper()
	return skilltoolset.NewFSSource(os.DirFS(testSkills))
}
