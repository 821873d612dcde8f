package hostsuite

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/internal/hosttest"
)

// shippedFiles is a skill whose script reports its shipped files' modes,
// copies a template with shutil.copy (which keeps the mode) and edits the
// copy, rewrites one shipped file in place and chmods another: what the
// public document skills do with their templates.
var shippedFiles = fstest.MapFS{
	"templates/comments.xml": {Data: []byte("<comments/>"), Mode: 0o644},
	"data/readonly.txt":      {Data: []byte("as shipped"), Mode: 0o444},
	"data/tool.sh":           {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
	"scripts/edit.py": {Data: []byte(`import json, os, shutil, stat
out = {"modes": {}}
for p in ("templates/comments.xml", "data/readonly.txt", "data/tool.sh"):
    out["modes"][p] = oct(stat.S_IMODE(os.stat(p).st_mode))
shutil.copy("templates/comments.xml", "comments.xml")
with open("comments.xml", "a") as f:
    f.write("<c/>")
with open("templates/comments.xml", "a") as f:
    f.write("<rewritten/>")
os.chmod("data/readonly.txt", 0o644)
with open("data/readonly.txt", "w") as f:
    f.write("changed")
out["copy"] = open("comments.xml").read()
print(json.dumps(out))
`), Mode: 0o644},
	"scripts/read.py": {Data: []byte(`import json, os, stat
print(json.dumps({p: [open(p).read(), oct(stat.S_IMODE(os.stat(p).st_mode))] for p in ("templates/comments.xml", "data/readonly.txt")}))
`), Mode: 0o644},
}

// testShippedFiles: a script sees the files it was shipped with in the
// skill's own modes, may copy, rewrite and chmod them as in a shell, and no
// run, not even one going on at the same time, is given what another did
// to them.
func testShippedFiles(t *testing.T, newExec NewExecutor) {
	// On disk, so that runs stage it from the snapshot cache.
	files := map[string]string{}
	for p, f := range shippedFiles {
		files[p] = string(f.Data)
	}
	dir := hosttest.SkillDir(t, files)
	for p, f := range shippedFiles {
		if err := os.Chmod(filepath.Join(dir, p), f.Mode); err != nil {
			t.Fatal(err)
		}
	}
	skill := os.DirFS(dir)
	e := newExec(Options{WorkspaceDir: hosttest.NewWorkspaceDir(t)})
	res := codeexectest.MustRun(t, e, &codeexec.Request{Skill: skill, SkillName: "office", Script: "scripts/edit.py"})
	var got struct {
		Modes map[string]string
		Copy  string
	}
	if err := json.Unmarshal([]byte(res.Stdout.Text), &got); err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", res.ExitCode, res.Stdout.Text, res.Stderr.Text, err)
	}
	want := map[string]string{"templates/comments.xml": "0o644", "data/readonly.txt": "0o444", "data/tool.sh": "0o755"}
	for p, m := range want {
		if got.Modes[p] != m {
			t.Errorf("%s has mode %s in the run, want the skill's %s", p, got.Modes[p], m)
		}
	}
	if got.Copy != "<comments/><c/>" {
		t.Errorf("the edited copy reads %q", got.Copy)
	}
	if paths := codeexectest.Paths(res.Files); len(paths) != 3 {
		t.Errorf("output files %v: want the copy and the two files changed", paths)
	}

	// Runs after it and beside another editing run get the skill's files.
	const together = 4
	var wg sync.WaitGroup
	reads := make([]string, together)
	for i := range together {
		wg.Go(func() {
			script := "scripts/read.py"
			if i%2 == 1 {
				script = "scripts/edit.py"
			}
			r := codeexectest.MustRun(t, e, &codeexec.Request{Skill: skill, SkillName: "office", Script: script})
			if script == "scripts/read.py" {
				reads[i] = r.Stdout.Text
			}
		})
	}
	wg.Wait()
	const pristine = `{"templates/comments.xml": ["<comments/>", "0o644"], "data/readonly.txt": ["as shipped", "0o444"]}` + "\n"
	for i, r := range reads {
		if i%2 == 0 && r != pristine {
			t.Errorf("a run beside an editing one read %q, want %q", r, pristine)
		}
	}
	if r := codeexectest.MustRun(t, e, &codeexec.Request{Skill: skill, SkillName: "office", Script: "scripts/read.py"}); r.Stdout.Text != pristine {
		t.Errorf("a run after the edits read %q", r.Stdout.Text)
	}
}
