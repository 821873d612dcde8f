package integration

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/codeexec/sandbox"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// deckParts are the parts of the .pptx-like deck the round trip edits:
// three slides the slide list names.
func deckParts() map[string][]byte {
	list := `<p:presentation><p:sldIdLst>`
	parts := map[string][]byte{"[Content_Types].xml": []byte(`<Types/>`)}
	for i := 1; i <= 3; i++ {
		list += fmt.Sprintf(`<p:sldId target="slides/slide%d.xml"/>`, i)
		parts[fmt.Sprintf("ppt/slides/slide%d.xml", i)] = fmt.Appendf(nil, `<p:sld>slide %d</p:sld>`, i)
	}
	parts["ppt/presentation.xml"] = []byte(list + `</p:sldIdLst></p:presentation>`)
	return parts
}

// deckSkills is the folder of the deck-roundtrip skill, which only these
// tests use.
func deckSkills(t testing.TB) string { return filepath.Join(skillsDir(t), "..", "deckskills") }

// TestDeckRoundTrip is the presentation skills' workflow with a deletion in
// the middle, through ADK's runner in one session: unpack the uploaded
// deck, drop slide 2 from the slide list, clean (which deletes the slide
// file the list no longer names), then pack the tree passed by glob, which
// refuses any slide the list does not name. The deleted slide must not
// come back: the clean run reports it in deleted_files, the session's tree
// (the instruction's listing, the glob) no longer has it, and its versions
// stay loadable by name. It runs under Local and, where it can isolate,
// Sandbox.
func TestDeckRoundTrip(t *testing.T) {
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
			deckRoundTrip(t, exe)
		})
	}
}

func deckRoundTrip(t *testing.T, exe codeexec.Executor) {
	parts := deckParts()
	var instructions []string
	run := func(script string, inputs []any, args ...any) scripted.Step {
		return func(req *model.LLMRequest) (*genai.Content, error) {
			instructions = append(instructions, systemText(req))
			a := map[string]any{"skill_name": "deck-roundtrip", "script_path": script, "input_files": inputs, "args": args}
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
					return run("scripts/unpack.py", []any{m[1]}, m[1], "unpacked")(req)
				}
			}
		}
		return nil, fmt.Errorf("no uploaded file in the request")
	}
	h := newHarness(t, harnessConfig{skills: deckSkills(t), opts: []skilltoolset.Option{skilltoolset.WithCodeExecutor(exe)}, steps: []scripted.Step{
		unpack,
		record(run("scripts/drop_slide.py", []any{"unpacked/ppt/presentation.xml"}, "unpacked", "slide2.xml")),
		record(run("scripts/clean.py", []any{"unpacked/**"}, "unpacked")),
		record(run("scripts/pack.py", []any{"unpacked/**"}, "unpacked", "dist/deck.pptx")),
		record(say("done")),
	}})
	h.sendWith(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		genai.NewPartFromText("Remove the second slide of my deck."),
		{InlineData: &genai.Blob{Data: zipOf(t, parts), MIMEType: "application/vnd.openxmlformats-officedocument.presentationml.presentation"}},
	}}, agent.RunConfig{SaveInputBlobsAsArtifacts: true})
	require.Len(t, responses, 4)
	slide2 := runscript.ArtifactName("unpacked/ppt/slides/slide2.xml")

	// 1, 2: the tree, then the list without slide 2.
	assert.Len(t, outputs(t, responses[0]), len(parts))
	assert.Contains(t, outputs(t, responses[1]), "unpacked/ppt/presentation.xml")

	// 3. clean deletes the slide: the response says so, nothing is saved.
	assert.Equal(t, "removed ppt/slides/slide2.xml\n", responses[2]["stdout"])
	assert.Empty(t, outputs(t, responses[2]))
	assert.Equal(t, []map[string]any{{"name": "unpacked/ppt/slides/slide2.xml", "artifact": slide2}}, responses[2]["deleted_files"])

	// The model no longer sees it among the session's files.
	assert.Contains(t, instructions[2], `"unpacked/ppt/slides/slide2.xml"`)
	assert.NotContains(t, instructions[3], `"unpacked/ppt/slides/slide2.xml"`)
	assert.Contains(t, instructions[3], `"unpacked/ppt/slides/slide3.xml"`)

	// 4. pack gets the tree as clean left it, and packs it.
	packed := outputs(t, responses[3])
	require.Contains(t, packed, "dist/deck.pptx", jsonOf(t, responses[3]))
	_, got := unzip(t, h.load(packed["dist/deck.pptx"]["artifact"].(string), 0).InlineData.Data)
	want := maps.Clone(parts)
	delete(want, "ppt/slides/slide2.xml")
	want["ppt/presentation.xml"] = []byte(`<p:presentation><p:sldIdLst><p:sldId target="slides/slide1.xml"/><p:sldId target="slides/slide3.xml"/></p:sldIdLst></p:presentation>`)
	assert.Equal(t, want, got)

	// The deleted slide's versions stay, for whoever asks by name.
	assert.Equal(t, parts["ppt/slides/slide2.xml"], h.load(slide2, 0).InlineData.Data)
	files, err := runscript.DeletedFiles(context.Background(), adkglue.SessionArtifacts(h.artifacts, appName, userID, h.sessionID))
	require.NoError(t, err)
	assert.Equal(t, []runscript.SessionFile{{Path: "unpacked/ppt/slides/slide2.xml", Artifact: slide2}}, files)
}
