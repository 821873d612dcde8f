package mcpskills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/internal/skillfs"
)

// TestExtensionDeclared checks the declaration in both protocol eras the
// tests run: stdio negotiates 2026-07-28 (no initialize; elicitation rides
// in results), the stateful HTTP handler the era before it.
func TestExtensionDeclared(t *testing.T) {
	f := newFixture(t, testSkills)
	era := map[string]string{"stdio": "2026-07-28", "http": "2025-11-25"}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f.s, nil)
			assert.Equal(t, era[tr.name], cs.InitializeResult().ProtocolVersion)
			caps := cs.InitializeResult().Capabilities
			require.NotNil(t, caps)
			b, err := json.Marshal(caps.Extensions[ExtensionKey])
			require.NoError(t, err)
			assert.JSONEq(t, `{"directoryRead":true}`, string(b))
			assert.NotNil(t, caps.Tools)
			assert.NotNil(t, caps.Resources)
		})
	}
}

// TestSkillsList walks every page of skills/list and checks each entry
// against the folder it describes: the frontmatter as the file has it,
// every file with the digest and size of its bytes, SKILL.md included.
func TestSkillsList(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []string{testSkills, edgeSkills(t)} {
		for _, pageSize := range []int{1, 2, DefaultPageSize} {
			f := newFixture(t, dir, WithPageSize(pageSize))
			for _, tr := range transports {
				t.Run(tr.name, func(t *testing.T) {
					cs := tr.connect(t, f.s, nil)
					var names []string
					cursor, pages := "", 0
					for {
						res, err := list(ctx, cs, cursor)
						require.NoError(t, err)
						pages++
						assert.LessOrEqual(t, len(res.Skills), pageSize)
						for _, e := range res.Skills {
							name, _ := entryName(e.URI)
							names = append(names, name)
							checkEntry(t, cs, filepath.Join(dir, name), e)
						}
						if res.NextCursor == "" {
							break
						}
						cursor = res.NextCursor
					}
					want := skillNames(t, dir)
					want = slicesDelete(want, "broken") // its SKILL.md has no frontmatter
					assert.Equal(t, want, names)
					assert.Equal(t, (len(want)+pageSize-1)/pageSize, pages)
				})
			}
		}
	}
}

func slicesDelete(s []string, v string) []string {
	var out []string
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// checkEntry checks an entry against its skill folder, and that each file
// reads back as its digest says.
func checkEntry(t *testing.T, cs *mcp.ClientSession, dir string, e *Entry) {
	t.Helper()
	name := filepath.Base(dir)
	assert.Equal(t, "skill://"+name+"/SKILL.md", e.URI)
	md, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	require.NoError(t, err)
	fields, err := skillfs.Fields(md)
	require.NoError(t, err)
	wantFM, _ := json.Marshal(fields)
	gotFM, _ := json.Marshal(e.Frontmatter)
	assert.JSONEq(t, string(wantFM), string(gotFM), "the frontmatter, every key")
	want := folderFiles(t, dir)
	got := map[string]string{}
	for _, r := range e.Resources {
		p, err := relPath("skill://"+name+"/", r.URI)
		require.NoError(t, err)
		got[p] = r.Digest
		data, _ := readBytes(t, cs, r.URI)
		assert.Equal(t, r.Size, int64(len(data)), r.URI)
		assert.Equal(t, r.Digest, digest(data), r.URI)
	}
	assert.Equal(t, want, got, "the manifest is the folder")
}

func TestSkillsListFrontmatterValues(t *testing.T) {
	f := newFixture(t, edgeSkills(t))
	cs := connectStdio(t, f.s, nil)
	res, err := get(context.Background(), cs, "skill://edge/SKILL.md")
	require.NoError(t, err)
	b, err := json.Marshal(res.Skill.Frontmatter)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"edge","description":"Edge cases.","metadata":{"owner":"tests"},"version":1,
		"released":"2024-01-02","count":15,"big":12345678901234567890,"flag":"yes","empty":null,"quoted":"42",
		"list":["a",1,true],"anchor":{"x":1},"alias":{"x":1}}`, string(b))
}

func TestSkillsListBadCursor(t *testing.T) {
	f := newFixture(t, testSkills)
	cs := connectStdio(t, f.s, nil)
	for _, c := range []string{"nonsense", "YWZ0ZXI", strings.Repeat("A", maxURIBytes+1), "!!"} {
		_, err := list(context.Background(), cs, c)
		assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcCode(err), c)
	}
	// A cursor past the end is an empty last page.
	res, err := list(context.Background(), cs, encodeCursor("zzz"))
	require.NoError(t, err)
	assert.Empty(t, res.Skills)
	assert.Empty(t, res.NextCursor)
}

func TestSkillsGet(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, edgeSkills(t))
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f.s, nil)
			res, err := get(ctx, cs, "skill://edge/SKILL.md")
			require.NoError(t, err)
			checkEntry(t, cs, filepath.Join(f.dir, "edge"), res.Skill)
			cases := []struct {
				uri  string
				code int64
			}{
				{"skill://nope/SKILL.md", notFoundCode},
				{"skill://broken/SKILL.md", notFoundCode},
				{"skill://not-a-skill/SKILL.md", notFoundCode},
				{"skill://edge/scripts/cat.sh", int64(jsonrpc.CodeInvalidParams)},
				{"skill://edge", jsonrpc.CodeInvalidParams},
				{"skill://edge/../other/SKILL.md", jsonrpc.CodeInvalidParams},
				{"file:///etc/passwd", jsonrpc.CodeInvalidParams},
				{"", jsonrpc.CodeInvalidParams},
			}
			for _, c := range cases {
				_, err := get(ctx, cs, c.uri)
				assert.Equal(t, c.code, errKind(err), "%s: %v", c.uri, err)
			}
		})
	}
}

// CodeNotFound is the code of a skill or file the server does not have:
// the code of invalid params since SEP-2164, told apart by its data, which
// names the URI (mcp.ResourceNotFoundError).
var CodeNotFound int64 = jsonrpc.CodeInvalidParams

// notFoundCode marks, in the tests' tables, an error that is not found.
const notFoundCode = -1

// errKind is notFoundCode for a not-found error, else err's code.
func errKind(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) && e.Code == CodeNotFound && strings.Contains(string(e.Data), `"uri"`) {
		return notFoundCode
	}
	return rpcCode(err)
}

func TestDirectoryRead(t *testing.T) {
	ctx := context.Background()
	dir := edgeSkills(t)
	f := newFixture(t, dir, WithPageSize(2))
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f.s, nil)
			walk := func(uri string) []*mcp.Resource {
				var out []*mcp.Resource
				cursor := ""
				for {
					res, err := readDir(ctx, cs, uri, cursor)
					require.NoError(t, err, uri)
					assert.LessOrEqual(t, len(res.Resources), 2)
					out = append(out, res.Resources...)
					if cursor = res.NextCursor; cursor == "" {
						return out
					}
				}
			}
			type kid struct{ name, uri, mime string }
			kids := func(rs []*mcp.Resource) []kid {
				var out []kid
				for _, r := range rs {
					out = append(out, kid{r.Name, r.URI, r.MIMEType})
				}
				return out
			}
			assert.Equal(t, []kid{
				{"SKILL.md", "skill://edge/SKILL.md", "text/markdown"},
				{"assets", "skill://edge/assets", DirectoryMIMEType},
				{"deep", "skill://edge/deep", DirectoryMIMEType},
				{"scripts", "skill://edge/scripts", DirectoryMIMEType},
			}, kids(walk("skill://edge")))
			assert.Equal(t, kids(walk("skill://edge")), kids(walk("skill://edge/")))
			assets := walk("skill://edge/assets")
			assert.Equal(t, []kid{
				{"a b", "skill://edge/assets/a%20b", DirectoryMIMEType},
				{"blank.txt", "skill://edge/assets/blank.txt", "text/plain"},
				{"blob.bin", "skill://edge/assets/blob.bin", "application/octet-stream"},
			}, kids(assets))
			assert.Equal(t, int64(len("\x00\x01\xff\xfe binary")), assets[2].Size)
			odd := walk(assets[0].URI)
			require.Len(t, odd, 1)
			data, _ := readBytes(t, cs, odd[0].URI)
			assert.Equal(t, "odd name\n", string(data), "the child's URI reads the file")
			assert.Equal(t, []kid{{"d.txt", "skill://edge/deep/a/b/c/d.txt", "text/plain"}}, kids(walk("skill://edge/deep/a/b/c")))

			for uri, code := range map[string]int64{
				"skill://edge/nope":                                 notFoundCode,
				"skill://edge/SKILL.md":                             notFoundCode, // a file, not a folder
				"skill://nope":                                      notFoundCode,
				"skill://edge/deep/../..":                           jsonrpc.CodeInvalidParams,
				"skill://edge/%2e%2e/other":                         jsonrpc.CodeInvalidParams,
				"artifact:///x":                                     jsonrpc.CodeInvalidParams,
				"skill://edge?cursor=x":                             jsonrpc.CodeInvalidParams,
				"skill://edge/deep/a%2Fb/c":                         jsonrpc.CodeInvalidParams,
				"skill://edge/" + strings.Repeat("a/", maxURIBytes): jsonrpc.CodeInvalidParams,
			} {
				_, err := readDir(ctx, cs, uri, "")
				assert.Equal(t, code, errKind(err), "%s: %v", uri, err)
			}
			_, err := readDir(ctx, cs, "skill://edge", "bogus")
			assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcCode(err))
		})
	}
}

// TestHostileURIs reads URIs a hostile client sends: none may reach a
// file outside its skill, however it is encoded, and each gets an error.
func TestHostileURIs(t *testing.T) {
	dir := edgeSkills(t)
	f := newFixture(t, dir)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f.s, nil)
			for _, uri := range []string{
				"skill://edge/../secret.txt",
				"skill://edge/../../secret.txt",
				"skill://edge/%2e%2e/secret.txt",
				"skill://edge/%2E%2E/%2E%2E/secret.txt",
				"skill://edge/..%2Fsecret.txt",
				"skill://edge/..%2f..%2fsecret.txt",
				"skill://edge/%2e%2e%5csecret.txt",
				"skill://edge/scripts/..%5C..%5Csecret.txt",
				"skill://edge/./SKILL.md",
				"skill://edge//SKILL.md",
				"skill://edge/SKILL.md%00",
				"skill://%2e%2e/secret.txt",
				"skill://../secret.txt",
				"skill://edge%2F..%2F/secret.txt",
				"skill://EDGE/SKILL.md",
				"skill://user@edge/SKILL.md",
				"skill://edge:80/SKILL.md",
				"skill://edge/SKILL.md?x=1",
				"skill://edge/SKILL.md#frag",
				"skill://nope/SKILL.md",
				"skill://broken/SKILL.md",
				"skill://not-a-skill/readme.txt",
				"skill://edge/nope.txt",
				"skill://edge/assets",
				"skill://edge/assets/",
				"skill://edge/" + strings.Repeat("x", maxURIBytes),
				"skill:edge/SKILL.md",
				"artifact:///..%2F..%2Fsecret.txt",
				"artifact://host/x/1",
				"artifact:///x/0",
				"artifact:///x/-1",
				"artifact:///x/01",
				"artifact:///x/1/2",
				"artifact:///",
				"artifact:///user:secret",
				"file://" + filepath.Join(filepath.Dir(dir), "secret.txt"),
			} {
				res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
				assert.Error(t, err, uri)
				assert.Nil(t, res, uri)
				if err != nil {
					assert.NotContains(t, err.Error(), "host's secret", uri)
				}
			}
		})
	}
}

func TestResourcesListsSkills(t *testing.T) {
	f := newFixture(t, testSkills, WithPageSize(2))
	cs := connectStdio(t, f.s, nil)
	var names []string
	for r, err := range cs.Resources(context.Background(), nil) {
		require.NoError(t, err)
		assert.Equal(t, SkillURI(r.Name), r.URI)
		assert.NotEmpty(t, r.Description)
		names = append(names, r.Name)
	}
	assert.Equal(t, skillNames(t, testSkills), names)
}

func TestNewValidatesOptions(t *testing.T) {
	bad := map[string]Option{
		"negative limits": WithLimits(codeexecLimits(-1)),
		"negative inputs": WithInputLimits(codeexecFiles(-1)),
		"nil logger":      WithLogger(nil),
		"nil scope":       WithScope(nil),
		"zero page":       WithPageSize(0),
		"no name":         WithImplementation(mcp.Implementation{}),
	}
	for name, o := range bad {
		_, err := New(skillfsSource(t), nil, nil, o)
		assert.Error(t, err, name)
	}
	_, err := New(nil, nil, nil)
	assert.Error(t, err)
	s, err := New(skillfsSource(t), nil, nil)
	require.NoError(t, err)
	_, err = s.HTTPHandler(&mcp.StreamableHTTPOptions{Stateless: true})
	assert.Error(t, err, "a stateless handler would mix the clients' files")
}

// TestPlainSourceServed serves a plain skill.Source (ADK's own file system
// source): its SKILL.md, which it does not serve as a file, is built from
// the frontmatter and instructions, listed, and read back as its digest
// says; the scripts it serves run.
func TestPlainSourceServed(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"plain/SKILL.md":          "---\nname: plain\ndescription: A plain skill.\nlicense: MIT\n---\n# Plain\n",
		"plain/scripts/hi.sh":     "#!/bin/bash\necho hi from plain\necho saved > out.txt\n",
		"plain/references/doc.md": "# doc\n",
		"plain/cards/x.txt":       "ADK's source serves scripts, references and assets only\n",
	})
	s, err := New(skill.NewFileSystemSource(os.DirFS(dir)), local.New(), nil, WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	cs := connectStdio(t, s, nil)
	res, err := get(context.Background(), cs, "skill://plain/SKILL.md")
	require.NoError(t, err)
	var uris []string
	for _, r := range res.Skill.Resources {
		uris = append(uris, r.URI)
		data, _ := readBytes(t, cs, r.URI)
		assert.Equal(t, r.Digest, digest(data), r.URI)
	}
	assert.Equal(t, []string{"skill://plain/SKILL.md", "skill://plain/references/doc.md", "skill://plain/scripts/hi.sh"}, uris)
	md, _ := readBytes(t, cs, "skill://plain/SKILL.md")
	fields, err := skillfs.Fields(md)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "plain", "description": "A plain skill.", "license": "MIT"}, fields)
	assert.Equal(t, fields, res.Skill.Frontmatter)
	resp, links := callTool(t, cs, "run_skill_script", map[string]any{"skill_name": "plain", "script_path": "scripts/hi.sh"})
	assert.Empty(t, links)
	assert.Equal(t, "hi from plain\n", resp.Stdout)
	assert.Contains(t, resp.Warning, "no artifact service", "without a store, files are listed, not saved")
}

func TestCacheable(t *testing.T) {
	for meta, want := range map[string]string{"2026-07-28": "complete", "2027-01-01": "complete", "2025-11-25": "", "": ""} {
		m := mcp.Meta{}
		if meta != "" {
			m[mcp.MetaKeyProtocolVersion] = meta
		}
		c := cacheable(m, "public")
		assert.Equal(t, want, c.ResultType, "protocol %q", meta)
		assert.Equal(t, "public", c.CacheScope)
	}
	assert.Empty(t, cacheable(nil, "private").ResultType)
}

// TestInteroperabilityLimits serves skills at the limits of SEP-2640 and
// one file or one byte past them: those at the limits are listed whole;
// those past them are left out of skills/list and refused by skills/get,
// saying why, and a file past the size limit is not read.
func TestInteroperabilityLimits(t *testing.T) {
	dir := t.TempDir()
	md := func(name string) string {
		return "---\nname: " + name + "\ndescription: At the limits.\n---\n"
	}
	files := map[string]string{}
	for _, name := range []string{"files-at", "files-over"} {
		files[name+"/SKILL.md"] = md(name)
		n := MaxSkillFiles - 1 // SKILL.md is one of them
		if name == "files-over" {
			n++
		}
		for i := range n {
			files[fmt.Sprintf("%s/f/%04d.txt", name, i)] = "x"
		}
	}
	for _, name := range []string{"bytes-at", "bytes-over"} {
		files[name+"/SKILL.md"] = md(name)
		n := MaxSkillBytes - len(md(name))
		if name == "bytes-over" {
			n++
		}
		files[name+"/assets/big.bin"] = strings.Repeat("b", n)
	}
	files["huge-file/SKILL.md"] = md("huge-file")
	files["huge-file/assets/huge.bin"] = strings.Repeat("h", MaxSkillBytes+1)
	writeFiles(t, dir, files)
	f := newFixture(t, dir)
	cs := connectStdio(t, f.s, nil)
	ctx := context.Background()

	var listed []string
	total := map[string]int64{}
	for cursor := ""; ; {
		res, err := list(ctx, cs, cursor)
		require.NoError(t, err)
		for _, e := range res.Skills {
			name, _ := entryName(e.URI)
			listed = append(listed, name)
			for _, r := range e.Resources {
				total[name] += r.Size
			}
			if name == "files-at" {
				assert.Len(t, e.Resources, MaxSkillFiles)
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, []string{"bytes-at", "files-at"}, listed)
	assert.Equal(t, int64(MaxSkillBytes), total["bytes-at"])
	for _, name := range []string{"files-over", "bytes-over", "huge-file"} {
		_, err := get(ctx, cs, SkillURI(name))
		assert.ErrorContains(t, err, "is not served", name)
		assert.ErrorContains(t, err, "interoperability limits", name)
	}
	// Over stdio, the SDK's client refuses a line over 16 MiB, which such a
	// file is once in JSON: read it over HTTP.
	data, _ := readBytes(t, connectHTTP(t, f.s, nil), "skill://bytes-at/assets/big.bin")
	assert.Len(t, data, MaxSkillBytes-len(md("bytes-at")), "a file at the limit reads whole")
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://huge-file/assets/huge.bin"})
	assert.ErrorContains(t, err, "interoperability limits")
}
