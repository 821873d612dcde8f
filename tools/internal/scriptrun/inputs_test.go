package scriptrun_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/adktest"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// listScript prints every file of its working directory but its own skill's
// (path and SHA-256, sorted), appends "!" to each file its arguments name,
// and prints the working directory's name.
const listScript = `import hashlib, os, sys
own = {"SKILL.md", "scripts/ls.py"}
out = []
for root, dirs, files in os.walk("."):
    for f in files:
        p = os.path.relpath(os.path.join(root, f), ".")
        if p not in own:
            out.append(p + " " + hashlib.sha256(open(p, "rb").read()).hexdigest())
for line in sorted(out):
    print(line)
for a in sys.argv[1:]:
    open(a, "ab").write(b"!")
print("cwd", os.path.basename(os.getcwd()))
`

// inputsSkills is a skills folder with the skill "inputs", whose
// scripts/ls.py is listScript.
func inputsSkills(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range map[string]string{
		"inputs/SKILL.md":      "---\nname: inputs\ndescription: Lists the files it is given.\n---\n",
		"inputs/scripts/ls.py": listScript,
	} {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return dir
}

// countingStore counts the loads that reach the artifact service. A name
// in uri loads as a part referring to a file by URI, as a store other than
// ADK's might answer.
type countingStore struct {
	artifact.Service
	loads atomic.Int64
	uri   map[string]bool
}

func (s *countingStore) Load(ctx context.Context, req *artifact.LoadRequest) (*artifact.LoadResponse, error) {
	s.loads.Add(1)
	if s.uri[req.FileName] {
		return &artifact.LoadResponse{Part: &genai.Part{FileData: &genai.FileData{FileURI: "gs://bucket/" + req.FileName}}}, nil
	}
	return s.Service.Load(ctx, req)
}

// inputsFixture is the inputs skill's tools over one session's store.
type inputsFixture struct {
	t       testing.TB
	store   *countingStore
	session *adktest.Session
	tool    runner
	inline  runner
	exec    *countingExec
}

// countingExec counts the runs that reach the executor.
type countingExec struct {
	codeexec.Executor
	runs atomic.Int64
}

func (c *countingExec) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	c.runs.Add(1)
	return c.Executor.Execute(ctx, req)
}

func newInputsFixture(t testing.TB, limits codeexec.FileLimits) *inputsFixture {
	t.Helper()
	f := &inputsFixture{t: t, store: &countingStore{Service: artifact.InMemoryService()}, exec: &countingExec{Executor: local.New()}}
	f.session = adktest.NewSession(t, f.store)
	cfg := runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(inputsSkills(t))), Executor: f.exec, InputLimits: limits}
	tl, err := runscript.New(cfg)
	require.NoError(t, err)
	f.tool = tl.(runner)
	il, err := runinline.New(cfg)
	require.NoError(t, err)
	f.inline = il.(runner)
	return f
}

// save stores an artifact in the fixture's session (a "user:" name lands in
// user scope, as ADK does).
func (f *inputsFixture) save(name string, part *genai.Part) {
	f.t.Helper()
	_, err := f.store.Service.Save(context.Background(), &artifact.SaveRequest{
		AppName: adktest.App, UserID: adktest.User, SessionID: f.session.ID(), FileName: name, Part: part,
	})
	require.NoError(f.t, err)
}

// contents is every artifact the session sees with its versions, to show
// that a refused call changed nothing.
func (f *inputsFixture) contents() map[string][]int64 {
	f.t.Helper()
	ctx := context.Background()
	list, err := f.store.List(ctx, &artifact.ListRequest{AppName: adktest.App, UserID: adktest.User, SessionID: f.session.ID()})
	require.NoError(f.t, err)
	out := map[string][]int64{}
	for _, n := range list.FileNames {
		vs, err := f.store.Versions(ctx, &artifact.VersionsRequest{AppName: adktest.App, UserID: adktest.User, SessionID: f.session.ID(), FileName: n})
		require.NoError(f.t, err)
		out[n] = vs.Versions
	}
	return out
}

// run calls run_skill_script on the inputs skill.
func (f *inputsFixture) run(inv string, inputs []any, args ...any) (map[string]any, adkglue.ToolContext) {
	f.t.Helper()
	tc := f.session.ToolContext(inv, nil)
	resp, err := f.tool.Run(tc, map[string]any{"skill_name": "inputs", "script_path": "scripts/ls.py", "input_files": inputs, "args": args})
	require.NoError(f.t, err)
	return resp, tc
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func blob(data []byte) *genai.Part {
	return &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: "application/octet-stream"}}
}

// TestInputFilesAreStaged passes in an upload, a text artifact and, by glob,
// a tree an earlier run wrote (binary included): each is at its path, byte
// for byte, in a folder named after the skill. Unchanged, none is an output;
// the one the script changes comes back as the next version of its
// artifact.
func TestInputFilesAreStaged(t *testing.T) {
	f := newInputsFixture(t, codeexec.FileLimits{})
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	doc := []byte("<w:document>Hello</w:document>")
	f.save("artifact_e-1_0", blob([]byte("PK\x03\x04 an upload")))
	f.save("notes.txt", genai.NewPartFromText("text part, ünïcödé"))
	f.save(runscript.ArtifactName("unpacked/word/media/image1.png"), blob(binary))
	f.save(runscript.ArtifactName("unpacked/word/document.xml"), blob(doc))
	f.save("user:profile.txt", genai.NewPartFromText("the user's, not the session's"))

	resp, _ := f.run("inv-1", []any{"artifact_e-1_0", "notes.txt", "unpacked/**"})
	require.Equal(t, "success", resp["status"], resp)
	assert.Equal(t, strings.Join([]string{
		"artifact_e-1_0 " + sum([]byte("PK\x03\x04 an upload")),
		"notes.txt " + sum([]byte("text part, ünïcödé")),
		"unpacked/word/document.xml " + sum(doc),
		"unpacked/word/media/image1.png " + sum(binary),
		"cwd inputs",
	}, "\n")+"\n", resp["stdout"], "each input at its path, byte for byte; the folder keeps the skill's name")
	assert.Empty(t, resp["output_files"], "unchanged inputs are not outputs")

	resp, tc := f.run("inv-2", []any{"unpacked/word/document.xml"}, "unpacked/word/document.xml")
	require.Equal(t, "success", resp["status"], resp)
	files := resp["output_files"].([]map[string]any)
	require.Len(t, files, 1)
	assert.Equal(t, "unpacked/word/document.xml", files[0]["name"])
	assert.Equal(t, "unpacked∕word∕document.xml", files[0]["artifact"])
	assert.Equal(t, int64(2), files[0]["version"], "a changed input is the next version of the same artifact")
	assert.Equal(t, map[string]int64{"unpacked∕word∕document.xml": 2}, tc.Actions().ArtifactDelta)
	got, err := f.store.Load(context.Background(), &artifact.LoadRequest{AppName: adktest.App, UserID: adktest.User, SessionID: f.session.ID(), FileName: "unpacked∕word∕document.xml"})
	require.NoError(t, err)
	assert.Equal(t, append(slices.Clone(doc), '!'), got.Part.InlineData.Data)
}

// TestHostileInputFiles: every entry that cannot be passed in is
// INVALID_ARGUMENTS naming it; the script does not run, nothing is loaded
// past the limits, and the session's files are as they were.
func TestHostileInputFiles(t *testing.T) {
	big := make([]byte, codeexec.DefaultMaxOutputFileBytes+1)
	cases := []struct {
		name   string
		limits codeexec.FileLimits
		saved  map[string]*genai.Part
		inputs []any
		msg    string
	}{
		{name: "traversal", inputs: []any{"../inputs/SKILL.md"}, msg: `input_files[0] "../inputs/SKILL.md": path "../inputs/SKILL.md" leaves the skill folder with ".."`},
		{name: "traversal inside", inputs: []any{"a/../../x"}, msg: `input_files[0] "a/../../x": path "a/../../x" leaves the skill folder`},
		{name: "absolute", inputs: []any{"/etc/passwd"}, msg: `input_files[0] "/etc/passwd": path "/etc/passwd" is absolute`},
		{name: "a backslash", inputs: []any{`..\x`}, msg: "backslash"},
		{name: "the skill folder", inputs: []any{"."}, msg: "names the skill folder itself"},
		{name: "a name that decodes to ..", saved: map[string]*genai.Part{runscript.ArtifactName(".."): blob([]byte("x"))},
			inputs: []any{runscript.ArtifactName("..")}, msg: `input_files[0] "~2E~2E": artifact "~2E~2E" cannot be passed in: it stands for the path ".."`},
		{name: "a name that decodes to a climb", saved: map[string]*genai.Part{runscript.ArtifactName("a/../../etc/passwd"): blob([]byte("x"))},
			inputs: []any{runscript.ArtifactName("a/../../etc/passwd")}, msg: `it stands for the path "a/../../etc/passwd", which cannot be staged`},
		{name: "an old name that decodes to a climb", saved: map[string]*genai.Part{"..%2Fx": blob([]byte("x"))},
			inputs: []any{"..%2Fx"}, msg: `artifact "..%2Fx" cannot be passed in: it stands for the path "../x"`},
		{name: "globs skip names that climb", saved: map[string]*genai.Part{runscript.ArtifactName(".."): blob([]byte("x")), "..%2Fx": blob([]byte("x"))},
			inputs: []any{"*"}, msg: `input_files[0] "*": the glob matches no file path of this session`},
		{name: "matches nothing", saved: map[string]*genai.Part{"a.txt": blob([]byte("a"))}, inputs: []any{"a.txt", "b.txt"}, msg: `input_files[1] "b.txt": no artifact of this session has that name or path`},
		{name: "a glob matching nothing", inputs: []any{"unpacked/**"}, msg: `input_files[0] "unpacked/**": the glob matches no file path`},
		{name: "a malformed glob", inputs: []any{"a["}, msg: `input_files[0] "a[": malformed glob`},
		{name: "a user-scoped artifact", saved: map[string]*genai.Part{"user:secret.txt": blob([]byte("s"))},
			inputs: []any{"user:secret.txt"}, msg: `input_files[0] "user:secret.txt": artifact "user:secret.txt" cannot be passed in: it is a user-scoped artifact`},
		{name: "globs never select user-scoped artifacts", saved: map[string]*genai.Part{"user:secret.txt": blob([]byte("s"))},
			inputs: []any{"*"}, msg: `input_files[0] "*": the glob matches no file path`},
		{name: "a skill file", saved: map[string]*genai.Part{"SKILL.md": blob([]byte("---\nname: evil\n---\n"))},
			inputs: []any{"SKILL.md"}, msg: `input_files[0] "SKILL.md": would replace the file "SKILL.md" the run already has`},
		{name: "the script itself", saved: map[string]*genai.Part{runscript.ArtifactName("scripts/ls.py"): blob([]byte("print('replaced')"))},
			inputs: []any{"scripts/**"}, msg: `input_files[0] "scripts/**": would replace the file "scripts/ls.py"`},
		{name: "a skill folder", saved: map[string]*genai.Part{"scripts": blob([]byte("x"))},
			inputs: []any{"scripts"}, msg: `input_files[0] "scripts": would replace the folder "scripts" of the skill`},
		{name: "a file over the size limit", saved: map[string]*genai.Part{"big.bin": blob(big)},
			inputs: []any{"big.bin"}, msg: fmt.Sprintf(`input_files[0] "big.bin": artifact "big.bin" is %d bytes; an input file may have at most %d`, len(big), codeexec.DefaultMaxOutputFileBytes)},
		{name: "over the total", limits: codeexec.FileLimits{MaxTotalBytes: 3}, saved: map[string]*genai.Part{"a": blob([]byte("aa")), "b": blob([]byte("bb"))},
			inputs: []any{"a", "b"}, msg: `input_files[1] "b": with artifact "b" the input files are over 3 bytes in all`},
		{name: "over the count", limits: codeexec.FileLimits{MaxFiles: 2}, saved: map[string]*genai.Part{"a": blob(nil), "b": blob(nil), "c": blob(nil)},
			inputs: []any{"*"}, msg: `input_files[0] "*": selects more than 2 files; at most 2 can be passed in one run`},
		{name: "more entries than files", limits: codeexec.FileLimits{MaxFiles: 1}, inputs: []any{"a", "b"}, msg: `argument "input_files" has 2 entries; at most 1 files`},
		{name: "not strings", inputs: []any{1.0}, msg: `argument "input_files[0]" must be a string`},
		{name: "a file inside another input", saved: map[string]*genai.Part{"out": blob(nil), runscript.ArtifactName("out/x"): blob(nil)},
			inputs: []any{"**"}, msg: `stages "out/x" inside "out"`},
		{name: "a URI", saved: map[string]*genai.Part{"remote.pdf": blob(nil)},
			inputs: []any{"remote.pdf"}, msg: `artifact "remote.pdf" refers to a file by URI`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newInputsFixture(t, c.limits)
			f.store.uri = map[string]bool{"remote.pdf": true}
			for n, p := range c.saved {
				f.save(n, p)
			}
			before := f.contents()
			resp, tc := f.run("inv", c.inputs)
			assert.Equal(t, runscript.CodeInvalidArguments, resp["error_code"], resp)
			assert.Contains(t, resp["error"], c.msg)
			assert.Zero(t, f.exec.runs.Load(), "the script did not run")
			assert.Equal(t, before, f.contents(), "the session's files are as they were")
			assert.Empty(t, tc.Actions().ArtifactDelta)
		})
	}
}

// TestGlobOverTenThousandArtifacts: a glob over more files than a run may
// take is refused from the listing alone, before any is loaded.
func TestGlobOverTenThousandArtifacts(t *testing.T) {
	const n = 10_000
	f := newInputsFixture(t, codeexec.FileLimits{})
	for i := range n {
		f.save(runscript.ArtifactName(fmt.Sprintf("many/f%05d.txt", i)), blob([]byte("x")))
	}
	start := time.Now()
	resp, _ := f.run("inv", []any{"many/**"})
	elapsed := time.Since(start)
	assert.Equal(t, runscript.CodeInvalidArguments, resp["error_code"], resp)
	assert.Contains(t, resp["error"], fmt.Sprintf(`input_files[0] "many/**": selects more than %d files`, codeexec.DefaultMaxOutputFiles))
	assert.Zero(t, f.store.loads.Load(), "no artifact was loaded to find out")
	assert.Zero(t, f.exec.runs.Load())
	assert.Less(t, elapsed, 5*time.Second)
}

// TestInputFilesWithoutArtifactService: with no store there is nothing to
// pass in, and the model is told why.
func TestInputFilesWithoutArtifactService(t *testing.T) {
	exec := &countingExec{Executor: local.New()}
	tl, err := runscript.New(runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(inputsSkills(t))), Executor: exec})
	require.NoError(t, err)
	tc, _ := adktest.ToolContext(t, nil, "inv")
	resp, err := tl.(runner).Run(tc, map[string]any{"skill_name": "inputs", "script_path": "scripts/ls.py", "input_files": []any{"a.txt"}})
	require.NoError(t, err)
	assert.Equal(t, runscript.CodeInvalidArguments, resp["error_code"])
	assert.Contains(t, resp["error"], "no artifact service")
	assert.Zero(t, exec.runs.Load())
}

// TestInlineInputFiles: the inline tool takes input_files too. A bad entry
// is refused before a human is asked; the hint names the entries; the
// approved run sees the files and does not report them unchanged.
func TestInlineInputFiles(t *testing.T) {
	f := newInputsFixture(t, codeexec.FileLimits{})
	f.save("data.csv", blob([]byte("a,b\n1,2\n")))
	bad := map[string]any{"language": "python", "script": "print(1)", "input_files": []any{"nope.csv"}}
	tc := f.session.ToolContext("inv-bad", nil)
	resp, err := f.inline.Run(tc, bad)
	require.NoError(t, err)
	assert.Equal(t, runscript.CodeInvalidArguments, resp["error_code"])
	assert.Contains(t, resp["error"], `input_files[0] "nope.csv"`)
	assert.Empty(t, tc.Actions().RequestedToolConfirmations, "no human is asked to approve a call that cannot run")

	collide := map[string]any{"language": "python", "script": "print(1)", "input_files": []any{"SKILL.md"}, "skill_name": "inputs"}
	f.save("SKILL.md", blob([]byte("x")))
	resp, err = f.inline.Run(f.session.ToolContext("inv-collide", nil), collide)
	require.NoError(t, err)
	assert.Contains(t, resp["error"], `would replace the file "SKILL.md"`)

	call := map[string]any{"language": "python", "script": "print(open('data.csv').read(), end='')", "input_files": []any{"*.csv"}}
	tc = f.session.ToolContext("inv-ask", nil)
	_, err = f.inline.Run(tc, call)
	require.ErrorIs(t, err, tool.ErrConfirmationRequired)
	asked := tc.Actions().RequestedToolConfirmations["call-1"]
	assert.Contains(t, asked.Hint, `input files (from this session, latest versions): ["*.csv"]`)
	resumed := f.session.ToolContext("inv-resumed", &toolconfirmation.ToolConfirmation{Confirmed: true, Payload: asked.Payload})
	resp, err = f.inline.Run(resumed, call)
	require.NoError(t, err)
	require.Equal(t, "success", resp["status"], resp)
	assert.Equal(t, "a,b\n1,2\n", resp["stdout"])
	assert.Empty(t, resp["output_files"])
}

// TestSessionFiles lists what input_files can pass in: by path, the
// current name kept, user scope and names that climb left out.
func TestSessionFiles(t *testing.T) {
	f := newInputsFixture(t, codeexec.FileLimits{})
	for _, n := range []string{"dist∕a.zip", "dist%2Fa.zip", "artifact_e-1_0", "user:secret.txt", runscript.ArtifactName("..")} {
		f.save(n, blob(nil))
	}
	files, err := runscript.SessionFiles(context.Background(), adkglue.Artifacts(f.session.ToolContext("inv", nil)))
	require.NoError(t, err)
	assert.Equal(t, []runscript.SessionFile{{Path: "artifact_e-1_0", Artifact: "artifact_e-1_0"}, {Path: "dist/a.zip", Artifact: "dist∕a.zip"}}, files)
	files, err = runscript.SessionFiles(context.Background(), nil)
	assert.NoError(t, err)
	assert.Empty(t, files)
}
