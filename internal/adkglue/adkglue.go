// Package adkglue holds the few request helpers ADK Go keeps internal
// (packing a function tool into a request, appending system instructions),
// written once for the whole module, and the shims through which shared code
// meets the two ADK majors (context_adk1.go, context_adk2.go): the tool
// context type, a tool's artifacts, how confirmations resume.
package adkglue

import (
	"fmt"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// Declarer is a tool that declares itself to the model.
type Declarer interface {
	Name() string
	Declaration() *genai.FunctionDeclaration
}

// PackTool registers t in req.Tools, where the flow dispatches function calls
// from, and appends its declaration to the request's function declarations.
// A second tool with the same name is an error, as in ADK.
func PackTool(req *model.LLMRequest, t Declarer) error {
	if req.Tools == nil {
		req.Tools = make(map[string]any)
	}
	name := t.Name()
	if _, ok := req.Tools[name]; ok {
		return fmt.Errorf("duplicate tool: %q", name)
	}
	req.Tools[name] = t
	decl := t.Declaration()
	if decl == nil {
		return nil
	}
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	for _, gt := range req.Config.Tools {
		if gt != nil && gt.FunctionDeclarations != nil {
			gt.FunctionDeclarations = append(gt.FunctionDeclarations, decl)
			return nil
		}
	}
	req.Config.Tools = append(req.Config.Tools, &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{decl}})
	return nil
}

// AppendInstructions appends text to the request's system instruction,
// separated from what is there by a blank line, as ADK's own toolsets do.
func AppendInstructions(req *model.LLMRequest, text string) {
	if text == "" {
		return
	}
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	si := req.Config.SystemInstruction
	if si == nil {
		req.Config.SystemInstruction = genai.NewContentFromText(text, genai.RoleUser)
		return
	}
	if n := len(si.Parts); n > 0 && si.Parts[n-1] != nil && si.Parts[n-1].Text != "" {
		si.Parts[n-1].Text += "\n\n" + text
		return
	}
	si.Parts = append(si.Parts, genai.NewPartFromText(text))
}

// HasInstruction reports whether the request's system instruction already
// contains text.
func HasInstruction(req *model.LLMRequest, text string) bool {
	if req.Config == nil || req.Config.SystemInstruction == nil {
		return false
	}
	for _, p := range req.Config.SystemInstruction.Parts {
		if p != nil && strings.Contains(p.Text, text) {
			return true
		}
	}
	return false
}
