package integration

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/tools/runscript"
)

// Helper processes: the test binary, re-executed with these variables.
const (
	helperEnv     = "ADKSKILLS_IT_HELPER" // "partial"
	helperStore   = "ADKSKILLS_IT_STORE"
	helperSession = "ADKSKILLS_IT_SESSION"
)

// helperMain is the helper process's main: "partial" runs report-writer's
// script through ADK's runner with the file artifact store, and the
// process kills itself with SIGKILL right after the first of the run's
// files is saved.
func helperMain() int {
	if os.Getenv(helperEnv) != "partial" {
		fmt.Fprintf(os.Stderr, "unknown %s=%q\n", helperEnv, os.Getenv(helperEnv))
		return 2
	}
	store, err := fileartifact.New(os.Getenv(helperStore))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	t := &helperTB{}
	kill := &killAfterSaves{Service: store}
	kill.left.Store(1)
	h := newHarness(t, harnessConfig{artifacts: kill, sessionID: os.Getenv(helperSession),
		steps: []scripted.Step{call("run_skill_script", reportArgs), say("done")}})
	h.say("write the report")
	fmt.Fprintln(os.Stderr, "the run ended: it should have been killed")
	return 3
}

// helperTB is the testing.TB a helper process's harness reports to: any
// failure ends the process.
type helperTB struct{ testing.TB }

func (*helperTB) Helper()                   {}
func (*helperTB) TempDir() string           { d, _ := os.MkdirTemp("", "it-helper"); return d }
func (*helperTB) Errorf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
func (*helperTB) FailNow()                  { os.Exit(4) }
func (*helperTB) Fatalf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...); os.Exit(4) }

// killAfterSaves is an artifact service that kills its process with
// SIGKILL once left saves have succeeded.
type killAfterSaves struct {
	artifact.Service
	left atomic.Int32
}

func (k *killAfterSaves) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	resp, err := k.Service.Save(ctx, req)
	if err == nil && k.left.Add(-1) == 0 {
		p, _ := os.FindProcess(os.Getpid())
		_ = p.Kill()
		select {}
	}
	return resp, err
}

// latest is each artifact's latest version in the session.
func latest(t *testing.T, store *fileartifact.Service, sessionID string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	list, err := store.List(ctx, &artifact.ListRequest{AppName: appName, UserID: userID, SessionID: sessionID})
	require.NoError(t, err)
	out := map[string]int64{}
	for _, name := range list.FileNames {
		vs, err := store.Versions(ctx, &artifact.VersionsRequest{AppName: appName, UserID: userID, SessionID: sessionID, FileName: name})
		require.NoError(t, err)
		out[name] = vs.Versions[0]
	}
	return out
}

// TestCrashBetweenSavesOfOneRun: an agent killed (SIGKILL) between saving
// two files of one run. What the store then holds is documented here:
// the files saved before the kill are new versions, complete; the others
// keep the versions of the run before; nothing marks the run as partial,
// and the function response never reached the session. Opening the store
// leaves no temporary folder, and the next run saves every file again,
// one version further on.
func TestCrashBetweenSavesOfOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a helper process")
	}
	dir := t.TempDir()
	store, err := fileartifact.New(dir)
	require.NoError(t, err)
	h := newHarness(t, harnessConfig{artifacts: store, steps: []scripted.Step{call("run_skill_script", reportArgs), say("done")}})
	_, resp := responseEvent(t, h.say("write the report"), "run_skill_script")
	files := outputs(t, resp)
	require.Len(t, files, 3, "report-writer writes three files")
	complete := latest(t, store, h.sessionID)
	for name, v := range complete {
		assert.EqualValues(t, 1, v, name)
	}

	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=partial", helperStore+"="+dir, helperSession+"="+h.sessionID)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	require.Error(t, err)
	require.Contains(t, err.Error(), "killed", "the helper dies by SIGKILL: %s", stderr.String())

	reopened, err := fileartifact.New(dir)
	require.NoError(t, err)
	after := latest(t, reopened, h.sessionID)
	var advanced []string
	for name, v := range after {
		switch v {
		case 2:
			advanced = append(advanced, name)
		case 1:
		default:
			t.Errorf("%s is at version %d", name, v)
		}
	}
	require.Len(t, advanced, 1, "exactly the file saved before the kill has a new version: %v", after)
	part, err := reopened.Load(context.Background(), &artifact.LoadRequest{AppName: appName, UserID: userID, SessionID: h.sessionID, FileName: advanced[0]})
	require.NoError(t, err)
	old, err := reopened.Load(context.Background(), &artifact.LoadRequest{AppName: appName, UserID: userID, SessionID: h.sessionID, FileName: advanced[0], Version: 1})
	require.NoError(t, err)
	assert.Equal(t, old.Part.InlineData.Data, part.Part.InlineData.Data, "the saved file is complete (the same script, the same bytes)")
	t.Logf("after the kill the latest versions are %v: %s comes from the killed run, the rest from the one before", after, advanced[0])

	// No temporary folder is left, and the store goes on.
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".") {
			t.Errorf("leftover %s", p)
		}
		return err
	})
	require.NoError(t, err)
	// The next run in the session saves every file again, one version on.
	next := newHarness(t, harnessConfig{artifacts: reopened, sessionID: h.sessionID, steps: []scripted.Step{call("run_skill_script", reportArgs), say("done")}})
	_, resp = responseEvent(t, next.say("again"), "run_skill_script")
	for _, f := range outputs(t, resp) {
		want := after[f["artifact"].(string)] + 1
		assert.EqualValues(t, want, f["version"], "%s", f["artifact"])
	}
	names := slices.Sorted(maps.Keys(after))
	assert.ElementsMatch(t, names, []string{runscript.ArtifactName("report.md"), runscript.ArtifactName("badge.png"), runscript.ArtifactName("dist/data/summary.json")})
}
