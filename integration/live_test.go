package integration

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runscript"
)

// liveModel is the Gemini model the live tests use; ADKSKILLS_LIVE_MODEL
// overrides it.
func liveModel() string {
	if m := os.Getenv("ADKSKILLS_LIVE_MODEL"); m != "" {
		return m
	}
	return "gemini-2.5-flash"
}

// TestLiveModelRunsSkillScript drives a real Gemini model: it must load the
// report-writer skill, run its script, and leave the report as an artifact.
func TestLiveModelRunsSkillScript(t *testing.T) {
	key := os.Getenv("GOOGLE_API_KEY")
	if key == "" {
		t.Skip("live-model test skipped: set GOOGLE_API_KEY (a Gemini API key from https://aistudio.google.com/apikey) to run it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	llm, err := gemini.NewModel(ctx, liveModel(), &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI})
	require.NoError(t, err)
	ts, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS(skillsDir(t))), skilltoolset.WithCodeExecutor(local.New()))
	require.NoError(t, err)
	a, err := llmagent.New(llmagent.Config{
		Name: "live_agent", Model: llm, Toolsets: []tool.Toolset{ts},
		Instruction: "Use your skills to do what the user asks. Do not ask questions back.",
	})
	require.NoError(t, err)
	sessions, arts := session.InMemoryService(), artifact.InMemoryService()
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: sessions, ArtifactService: arts})
	require.NoError(t, err)
	created, err := sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID})
	require.NoError(t, err)

	var ran bool
	msg := genai.NewContentFromText("Use the report-writer skill to write a report for Grace Hopper.", genai.RoleUser)
	for ev, err := range r.Run(ctx, userID, created.Session.ID(), msg, agent.RunConfig{}) {
		require.NoError(t, err)
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if fc := p.FunctionCall; fc != nil {
				t.Logf("model called %s(%v)", fc.Name, fc.Args)
				ran = ran || fc.Name == "run_skill_script"
			}
		}
	}
	require.True(t, ran, "the model never called run_skill_script")
	list, err := arts.List(ctx, &artifact.ListRequest{AppName: appName, UserID: userID, SessionID: created.Session.ID()})
	require.NoError(t, err)
	require.True(t, slices.Contains(list.FileNames, runscript.ArtifactName("report.md")), "artifacts: %v", list.FileNames)
}
