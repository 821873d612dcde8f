package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/tools/runscript"
)

// deck writes a .pptx-like zip of three slides into a folder and returns
// its path.
func deck(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	list := `<p:presentation><p:sldIdLst>`
	for i := 1; i <= 3; i++ {
		list += fmt.Sprintf(`<p:sldId target="slides/slide%d.xml"/>`, i)
		f, err := w.Create(fmt.Sprintf("ppt/slides/slide%d.xml", i))
		require.NoError(t, err)
		fmt.Fprintf(f, "<p:sld>slide %d</p:sld>", i)
	}
	f, err := w.Create("ppt/presentation.xml")
	require.NoError(t, err)
	fmt.Fprint(f, list+`</p:sldIdLst></p:presentation>`)
	require.NoError(t, w.Close())
	p := filepath.Join(t.TempDir(), "deck.pptx")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p
}

// TestRunReportsDeletions is the deck round trip from the shell: clean
// reports the slide it deleted, artifacts ls no longer shows it (--deleted
// does, cat still prints it), and pack, given the tree by glob, packs it.
func TestRunReportsDeletions(t *testing.T) {
	vars, _ := store(t)
	skills := filepath.Join(repoRoot(t), "testdata", "deckskills")
	runDeck := func(args ...string) outcome {
		t.Helper()
		return invoke(t, invocation{vars: vars, user: "tester", args: append([]string{"run", "--skills", skills}, args...)})
	}
	o := runDeck("--input", deck(t), "deck-roundtrip", "scripts/unpack.py", "--", "deck.pptx", "unpacked")
	require.Equal(t, exitOK, o.code, o.stderr)
	o = runDeck("--input-artifact", "unpacked/ppt/presentation.xml", "deck-roundtrip", "scripts/drop_slide.py", "--", "unpacked", "slide2.xml")
	require.Equal(t, exitOK, o.code, o.stderr)

	o = runDeck("--input-artifact", "unpacked/**", "deck-roundtrip", "scripts/clean.py", "--", "unpacked")
	require.Equal(t, exitOK, o.code, o.stderr)
	assert.Contains(t, o.stdout, "== deleted files ==\nunpacked/ppt/slides/slide2.xml (artifact \"unpacked∕ppt∕slides∕slide2.xml\" keeps its versions)\n")
	assert.Contains(t, o.stdout, ": success, exit code 0, ")
	assert.Contains(t, o.stdout, ", 1 file(s) deleted ==\n")

	ls := invoke(t, invocation{vars: vars, user: "tester", args: []string{"artifacts", "ls"}})
	require.Equal(t, exitOK, ls.code, ls.stderr)
	assert.NotContains(t, ls.stdout, "slide2")
	assert.NotContains(t, ls.stdout, runscript.DeletedArtifact)
	assert.Contains(t, ls.stdout, "unpacked/ppt/slides/slide3.xml")
	assert.Equal(t, "adkskills: 1 artifact of files runs deleted not shown (--deleted lists them)\n", ls.stderr)
	gone := invoke(t, invocation{vars: vars, user: "tester", args: []string{"artifacts", "ls", "--deleted"}})
	require.Equal(t, exitOK, gone.code, gone.stderr)
	assert.Regexp(t, `\A\S+ +ARTIFACT.*\nunpacked/ppt/slides/slide2\.xml +unpacked∕ppt∕slides∕slide2\.xml +1 +1 .*\n\z`, gone.stdout)
	cat := invoke(t, invocation{vars: vars, user: "tester", args: []string{"artifacts", "cat", "unpacked/ppt/slides/slide2.xml"}})
	require.Equal(t, exitOK, cat.code, cat.stderr)
	assert.Equal(t, "<p:sld>slide 2</p:sld>", cat.stdout, "its versions stay")

	o = invoke(t, invocation{vars: vars, user: "tester", args: []string{"run", "--skills", skills, "--json", "--input-artifact", "unpacked/**",
		"deck-roundtrip", "scripts/pack.py", "--", "unpacked", "dist/deck.pptx"}})
	require.Equal(t, exitOK, o.code, o.stdout+o.stderr)
	var resp map[string]any
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &resp))
	assert.Equal(t, "packed 3 parts into dist/deck.pptx\n", resp["stdout"])
	assert.NotContains(t, resp, "deleted_files")
}

// TestInputRestoresADeletedFile: --input saves a file whose path a run
// deleted, and the file is in the session's tree again, even when the run
// it was saved for does not happen.
func TestInputRestoresADeletedFile(t *testing.T) {
	vars, dir := store(t)
	s, err := fileartifact.New(dir)
	require.NoError(t, err)
	ctx := context.Background()
	for name, part := range map[string]*genai.Part{
		"notes.txt":               genai.NewPartFromBytes([]byte("old notes"), "text/plain"),
		runscript.DeletedArtifact: genai.NewPartFromBytes([]byte(`{"deleted":["notes.txt"]}`), "application/json"),
	} {
		_, err := s.Save(ctx, &artifact.SaveRequest{AppName: appName, UserID: "tester", SessionID: defaultSession, FileName: name, Part: part})
		require.NoError(t, err)
	}
	ls := invoke(t, invocation{vars: vars, user: "tester", args: []string{"artifacts", "ls"}})
	assert.NotContains(t, ls.stdout, "notes.txt", "deleted by an earlier run")

	notes := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("new notes"), 0o600))
	o := invoke(t, invocation{vars: vars, user: "tester", args: []string{"run", "--skills", testSkills(t), "--input", notes, "py-tools", "scripts/nope.py"}})
	require.Equal(t, exitFailure, o.code, o.stderr)
	assert.Contains(t, o.stderr, "SCRIPT_NOT_FOUND")
	ls = invoke(t, invocation{vars: vars, user: "tester", args: []string{"artifacts", "ls"}})
	require.Equal(t, exitOK, ls.code, ls.stderr)
	assert.Contains(t, ls.stdout, "notes.txt")
	assert.False(t, strings.Contains(ls.stderr, "not shown"), ls.stderr)
}

// TestChatNotesDeletions: chat's one-line summary of a run names what it
// saved and what it deleted.
func TestChatNotesDeletions(t *testing.T) {
	resp := runscript.Response{Status: "success", OutputFiles: []runscript.OutputFile{{Name: "moved/b.txt", Artifact: "moved∕b.txt", Version: 1}},
		DeletedFiles: []runscript.DeletedFile{{Name: "a.txt", Artifact: "a.txt"}, {Name: "in/b.txt", Artifact: "in∕b.txt"}}}
	assert.Equal(t, "success, exit code 0, saved moved∕b.txt v1, deleted a.txt, in/b.txt", resultNote(resp.Map()))
}
