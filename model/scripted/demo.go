package scripted

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"iter"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/internal/truncate"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// DemoName is the demo model's name (model.LLM.Name).
const DemoName = "adkskills-demo"

// Bounds of the demo's answers: it sums up, the tool response holds the rest.
const (
	// demoOutputChars caps each stream the summary quotes.
	demoOutputChars = 600
	// demoListedSkills is how many skills the help answer names.
	demoListedSkills = 20
)

// Demo is a model.LLM that needs no key and no network. It does what the
// user's message says, word for word (see ParseMessage): "run SKILL SCRIPT
// [ARGS...]" becomes that run_skill_script call, "run-inline LANGUAGE" with
// the code after it a run_skill_inline_script call (which ADK's confirmation
// then puts to the user). After a tool response it answers with a short
// summary: the status, the files saved, the start of the output. Any other
// message gets the skills the request's catalogue lists and how to ask.
//
// It reads nothing but the request, as a real model does: the skills come
// from the toolset's system instruction, the offered tools from the
// request's declarations. It keeps no state and is safe for concurrent use.
type Demo struct {
	examples []string
}

// NewDemo returns the demo model. Its help answer offers examples, messages
// the user can send as they are ("run report-writer scripts/report.py
// Ada"); without any it shows the syntax alone.
func NewDemo(examples ...string) *Demo {
	return &Demo{examples: examples}
}

// Name implements model.LLM.
func (*Demo) Name() string { return DemoName }

// GenerateContent implements model.LLM: one answer, Reply's.
func (d *Demo) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: d.reply(req)}, nil)
	}
}

// Reply is the demo's answer to req: a tool call for a command, a summary
// after tool responses, help otherwise. It never fails; it is a Step, so a
// scripted Model can take demo turns among its own.
func (d *Demo) Reply(req *model.LLMRequest) (*genai.Content, error) {
	return d.reply(req), nil
}

func (d *Demo) reply(req *model.LLMRequest) *genai.Content {
	if req == nil || len(req.Contents) == 0 {
		return say(d.help(req, ""))
	}
	last := req.Contents[len(req.Contents)-1]
	if responses := functionResponses(last); len(responses) > 0 {
		return say(summarize(req.Contents, responses))
	}
	fc, err := ParseMessage(messageText(last))
	switch {
	case errors.Is(err, ErrNotCommand):
		return say(d.help(req, ""))
	case err != nil:
		return say(d.help(req, "I could not read that: "+err.Error()+"."))
	}
	if _, ok := req.Tools[fc.Name]; !ok {
		return say(d.help(req, fmt.Sprintf("This agent does not offer %s.", fc.Name)))
	}
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: fc}}}
}

// say is a model turn of text.
func say(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleModel) }

// messageText is the text of a user's message, without thoughts.
func messageText(c *genai.Content) string {
	var parts []string
	for _, p := range c.Parts {
		if p.Text != "" && !p.Thought {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// functionResponses are the tool responses a content holds.
func functionResponses(c *genai.Content) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

// help is the answer to a message that is no command: what went wrong (if
// anything), the skills, and how to ask.
func (d *Demo) help(req *model.LLMRequest, problem string) string {
	var b strings.Builder
	if problem != "" {
		b.WriteString(problem + "\n\n")
	}
	b.WriteString("I am the adkskills demo model: no AI and no key, I do what your message says, word for word.\n\n")
	skills := catalogue(req)
	switch {
	case len(skills) == 0:
		b.WriteString("No skills are loaded.\n")
	default:
		fmt.Fprintf(&b, "Skills (%d):\n", len(skills))
		for i, s := range skills {
			if i == demoListedSkills {
				fmt.Fprintf(&b, "- … and %d more\n", len(skills)-i)
				break
			}
			fmt.Fprintf(&b, "- `%s`: %s\n", s.Name, firstSentence(s.Description))
		}
	}
	var offered []string
	if req != nil {
		if _, ok := req.Tools[runscript.Name]; ok {
			offered = append(offered, fmt.Sprintf("- `%s SKILL SCRIPT [ARGS...]` runs a skill's script (%s); lines after it are its standard input.", RunCommand, runscript.Name))
		}
		if _, ok := req.Tools[runinline.Name]; ok {
			offered = append(offered, fmt.Sprintf("- `%s LANGUAGE [ARGS...]`, then the code in a ``` block on the next lines, runs code you write (%s) once you approve it.", InlineCommand, runinline.Name))
		}
	}
	if len(offered) == 0 {
		b.WriteString("\nThis agent offers no script tools: it has no code executor, or no skill has a script.\n")
		return b.String()
	}
	b.WriteString("\nAsk me:\n" + strings.Join(offered, "\n") + "\n")
	for i, ex := range d.examples {
		if i == 0 {
			b.WriteString("\nFor example:\n")
		}
		f := fence(ex, '~')
		fmt.Fprintf(&b, "%s\n%s\n%s\n", f, ex, f)
	}
	return b.String()
}

// firstSentence is a description's first sentence or line.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// fence is a code fence of c longer than any run of c in s.
func fence(s string, c byte) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat(string(c), max(3, longest+1))
}

// catalogued is one entry of the skill catalogue in a request.
type catalogued struct {
	Name        string
	Description string
}

// catalogue returns the skills the request's system instruction lists, in
// its order: the <available_skills> block ADK's skill toolset (and so
// adkskills' SkillToolset) adds to every request. The first such block that
// parses counts (the instruction's prose may name the tag before it); a
// request without one lists none.
func catalogue(req *model.LLMRequest) []catalogued {
	if req == nil || req.Config == nil || req.Config.SystemInstruction == nil {
		return nil
	}
	text := messageText(req.Config.SystemInstruction)
	const open, closing = "<available_skills>", "</available_skills>"
	for {
		start := strings.Index(text, open)
		if start < 0 {
			return nil
		}
		text = text[start:]
		end := strings.Index(text, closing)
		if end < 0 {
			return nil
		}
		if skills, ok := parseCatalogue(text[:end+len(closing)]); ok {
			return skills
		}
		text = text[len(open):]
	}
}

// parseCatalogue reads one <available_skills> element.
func parseCatalogue(block string) ([]catalogued, bool) {
	var doc struct {
		Skills []struct {
			Name        string `xml:"name"`
			Description string `xml:"description"`
		} `xml:"skill"`
	}
	if err := xml.Unmarshal([]byte(block), &doc); err != nil {
		return nil, false
	}
	out := make([]catalogued, 0, len(doc.Skills))
	for _, s := range doc.Skills {
		out = append(out, catalogued{Name: strings.TrimSpace(s.Name), Description: strings.TrimSpace(s.Description)})
	}
	return out, true
}

// summarize sums up the tool responses a request ends with, naming each
// call's skill and script (or language) from the calls before them.
func summarize(contents []*genai.Content, responses []*genai.FunctionResponse) string {
	calls := lastCalls(contents)
	var out []string
	for i, r := range responses {
		what := "`" + r.Name + "`"
		if i < len(calls) && calls[i].Name == r.Name {
			what = describeCall(calls[i])
		}
		out = append(out, summarizeOne(what, r))
	}
	return strings.Join(out, "\n\n")
}

// lastCalls are the function calls of the last model turn that made any.
func lastCalls(contents []*genai.Content) []*genai.FunctionCall {
	for i := len(contents) - 1; i >= 0; i-- {
		var calls []*genai.FunctionCall
		for _, p := range contents[i].Parts {
			if p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall)
			}
		}
		if len(calls) > 0 {
			return calls
		}
	}
	return nil
}

// describeCall names what a script tool's call ran.
func describeCall(fc *genai.FunctionCall) string {
	str := func(k string) string { s, _ := fc.Args[k].(string); return s }
	switch {
	case fc.Name == runscript.Name && str("skill_name") != "":
		return fmt.Sprintf("`%s` of `%s`", str("script_path"), str("skill_name"))
	case fc.Name == runinline.Name && str("language") != "":
		return fmt.Sprintf("Your %s script", str("language"))
	}
	return "`" + fc.Name + "`"
}

// summarizeOne sums up one tool response.
func summarizeOne(what string, r *genai.FunctionResponse) string {
	res, err := runscript.ParseResponse(r.Response)
	switch {
	case err != nil:
		return "`" + r.Name + "` answered."
	case res.ErrorCode == runscript.CodeConfirmationRejected:
		return what + " did not run: you did not approve it."
	case res.Failed():
		return fmt.Sprintf("%s did not run: %s: %s", what, res.ErrorCode, res.Error)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s ran: %s, exit code %d.", what, res.Status, res.ExitCode)
	var saved []string
	for _, f := range res.OutputFiles {
		if f.Artifact != "" {
			saved = append(saved, fmt.Sprintf("`%s` (version %d)", f.Artifact, f.Version))
		}
	}
	if len(saved) > 0 {
		fmt.Fprintf(&b, " Saved as artifacts: %s.", strings.Join(saved, ", "))
	}
	if res.Warning != "" {
		fmt.Fprintf(&b, " Warning: %s", res.Warning)
	}
	quote := func(name, s string) {
		if s = strings.TrimRight(s, "\n"); s != "" {
			s = truncate.String(s, demoOutputChars)
			f := fence(s, '`')
			fmt.Fprintf(&b, "\n\n%s:\n%s\n%s\n%s", name, f, s, f)
		}
	}
	quote("stdout", res.Stdout)
	if res.Status != runscript.StatusSuccess {
		quote("stderr", res.Stderr)
	}
	return b.String()
}
