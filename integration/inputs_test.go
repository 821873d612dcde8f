package integration

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// docxParts are the parts of the .docx-like document the round trip edits:
// an XML part with a name glob syntax would misread, the text, and a binary
// image holding every byte value.
func docxParts() map[string][]byte {
	png := []byte("\x89PNG\r\n\x1a\n")
	for i := range 256 {
		png = append(png, byte(i))
	}
	return map[string][]byte{
		"[Content_Types].xml":          []byte(`<?xml version="1.0"?><Types><Default Extension="xml"/></Types>`),
		"_rels/.rels":                  []byte(`<Relationships/>`),
		"word/document.xml":            []byte(`<w:document><w:t>Hello, Ada</w:t></w:document>`),
		"word/media/image1.png":        png,
		"docProps/app.xml":             []byte(`<Properties>ünïcödé</Properties>`),
		"word/_rels/document.xml.rels": []byte(`<Relationships><Relationship Target="media/image1.png"/></Relationships>`),
	}
}

// zipOf zips parts as any zip tool would (deflated, in map order).
func zipOf(t *testing.T, parts map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, data := range parts {
		f, err := w.Create(name)
		require.NoError(t, err)
		_, err = f.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// unzip reads every member of a zip.
func unzip(t *testing.T, data []byte) (names []string, parts map[string][]byte) {
	t.Helper()
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	parts = map[string][]byte{}
	for _, f := range r.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		names = append(names, f.Name)
		parts[f.Name] = b
	}
	return names, parts
}

// uploadRe finds the name ADK gives an uploaded file (RunConfig.SaveInputBlobsAsArtifacts).
var uploadRe = regexp.MustCompile(`Uploaded file: (\S+)\. It has been saved to the artifacts`)

// outputs is a run_skill_script response's output_files by name.
func outputs(t *testing.T, resp map[string]any) map[string]map[string]any {
	t.Helper()
	require.Equal(t, "success", resp["status"], jsonOf(t, resp))
	out := map[string]map[string]any{}
	for _, f := range resp["output_files"].([]map[string]any) {
		out[f["name"].(string)] = f
	}
	return out
}

// TestOfficeRoundTrip is the unpack → edit → pack workflow of the document
// skills, through ADK's runner in one session: the user uploads a .docx-like
// zip, one run unpacks it into a tree, a second edits one file of the tree,
// a third packs the tree (passed by glob) into a document again. Each run
// gets only the files it is passed; unchanged inputs are never outputs
// again; the final document holds the edit and every other part byte for
// byte, and is the exact archive pack.py makes of that tree. It runs under
// Local and, where it can isolate, Sandbox.
func TestOfficeRoundTrip(t *testing.T) {
	executors := []struct {
		name string
		new  func() codeexec.Executor
	}{
		{"local", func() codeexec.Executor { return local.New() }},
		{"sandbox", func() codeexec.Executor { return sandbox.New() }},
	}
	for _, e := range executors {
		t.Run(e.name, func(t *testing.T) {
			exe := e.new()
			if s, ok := exe.(*sandbox.Executor); ok {
				if err := s.Probe(context.Background()); err != nil {
					t.Skipf("the sandbox cannot isolate here: %v", err)
				}
			}
			officeRoundTrip(t, exe)
		})
	}
}

func officeRoundTrip(t *testing.T, exe codeexec.Executor) {
	parts := docxParts()
	upload := zipOf(t, parts)
	var uploaded string
	var instructions []string
	run := func(script string, inputs []any, args ...any) scripted.Step {
		return func(req *model.LLMRequest) (*genai.Content, error) {
			instructions = append(instructions, systemText(req))
			a := map[string]any{"skill_name": "office-roundtrip", "script_path": script, "input_files": inputs, "args": args}
			return genai.NewContentFromFunctionCall("run_skill_script", a, genai.RoleModel), nil
		}
	}
	var responses []map[string]any
	record := func(next scripted.Step) scripted.Step {
		return func(req *model.LLMRequest) (*genai.Content, error) {
			responses = append(responses, lastResponse(t, req, "run_skill_script"))
			return next(req)
		}
	}
	unpack := func(req *model.LLMRequest) (*genai.Content, error) {
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if m := uploadRe.FindStringSubmatch(p.Text); m != nil {
					uploaded = m[1]
				}
			}
		}
		if uploaded == "" {
			return nil, fmt.Errorf("no uploaded file in the request")
		}
		return run("scripts/unpack.py", []any{uploaded}, uploaded, "unpacked")(req)
	}
	h := newHarness(t, harnessConfig{opts: []skilltoolset.Option{skilltoolset.WithCodeExecutor(exe)}, steps: []scripted.Step{
		unpack,
		record(run("scripts/edit.py", []any{"unpacked/word/document.xml"}, "unpacked/word/document.xml", "Hello", "Goodbye")),
		record(run("scripts/pack.py", []any{"unpacked/**"}, "unpacked", "dist/report.docx")),
		record(say("done")),
	}})
	h.sendWith(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		genai.NewPartFromText("Change Hello to Goodbye in my document."),
		{InlineData: &genai.Blob{Data: upload, MIMEType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}},
	}}, agent.RunConfig{SaveInputBlobsAsArtifacts: true})
	require.Len(t, responses, 3)

	// The model saw the upload among the session's files, then the tree.
	assert.Contains(t, instructions[0], "`input_files`")
	assert.Contains(t, instructions[0], fmt.Sprintf("Files of this session that `input_files` can pass in, by path (1): %q.", uploaded))
	assert.Contains(t, instructions[1], `"unpacked/word/document.xml"`)
	assert.Contains(t, instructions[1], `"unpacked/[Content_Types].xml"`)

	// 1. unpack: the tree, not the upload.
	unpacked := outputs(t, responses[0])
	var want []string
	for name := range parts {
		want = append(want, "unpacked/"+name)
	}
	assert.ElementsMatch(t, want, slices.Collect(maps.Keys(unpacked)), "the upload, unchanged, is not an output")
	for name, data := range parts {
		f := unpacked["unpacked/"+name]
		assert.Equal(t, runscript.ArtifactName("unpacked/"+name), f["artifact"])
		assert.Equal(t, data, h.load(f["artifact"].(string), 1).InlineData.Data, name)
	}

	// 2. edit: only the file it changed, as the next version.
	edited := outputs(t, responses[1])
	require.Len(t, edited, 1, jsonOf(t, responses[1]))
	assert.Equal(t, int64(2), edited["unpacked/word/document.xml"]["version"])
	assert.Contains(t, responses[1]["stdout"], "replaced 1 occurrence(s)")

	// 3. pack: the tree by glob, the document only.
	packed := outputs(t, responses[2])
	require.Len(t, packed, 1, jsonOf(t, responses[2]))
	doc := packed["dist/report.docx"]
	require.NotNil(t, doc)
	assert.Equal(t, "packed 6 parts into dist/report.docx in office-roundtrip\n", responses[2]["stdout"], "the staged folder keeps the skill's name")
	final := h.load(doc["artifact"].(string), doc["version"].(int64)).InlineData.Data

	wantParts := maps.Clone(parts)
	wantParts["word/document.xml"] = []byte(`<w:document><w:t>Goodbye, Ada</w:t></w:document>`)
	names, got := unzip(t, final)
	assert.Equal(t, wantParts, got, "the edit, and every other part byte for byte")
	assert.Equal(t, "[Content_Types].xml", names[0])
	assert.Equal(t, packDirect(t, wantParts), final, "the archive pack.py makes of that tree, byte for byte")
}

// packDirect runs pack.py on tree through a bare executor.
func packDirect(t *testing.T, tree map[string][]byte) []byte {
	t.Helper()
	files := []codeexec.File{}
	for name, data := range tree {
		files = append(files, codeexec.File{Path: path.Join("unpacked", name), Data: data})
	}
	res, err := local.New().Execute(context.Background(), &codeexec.Request{
		Skill: os.DirFS(filepath.Join(skillsDir(t), "office-roundtrip")), SkillName: "office-roundtrip", Files: files,
		Script: "scripts/pack.py", Args: []string{"unpacked", "dist/report.docx"},
	})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Stderr.Text)
	for _, f := range res.Files {
		if f.Path == "dist/report.docx" {
			return f.Data
		}
	}
	t.Fatalf("pack.py wrote no dist/report.docx")
	return nil
}
