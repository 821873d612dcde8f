package mcpskills

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/tools/runscript"
)

// deckZip is a .pptx-like zip of three slides the slide list names.
func deckZip(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	list := `<p:presentation><p:sldIdLst>`
	for i := 1; i <= 3; i++ {
		list += fmt.Sprintf(`<p:sldId target="slides/slide%d.xml"/>`, i)
		f, err := w.Create(fmt.Sprintf("ppt/slides/slide%d.xml", i))
		require.NoError(t, err)
		fmt.Fprintf(f, "slide %d", i)
	}
	f, err := w.Create("ppt/presentation.xml")
	require.NoError(t, err)
	fmt.Fprint(f, list+`</p:sldIdLst></p:presentation>`)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestDeletionsOverMCP is the deck round trip over MCP: the clean run's
// result lists the slide it deleted (with no resource link: nothing was
// saved), the pack run's glob no longer passes it in, and the deleted
// slide's artifact still reads by URI and still passes in by URI.
func TestDeletionsOverMCP(t *testing.T) {
	f := newFixture(t, "../testdata/deckskills")
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f.s, nil)
			sc := DefaultScope
			if id := cs.ID(); id != "" {
				sc.SessionID = "mcp-" + id
			}
			_, err := f.store.Save(context.Background(), &artifact.SaveRequest{AppName: sc.AppName, UserID: sc.UserID, SessionID: sc.SessionID,
				FileName: "deck.pptx", Part: genai.NewPartFromBytes(deckZip(t), "application/zip")})
			require.NoError(t, err)
			run := func(script string, inputs []string, args ...string) (*runscript.Response, int) {
				t.Helper()
				resp, links := callTool(t, cs, runscript.Name, map[string]any{"skill_name": "deck-roundtrip", "script_path": script, "input_files": inputs, "args": args})
				require.Equal(t, runscript.StatusSuccess, resp.Status, resp.Stderr+resp.Error)
				return resp, len(links)
			}
			run("scripts/unpack.py", []string{"deck.pptx"}, "deck.pptx", "unpacked")
			run("scripts/drop_slide.py", []string{"unpacked/ppt/presentation.xml"}, "unpacked", "slide2.xml")
			resp, links := run("scripts/clean.py", []string{"unpacked/**"}, "unpacked")
			slide2 := runscript.ArtifactName("unpacked/ppt/slides/slide2.xml")
			assert.Equal(t, []runscript.DeletedFile{{Name: "unpacked/ppt/slides/slide2.xml", Artifact: slide2}}, resp.DeletedFiles)
			assert.Zero(t, links)

			resp, _ = run("scripts/pack.py", []string{"unpacked/**"}, "unpacked", "dist/deck.pptx")
			assert.Equal(t, "packed 3 parts into dist/deck.pptx\n", resp.Stdout)

			data, _ := readBytes(t, cs, ArtifactURI(slide2, 0))
			assert.Equal(t, "slide 2", string(data), "its versions stay readable")
			resp, _ = run("scripts/clean.py", []string{ArtifactURI(slide2, 0), "unpacked/ppt/presentation.xml"}, "unpacked")
			assert.Equal(t, "removed ppt/slides/slide2.xml\n", resp.Stdout, "named, it is passed in")
		})
	}
}
