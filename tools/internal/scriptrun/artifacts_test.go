package scriptrun

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/adktest"
)

// responseKeys and entryKeys are the whole model-facing shape: a key added
// by mistake (file bytes, a host path) fails these tests.
var (
	responseKeys = []string{"exit_code", "output_files", "status", "stderr", "stdout", "timed_out"}
	entryKeys    = []string{"artifact", "mime_type", "name", "size_bytes", "version"}
)

func sortedKeys[M ~map[string]V, V any](m M) []string {
	return slices.Sorted(maps.Keys(m))
}

// failingService fails saves of the names in fail and delegates the rest.
type failingService struct {
	artifact.Service
	fail map[string]bool
}

func (s *failingService) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	if s.fail[req.FileName] {
		return nil, errors.New("disk on fire at /srv/secret/path")
	}
	return s.Service.Save(ctx, req)
}

func logTo(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, nil))
}

func TestRespondSavesFilesAsArtifacts(t *testing.T) {
	svc := artifact.InMemoryService()
	tc, sessionID := adktest.ToolContext(t, svc, "inv")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00binary\xff")
	res := &codeexec.Result{
		ExitCode: 0,
		Stdout:   codeexec.Stream{Text: "out"},
		Stderr:   codeexec.Stream{Text: "warn: on stderr"},
		Files: []codeexec.File{
			{Path: "chart.png", Data: png},
			{Path: "dist/b64.bin", Data: []byte(base64.StdEncoding.EncodeToString(png)), Encoding: codeexec.EncodingBase64},
			{Path: "looks-like-base64.txt", Data: []byte("aGVsbG8="), Encoding: codeexec.EncodingUTF8},
			{Path: "user:escape.txt", Data: []byte("session scoped")},
		},
	}
	r := &Runner{}
	resp := r.respond(tc, r.ToolSession(tc), res, nil).Map()
	assert.Equal(t, responseKeys, sortedKeys(resp), "a clean run has no warning")
	assert.Equal(t, StatusSuccess, resp["status"], "stderr output does not make a run fail")
	files := resp["output_files"].([]map[string]any)
	require.Len(t, files, len(res.Files))
	want := map[string][]byte{
		"chart.png":             png,
		"dist/b64.bin":          png, // decoded once
		"looks-like-base64.txt": []byte("aGVsbG8="),
		"user:escape.txt":       []byte("session scoped"),
	}
	for _, e := range files {
		assert.Equal(t, entryKeys, sortedKeys(e))
		name := e["name"].(string)
		art := e["artifact"].(string)
		assert.Equal(t, ArtifactName(name), art)
		assert.Equal(t, int64(1), e["version"])
		assert.Equal(t, int64(len(want[name])), e["size_bytes"])
		got, err := svc.Load(context.Background(), &artifact.LoadRequest{AppName: adktest.App, UserID: adktest.User, SessionID: sessionID, FileName: art})
		require.NoError(t, err)
		assert.Equal(t, want[name], got.Part.InlineData.Data, name)
		assert.Equal(t, e["mime_type"], got.Part.InlineData.MIMEType)
		assert.Equal(t, int64(1), tc.Actions().ArtifactDelta[art], "the save is recorded in the event's artifact delta")
	}
	assert.Equal(t, "image/png", files[0]["mime_type"])

	// Nothing landed in user scope: another session of the user sees nothing.
	other, err := svc.List(context.Background(), &artifact.ListRequest{AppName: adktest.App, UserID: adktest.User, SessionID: "another"})
	require.NoError(t, err)
	assert.Empty(t, other.FileNames)

	// A repeat run is version 2 of the same artifacts.
	again := r.respond(tc, r.ToolSession(tc), res, nil).Map()
	for _, e := range again["output_files"].([]map[string]any) {
		assert.Equal(t, int64(2), e["version"])
	}
}

func TestRespondPartialSaveFailure(t *testing.T) {
	var logs bytes.Buffer
	svc := &failingService{Service: artifact.InMemoryService(), fail: map[string]bool{"b.txt": true, "d∕e.txt": true}}
	tc, _ := adktest.ToolContext(t, svc, "inv")
	var files []codeexec.File
	for _, p := range []string{"a.txt", "b.txt", "c.txt", "d/e.txt"} {
		files = append(files, codeexec.File{Path: p, Data: []byte(p)})
	}
	r := &Runner{Config: Config{Logger: logTo(&logs)}}
	resp := r.respond(tc, r.ToolSession(tc), &codeexec.Result{Files: files}, nil).Map()
	saved := resp["output_files"].([]map[string]any)
	var names []string
	for _, e := range saved {
		names = append(names, e["name"].(string))
	}
	assert.Equal(t, []string{"a.txt", "c.txt"}, names, "the other saves still land")
	w := resp["warning"].(string)
	assert.Contains(t, w, "2 of 4 output file(s) could not be saved: b.txt, d/e.txt")
	assert.NotContains(t, w, "disk on fire", "reasons go to the log only")
	assert.Contains(t, logs.String(), "disk on fire")
	assert.Equal(t, map[string]int64{"a.txt": 1, "c.txt": 1}, tc.Actions().ArtifactDelta)
}

func TestRespondWithoutArtifactService(t *testing.T) {
	var logs bytes.Buffer
	r := &Runner{Config: Config{Logger: logTo(&logs)}}
	for range 2 {
		tc, _ := adktest.ToolContext(t, nil, "inv")
		resp := r.respond(tc, r.ToolSession(tc), &codeexec.Result{Files: []codeexec.File{{Path: "out/x.csv", Data: []byte("a,b\n")}}}, nil).Map()
		assert.Equal(t, append(slices.Clone(responseKeys), "warning"), sortedKeys(resp))
		assert.Contains(t, resp["warning"], "no artifact service is configured: 1 output file(s)")
		files := resp["output_files"].([]map[string]any)
		require.Len(t, files, 1)
		assert.Equal(t, []string{"mime_type", "name", "size_bytes"}, sortedKeys(files[0]))
		assert.Equal(t, "out/x.csv", files[0]["name"])
		assert.Equal(t, int64(len("a,b\n")), files[0]["size_bytes"])
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "no artifact service"), "logged once per runner")
}

func TestRespondWarnings(t *testing.T) {
	tc, _ := adktest.ToolContext(t, artifact.InMemoryService(), "inv")
	var omitted []codeexec.OmittedFile
	for i := range maxWarnings + 2 {
		omitted = append(omitted, codeexec.OmittedFile{Path: "big" + strings.Repeat("x", i) + ".bin", Reason: "over the per-file limit"})
	}
	bad := codeexec.File{Path: "bad.b64", Data: []byte("!!!not base64"), Encoding: codeexec.EncodingBase64}
	r := &Runner{Config: Config{Logger: logTo(&bytes.Buffer{})}}
	resp := r.respond(tc, r.ToolSession(tc), &codeexec.Result{Files: []codeexec.File{bad}, Omitted: omitted}, nil).Map()
	w := resp["warning"].(string)
	assert.Contains(t, w, "1 of 1 output file(s) could not be saved: bad.b64")
	assert.Contains(t, w, "big.bin was not saved: over the per-file limit")
	assert.Contains(t, w, "and 3 more problem(s)", "warnings are bounded: %d omitted + 1 failure over %d", len(omitted), maxWarnings)
	assert.Empty(t, resp["output_files"])
}

func TestStatus(t *testing.T) {
	cases := []struct {
		res  codeexec.Result
		want string
	}{
		{codeexec.Result{}, StatusSuccess},
		{codeexec.Result{ExitCode: 1}, StatusError},
		{codeexec.Result{ExitCode: 137}, StatusError},
		{codeexec.Result{ExitCode: 137, TimedOut: true}, StatusTimeout},
		{codeexec.Result{TimedOut: true}, StatusTimeout},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, status(&c.res), "%+v", c.res)
	}
}

func TestJoinWarnings(t *testing.T) {
	var ws []string
	for i := range maxWarnings + 1 {
		ws = append(ws, string(rune('a'+i)))
	}
	assert.Equal(t, strings.Join(ws[:maxWarnings], "; "), joinWarnings(ws[:maxWarnings]), "exactly at the bound nothing is elided")
	assert.Equal(t, strings.Join(ws[:maxWarnings], "; ")+"; and 1 more problem(s)", joinWarnings(ws))
}

func TestJoinNames(t *testing.T) {
	var names []string
	for i := range maxWarnings + 3 {
		names = append(names, string(rune('a'+i)))
	}
	assert.Equal(t, "a, b", joinNames(names[:2]))
	assert.Equal(t, strings.Join(names[:maxWarnings], ", "), joinNames(names[:maxWarnings]))
	assert.Equal(t, strings.Join(names[:maxWarnings], ", ")+" and 3 more", joinNames(names))
}

// TestRespondBoundsTheResponse: a run that writes the most files the limits
// allow, each with a path as long as the executor keeps, gets a response
// bounded like one stream, which says what it does not list; every file
// is saved all the same.
func TestRespondBoundsTheResponse(t *testing.T) {
	svc := artifact.InMemoryService()
	tc, sessionID := adktest.ToolContext(t, svc, "inv")
	const files = codeexec.DefaultMaxOutputFiles
	pathLen := 1000 // under codeexec's bound on output paths
	var res codeexec.Result
	var omitted []codeexec.OmittedFile
	for i := range files {
		p := fmt.Sprintf("%03d/%s", i, strings.Repeat("d", pathLen-4))
		res.Files = append(res.Files, codeexec.File{Path: p, Data: []byte("x")})
		omitted = append(omitted, codeexec.OmittedFile{Path: p + ".big", Reason: "larger than the limit"})
	}
	res.Omitted = omitted
	for _, tt := range []struct {
		budget  int
		wantCut bool // ten warnings of a thousand characters do not fit
	}{{0, false}, {2_000, true}} {
		budget := tt.budget
		r := &Runner{Config: Config{Limits: codeexec.Limits{MaxOutputChars: budget}}}
		resp := r.respond(tc, r.ToolSession(tc), &res, nil)
		cap := codeexec.Limits{MaxOutputChars: budget}.WithDefaults().MaxOutputChars
		b, err := json.Marshal(resp)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), 3*cap, "budget %d: the response is bounded like the streams", cap)
		assert.Less(t, len(resp.OutputFiles), files, "budget %d", cap)
		assert.Contains(t, resp.Warning, fmt.Sprintf("%d more output file(s) are not listed here", files-len(resp.OutputFiles)))
		assert.Equal(t, tt.wantCut, strings.Contains(resp.Warning, "truncated"), "budget %d: the warning says when it was cut", cap)
		assert.LessOrEqual(t, utf8.RuneCountInString(resp.Warning), cap+200, "budget %d: the warning is cut at the budget, plus the marker", cap)
	}
	list, err := svc.List(context.Background(), &artifact.ListRequest{AppName: adktest.App, UserID: adktest.User, SessionID: sessionID})
	require.NoError(t, err)
	assert.Len(t, list.FileNames, files, "every file is saved, listed or not")
}
