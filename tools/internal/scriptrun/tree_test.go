package scriptrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/local"
	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/adktest"
	"github.com/adkskills/adkskills/skilltoolset"
	"github.com/adkskills/adkskills/tools/runinline"
	"github.com/adkskills/adkskills/tools/runscript"
)

// changeScript prints the files it was given (sorted), then applies each
// argument: "rm:P" deletes P, "mv:A:B" renames A to B (making B's folder),
// "write:P:TEXT" writes P, "rmtree:P" removes a folder, "wipe" empties the
// working directory.
const changeScript = `import os, shutil, sys
files = []
for root, dirs, names in os.walk("."):
    for n in names:
        p = os.path.relpath(os.path.join(root, n), ".")
        if not p.startswith(("scripts", "SKILL.md")):
            files.append(p)
print(" ".join(sorted(files)))
for a in sys.argv[1:]:
    op, _, rest = a.partition(":")
    if op == "rm":
        os.remove(rest)
    elif op == "mv":
        src, dst = rest.split(":")
        os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
        os.rename(src, dst)
    elif op == "write":
        p, text = rest.split(":")
        os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
        open(p, "w").write(text)
    elif op == "rmtree":
        shutil.rmtree(rest)
    elif op == "wipe":
        for n in os.listdir("."):
            shutil.rmtree(n) if os.path.isdir(n) else os.remove(n)
`

// treeFixture is the "tree" skill's tools over one session of a store.
type treeFixture struct {
	t       testing.TB
	store   artifact.Service
	session *adktest.Session
	tool    runner
	inline  runner
}

func newTreeFixture(t testing.TB, store artifact.Service, exec codeexec.Executor, limits codeexec.FileLimits) *treeFixture {
	t.Helper()
	dir := t.TempDir()
	for p, content := range map[string]string{
		"tree/SKILL.md":          "---\nname: tree\ndescription: Changes the tree it is given.\n---\n",
		"tree/scripts/change.py": changeScript,
	} {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	if exec == nil {
		exec = local.New()
	}
	f := &treeFixture{t: t, store: store, session: adktest.NewSession(t, store)}
	cfg := runscript.Config{Source: skilltoolset.NewFSSource(os.DirFS(dir)), Executor: exec, InputLimits: limits}
	tl, err := runscript.New(cfg)
	require.NoError(t, err)
	f.tool = tl.(runner)
	il, err := runinline.New(cfg)
	require.NoError(t, err)
	f.inline = il.(runner)
	return f
}

func (f *treeFixture) save(path, content string) {
	f.t.Helper()
	_, err := f.store.Save(context.Background(), &artifact.SaveRequest{AppName: adktest.App, UserID: adktest.User, SessionID: f.session.ID(),
		FileName: runscript.ArtifactName(path), Part: blob([]byte(content))})
	require.NoError(f.t, err)
}

// run calls run_skill_script on the tree skill and returns the response.
func (f *treeFixture) run(inputs []any, args ...any) map[string]any {
	f.t.Helper()
	resp, err := f.tool.Run(f.session.ToolContext("inv", nil), map[string]any{"skill_name": "tree", "script_path": "scripts/change.py", "input_files": inputs, "args": args})
	require.NoError(f.t, err)
	return resp
}

func (f *treeFixture) arts() adkglue.ToolContext { return f.session.ToolContext("list", nil) }

// tree is the session's current tree, by path.
func (f *treeFixture) tree() []string {
	f.t.Helper()
	files, err := runscript.SessionFiles(context.Background(), adkglue.Artifacts(f.arts()))
	require.NoError(f.t, err)
	out := []string{}
	for _, sf := range files {
		out = append(out, sf.Path)
	}
	return out
}

// deleted is the session's deleted files, path -> artifact.
func (f *treeFixture) deleted() map[string]string {
	f.t.Helper()
	files, err := runscript.DeletedFiles(context.Background(), adkglue.Artifacts(f.arts()))
	require.NoError(f.t, err)
	out := map[string]string{}
	for _, sf := range files {
		out[sf.Path] = sf.Artifact
	}
	return out
}

func (f *treeFixture) load(name string, version int64) string {
	f.t.Helper()
	got, err := f.store.Load(context.Background(), &artifact.LoadRequest{AppName: adktest.App, UserID: adktest.User, SessionID: f.session.ID(), FileName: name, Version: version})
	require.NoError(f.t, err)
	return string(got.Part.InlineData.Data)
}

// deletedOf is a response's deleted_files, name -> artifact.
func deletedOf(resp map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := resp["deleted_files"].([]map[string]any)
	for _, e := range list {
		out[e["name"].(string)] = fmt.Sprint(e["artifact"])
	}
	return out
}

func namesOf(resp map[string]any) []string {
	out := []string{}
	for _, e := range resp["output_files"].([]map[string]any) {
		out = append(out, e["name"].(string))
	}
	return out
}

// TestDeletionsLeaveTheTree: a run that deletes an input and renames
// another reports both in deleted_files (the renamed one as an output too);
// the session's tree no longer has them, so paths and globs no longer select
// them, while their versions stay loadable and their names still pass them
// in; a later run that writes a path puts it back. The same with ADK's
// in-memory store and the file store.
func TestDeletionsLeaveTheTree(t *testing.T) {
	stores := map[string]func(t *testing.T) artifact.Service{
		"inmemory": func(*testing.T) artifact.Service { return artifact.InMemoryService() },
		"file": func(t *testing.T) artifact.Service {
			s, err := fileartifact.New(t.TempDir())
			require.NoError(t, err)
			return s
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			f := newTreeFixture(t, newStore(t), nil, codeexec.FileLimits{})
			for _, p := range []string{"u/a.xml", "u/slide2.xml", "u/slide3.xml", "keep.txt"} {
				f.save(p, "content of "+p)
			}

			resp := f.run([]any{"u/**", "keep.txt"}, "rm:u/slide2.xml", "mv:u/slide3.xml:moved/slide3.xml")
			require.Equal(t, "success", resp["status"], resp)
			assert.Equal(t, "keep.txt u/a.xml u/slide2.xml u/slide3.xml\n", resp["stdout"])
			assert.Equal(t, map[string]string{"u/slide2.xml": "u∕slide2.xml", "u/slide3.xml": "u∕slide3.xml"}, deletedOf(resp))
			assert.Equal(t, []string{"moved/slide3.xml"}, namesOf(resp), "a rename is a deletion plus a new output")
			assert.Equal(t, []string{"keep.txt", "moved/slide3.xml", "u/a.xml"}, f.tree())
			assert.Equal(t, map[string]string{"u/slide2.xml": "u∕slide2.xml", "u/slide3.xml": "u∕slide3.xml"}, f.deleted())
			assert.Equal(t, "content of u/slide2.xml", f.load("u∕slide2.xml", 0), "the deleted file's versions stay")

			// The next run's glob gives the tree as the last run left it.
			resp = f.run([]any{"u/**", "**/*.xml"})
			assert.Equal(t, "moved/slide3.xml u/a.xml\n", resp["stdout"])
			assert.NotContains(t, resp, "deleted_files", "no deletion, no key")

			// A path, or a glob matching deleted files only, is refused and
			// says why.
			resp = f.run([]any{"u/slide2.xml"})
			assert.Equal(t, runscript.CodeInvalidArguments, resp["error_code"])
			assert.Contains(t, resp["error"], `a run deleted this file from the session; artifact "u∕slide2.xml" keeps its versions`)
			resp = f.run([]any{"u/slide[23].xml"})
			assert.Contains(t, resp["error"], "the glob matches no file path of this session (it matches 2 file(s) runs deleted)")

			// Its name still passes it in, and a run that leaves it in place
			// puts it back in the tree.
			resp = f.run([]any{"u∕slide2.xml"})
			require.Equal(t, "success", resp["status"], resp)
			assert.Equal(t, "u/slide2.xml\n", resp["stdout"])
			assert.Equal(t, []string{"keep.txt", "moved/slide3.xml", "u/a.xml", "u/slide2.xml"}, f.tree())

			// A run that writes a deleted path again puts it back as well.
			resp = f.run(nil, "write:u/slide3.xml:again")
			require.Equal(t, "success", resp["status"], resp)
			assert.Equal(t, []string{"keep.txt", "moved/slide3.xml", "u/a.xml", "u/slide2.xml", "u/slide3.xml"}, f.tree())
			assert.Empty(t, f.deleted())
			assert.Equal(t, "again", f.load("u∕slide3.xml", 0))
			assert.Equal(t, "content of u/slide3.xml", f.load("u∕slide3.xml", 1))
		})
	}
}

// TestDeletionIsRecordedInTheSession: the tree is read back from the
// artifact store alone, as another process (the command line, a restarted
// agent) reads it; the record is an artifact with its own versions, not a
// file of the tree, and cannot be passed in.
func TestDeletionIsRecordedInTheSession(t *testing.T) {
	store := artifact.InMemoryService()
	f := newTreeFixture(t, store, nil, codeexec.FileLimits{})
	f.save("a.txt", "a")
	f.save("b.txt", "b")
	tc := f.session.ToolContext("inv-del", nil)
	resp, err := f.tool.Run(tc, map[string]any{"skill_name": "tree", "script_path": "scripts/change.py", "input_files": []any{"*.txt"}, "args": []any{"rm:a.txt"}})
	require.NoError(t, err)
	require.Equal(t, "success", resp["status"], resp)
	assert.Equal(t, map[string]int64{runscript.DeletedArtifact: 1}, tc.Actions().ArtifactDelta, "the record's save is the call's artifact delta")

	other := adkglue.SessionArtifacts(store, adktest.App, adktest.User, f.session.ID())
	files, err := runscript.SessionFiles(context.Background(), other)
	require.NoError(t, err)
	assert.Equal(t, []runscript.SessionFile{{Path: "b.txt", Artifact: "b.txt"}}, files)
	assert.JSONEq(t, `{"deleted":["a.txt"]}`, f.load(runscript.DeletedArtifact, 1))

	resp = f.run([]any{runscript.DeletedArtifact})
	assert.Equal(t, runscript.CodeInvalidArguments, resp["error_code"], resp)
	assert.Contains(t, resp["error"], "no artifact of this session has that name or path")
}

// TestHostileDeletions: what the model or the executor cannot make the
// session forget. A script that deletes everything deletes only the inputs
// from the tree, never a skill file; paths an executor reports deleted that
// were not inputs (a skill file, the inline script, a path outside the
// root, an artifact not passed in) are ignored; a record under the
// record's name that is not one hides nothing.
func TestHostileDeletions(t *testing.T) {
	t.Run("DeletesEverything", func(t *testing.T) {
		f := newTreeFixture(t, artifact.InMemoryService(), nil, codeexec.FileLimits{})
		f.save("in/a.txt", "a")
		f.save("b.txt", "b")
		f.save("other.txt", "not passed in")
		resp := f.run([]any{"in/a.txt", "b.txt"}, "wipe")
		require.Equal(t, "success", resp["status"], resp)
		assert.Equal(t, map[string]string{"in/a.txt": "in∕a.txt", "b.txt": "b.txt"}, deletedOf(resp))
		assert.Equal(t, []string{"other.txt"}, f.tree())
	})
	t.Run("ExecutorReportsOtherPaths", func(t *testing.T) {
		lie := liar{Executor: local.New(), deleted: []string{"SKILL.md", "scripts/change.py", "../escape", "other.txt", "in/a.txt", "in/a.txt", runinline.InlineDir + "/script.py"}}
		f := newTreeFixture(t, artifact.InMemoryService(), lie, codeexec.FileLimits{})
		f.save("in/a.txt", "a")
		f.save("other.txt", "not passed in")
		resp := f.run([]any{"in/a.txt"})
		require.Equal(t, "success", resp["status"], resp)
		assert.Equal(t, map[string]string{"in/a.txt": "in∕a.txt"}, deletedOf(resp), "only the input it was given, once")
		assert.Equal(t, []string{"other.txt"}, f.tree())
	})
	t.Run("InlineScriptDeletesItself", func(t *testing.T) {
		f := newTreeFixture(t, artifact.InMemoryService(), nil, codeexec.FileLimits{})
		f.save("data.csv", "a,b")
		call := map[string]any{"language": "python", "script": "import os, sys\nos.remove(sys.argv[0])\nos.remove('data.csv')", "input_files": []any{"data.csv"}}
		resp := runApproved(t, f.inline, f.session, call)
		require.Equal(t, "success", resp["status"], resp)
		assert.Equal(t, map[string]string{"data.csv": "data.csv"}, deletedOf(resp), "the inline script is not a file of the session")
		assert.Empty(t, f.tree())
	})
	t.Run("MalformedRecord", func(t *testing.T) {
		store := artifact.InMemoryService()
		f := newTreeFixture(t, store, nil, codeexec.FileLimits{})
		f.save("a.txt", "a")
		for _, junk := range []string{"not json", `{"deleted":"a.txt"}`, `{"deleted":["../a.txt","a.txt"]}`} {
			_, err := store.Save(context.Background(), &artifact.SaveRequest{AppName: adktest.App, UserID: adktest.User, SessionID: f.session.ID(),
				FileName: runscript.DeletedArtifact, Part: genai.NewPartFromText(junk)})
			require.NoError(t, err)
			if strings.Contains(junk, `["`) {
				assert.Empty(t, f.tree(), "a well-formed record is read whoever saved it")
				continue
			}
			assert.Equal(t, []string{"a.txt"}, f.tree(), "%q hides nothing", junk)
		}
	})
}

// runApproved calls the inline tool and approves its script.
func runApproved(t *testing.T, inline runner, s *adktest.Session, call map[string]any) map[string]any {
	t.Helper()
	tc := s.ToolContext("inv-ask", nil)
	_, err := inline.Run(tc, call)
	require.Error(t, err)
	asked := tc.Actions().RequestedToolConfirmations["call-1"]
	resp, err := inline.Run(s.ToolContext("inv-run", &toolconfirmation.ToolConfirmation{Confirmed: true, Payload: asked.Payload}), call)
	require.NoError(t, err)
	return resp
}

// liar is an executor that reports deleted whatever it is told to.
type liar struct {
	codeexec.Executor
	deleted []string
}

func (l liar) Execute(ctx context.Context, req *codeexec.Request) (*codeexec.Result, error) {
	res, err := l.Executor.Execute(ctx, req)
	if res != nil {
		res.Deleted = l.deleted
	}
	return res, err
}

// TestThousandsOfDeletions: deleted_files is bounded like output_files,
// at the output cap, and a warning counts the rest; every deletion is
// recorded all the same.
func TestThousandsOfDeletions(t *testing.T) {
	n := codeexec.DefaultMaxOutputChars / 10 // entries of at least 10 characters: over the cap
	store := artifact.InMemoryService()
	f := newTreeFixture(t, store, nil, codeexec.FileLimits{MaxFiles: n})
	for i := range n {
		f.save(fmt.Sprintf("many/f%05d.txt", i), "x")
	}
	f.save("kept.txt", "k")
	resp := f.run([]any{"many/**"}, "rmtree:many")
	require.Equal(t, "success", resp["status"], resp)
	listed := deletedOf(resp)
	assert.NotEmpty(t, listed)
	assert.Less(t, len(listed), n)
	assert.Contains(t, resp["warning"], fmt.Sprintf("%d more deleted file(s) are not listed here: the list is bounded at %d characters", n-len(listed), codeexec.DefaultMaxOutputChars))
	body, err := json.Marshal(resp["deleted_files"])
	require.NoError(t, err)
	assert.LessOrEqual(t, utf8.RuneCount(body), codeexec.DefaultMaxOutputChars)
	assert.Equal(t, []string{"kept.txt"}, f.tree())
	assert.Len(t, f.deleted(), n)
}

// TestConcurrentDeletions: runs of one session that delete at the same time
// all land in the record.
func TestConcurrentDeletions(t *testing.T) {
	const runs = 8
	f := newTreeFixture(t, artifact.InMemoryService(), nil, codeexec.FileLimits{})
	for i := range runs {
		f.save(fmt.Sprintf("f%d.txt", i), "x")
	}
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			p := fmt.Sprintf("f%d.txt", i)
			resp, err := f.tool.Run(f.session.ToolContext(fmt.Sprintf("inv-%d", i), nil),
				map[string]any{"skill_name": "tree", "script_path": "scripts/change.py", "input_files": []any{p}, "args": []any{"rm:" + p}})
			assert.NoError(t, err)
			assert.Equal(t, map[string]string{p: p}, deletedOf(resp))
		})
	}
	wg.Wait()
	assert.Empty(t, f.tree())
	assert.Len(t, f.deleted(), runs)
}

// failingRecord fails every save of the record.
type failingRecord struct{ artifact.Service }

func (s failingRecord) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	if req.FileName == runscript.DeletedArtifact {
		return nil, errors.New("disk full")
	}
	return s.Service.Save(ctx, req)
}

// TestUnrecordedDeletion: a record that cannot be saved is a warning; the
// response still lists the deletion.
func TestUnrecordedDeletion(t *testing.T) {
	f := newTreeFixture(t, failingRecord{artifact.InMemoryService()}, nil, codeexec.FileLimits{})
	f.save("a.txt", "a")
	resp := f.run([]any{"a.txt"}, "rm:a.txt")
	require.Equal(t, "success", resp["status"], resp)
	assert.Equal(t, map[string]string{"a.txt": "a.txt"}, deletedOf(resp))
	assert.Contains(t, resp["warning"], "the session's record of deleted files could not be updated")
	assert.Equal(t, []string{"a.txt"}, f.tree())
}

// TestRestore: a file saved into the session outside a run (the command
// line's --input) is back in the tree once restored.
func TestRestore(t *testing.T) {
	f := newTreeFixture(t, artifact.InMemoryService(), nil, codeexec.FileLimits{})
	f.save("in/a.txt", "a")
	f.run([]any{"in/a.txt"}, "rm:in/a.txt")
	require.Empty(t, f.tree())
	f.save("in/a.txt", "uploaded again")
	assert.Empty(t, f.tree(), "a save alone does not undo a deletion")
	arts := adkglue.Artifacts(f.arts())
	require.NoError(t, runscript.Restore(context.Background(), arts, "in/a.txt", "never/deleted.txt"))
	assert.Equal(t, []string{"in/a.txt"}, f.tree())
	assert.NoError(t, runscript.Restore(context.Background(), nil, "x"))
}
