package adkglue

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

type decl struct {
	name string
	d    *genai.FunctionDeclaration
}

func (t decl) Name() string                            { return t.name }
func (t decl) Declaration() *genai.FunctionDeclaration { return t.d }

func TestPackTool(t *testing.T) {
	req := &model.LLMRequest{Config: &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}}}
	a := decl{"a", &genai.FunctionDeclaration{Name: "a"}}
	b := decl{"b", &genai.FunctionDeclaration{Name: "b"}}
	require.NoError(t, PackTool(req, a))
	require.NoError(t, PackTool(req, b))
	require.NoError(t, PackTool(req, decl{"silent", nil}))
	assert.Equal(t, a, req.Tools["a"])
	assert.Contains(t, req.Tools, "silent", "a tool without a declaration is still dispatchable")
	require.Len(t, req.Config.Tools, 2, "declarations share one function tool, next to the others")
	assert.Equal(t, []*genai.FunctionDeclaration{a.d, b.d}, req.Config.Tools[1].FunctionDeclarations)
	assert.ErrorContains(t, PackTool(req, a), `duplicate tool: "a"`)

	empty := &model.LLMRequest{}
	require.NoError(t, PackTool(empty, a))
	assert.Equal(t, []*genai.FunctionDeclaration{a.d}, empty.Config.Tools[0].FunctionDeclarations)
}

func TestAppendInstructions(t *testing.T) {
	req := &model.LLMRequest{}
	AppendInstructions(req, "")
	assert.Nil(t, req.Config, "nothing to add")
	AppendInstructions(req, "one")
	assert.Equal(t, "one", req.Config.SystemInstruction.Parts[0].Text)
	AppendInstructions(req, "two")
	assert.Equal(t, "one\n\ntwo", req.Config.SystemInstruction.Parts[0].Text)
	assert.True(t, HasInstruction(req, "two"))
	assert.False(t, HasInstruction(req, "three"))

	withBlob := &model.LLMRequest{Config: &genai.GenerateContentConfig{SystemInstruction: &genai.Content{Parts: []*genai.Part{{InlineData: &genai.Blob{}}}}}}
	AppendInstructions(withBlob, "text")
	require.Len(t, withBlob.Config.SystemInstruction.Parts, 2, "a non-text last part gets a new part after it")
	assert.Equal(t, "text", withBlob.Config.SystemInstruction.Parts[1].Text)
	assert.False(t, HasInstruction(&model.LLMRequest{}, "x"))
}
