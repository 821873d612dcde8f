package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
)

// credentialsHelp is what chat and web print when no Gemini credentials are
// set; %[1]s is the command.
const credentialsHelp = `adkskills: %[1]s needs Gemini credentials, and none are set.
Set a Gemini API key and try again:
    export GOOGLE_API_KEY=...   # create a key at https://aistudio.google.com/apikey (GEMINI_API_KEY works too)
or use Vertex AI:
    export GOOGLE_GENAI_USE_VERTEXAI=true GOOGLE_CLOUD_PROJECT=your-project GOOGLE_CLOUD_LOCATION=us-central1
    gcloud auth application-default login
or try it without a key, with the built-in demo model:
    adkskills %[1]s --demo
`

// vertexHelp is what they print when Vertex AI is asked for without a
// project and a location (or an API key, its express mode).
const vertexHelp = `adkskills: %s: GOOGLE_GENAI_USE_VERTEXAI is set, but GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION are not.
Set them (and log in with gcloud auth application-default login) and try again:
    export GOOGLE_CLOUD_PROJECT=your-project GOOGLE_CLOUD_LOCATION=us-central1
`

// missingCredentials reads the environment as the genai client does and
// returns what to tell the user when it holds no credentials for Gemini, or
// "" when it does: an API key (GOOGLE_API_KEY or GEMINI_API_KEY) or, with
// GOOGLE_GENAI_USE_VERTEXAI (or GOOGLE_GENAI_USE_ENTERPRISE) true, a
// project and a location. Application default credentials are the genai
// client's to find.
func (c *cli) missingCredentials(command string) string {
	truthy := func(k string) bool {
		v := strings.ToLower(c.env.getenv(k))
		return v == "1" || v == "true"
	}
	key := c.env.getenv("GOOGLE_API_KEY") != "" || c.env.getenv("GEMINI_API_KEY") != ""
	vertex := truthy("GOOGLE_GENAI_USE_VERTEXAI")
	if c.env.getenv("GOOGLE_GENAI_USE_ENTERPRISE") != "" {
		vertex = truthy("GOOGLE_GENAI_USE_ENTERPRISE") // the genai client lets it win
	}
	location := c.env.getenv("GOOGLE_CLOUD_LOCATION") != "" || c.env.getenv("GOOGLE_CLOUD_REGION") != ""
	switch {
	case key:
		return ""
	case vertex && c.env.getenv("GOOGLE_CLOUD_PROJECT") != "" && location:
		return ""
	case vertex:
		return fmt.Sprintf(vertexHelp, command)
	}
	return fmt.Sprintf(credentialsHelp, command)
}

// newGemini is the model of chat and web: ADK's Gemini model, with the genai
// client configured from the environment (API key, or Vertex AI).
func newGemini(ctx context.Context, name string) (model.LLM, error) {
	return gemini.NewModel(ctx, name, &genai.ClientConfig{})
}

// agentConfig is what chat and web say about their agent.
type agentConfig struct {
	name, description, instruction string
	model                          string
	inline                         bool
	// demo puts the keyless demo model (scripted.Demo) in Gemini's place.
	demo bool
	exec execFlags
}

// newAgent builds the agent chat and web serve: the skills toolset over the
// workbench, the model, and the instruction.
func (c *cli) newAgent(ctx context.Context, wb *workbench, cfg agentConfig) (agent.Agent, error) {
	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(wb.root.FS()),
		skilltoolset.WithCodeExecutor(wb.exe),
		skilltoolset.WithInlineScripts(cfg.inline),
		skilltoolset.WithScriptTimeout(cfg.exec.timeout),
		skilltoolset.WithMaxOutputChars(cfg.exec.maxChars),
		skilltoolset.WithLogger(c.logger(slog.LevelWarn)))
	if err != nil {
		return nil, err
	}
	newModel := c.env.newModel
	if newModel == nil {
		newModel = newGemini
	}
	var m model.LLM = scripted.NewDemo(demoExamples(ctx, wb)...)
	if !cfg.demo {
		if m, err = newModel(ctx, cfg.model); err != nil {
			return nil, fmt.Errorf("model %s: %w", cfg.model, err)
		}
	}
	return llmagent.New(llmagent.Config{
		Name:        cfg.name,
		Description: cfg.description,
		Model:       m,
		Instruction: cfg.instruction,
		Toolsets:    []tool.Toolset{ts},
	})
}

// demoSkills is how many skills the demo's help answer gives an example of.
const demoSkills = 3

// demoExamples are the messages the demo model's help offers: a run of the
// first entry point of the first skills that have one, and an inline script
// in the first language of the executor's table that helloIn knows.
func demoExamples(ctx context.Context, wb *workbench) []string {
	src := skillfs.New(wb.root.FS(), nil)
	table := codeexec.InterpretersOf(wb.exe)
	found, _ := src.Scan()
	var out []string
	for _, sk := range found {
		if len(out) == demoSkills {
			break
		}
		if sk.Err != nil {
			continue
		}
		if scripts, err := skillfs.Scripts(ctx, src, sk.Dir, table); err == nil && len(scripts) > 0 {
			out = append(out, fmt.Sprintf("%s %s %s", scripted.RunCommand, sk.Dir, scripts[0].Path))
		}
	}
	for _, lang := range table.Languages() {
		if code, ok := helloIn[lang]; ok {
			return append(out, fmt.Sprintf("%s %s\n```\n%s\n```", scripted.InlineCommand, lang, code))
		}
	}
	return out
}

// helloIn is a one-line program that writes a file, per language of the
// default interpreter table.
var helloIn = map[string]string{
	"python": `open("hello.txt", "w").write("hello from python\n")`,
	"bash":   `echo "hello from bash" > hello.txt`,
	"node":   `require("fs").writeFileSync("hello.txt", "hello from node\n")`,
}

// modelLabel names the model chat and web talk to, for their first line.
func modelLabel(name string, demo bool) string {
	if demo {
		return "the demo model (no key; say hello to see what it does)"
	}
	return name
}
