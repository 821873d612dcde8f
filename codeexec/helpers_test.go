package codeexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// skillOf builds a skill folder from path -> content.
func skillOf(m map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for p, c := range m {
		fsys[p] = &fstest.MapFile{Data: []byte(c)}
	}
	return fsys
}

// script is a request running one script file, the skill's only file.
func script(path, src string) *Request {
	return &Request{Skill: skillOf(map[string]string{path: src}), Script: path}
}

// mustRun executes req and fails the test on an error.
func mustRun(t *testing.T, e Executor, req *Request) *Result {
	t.Helper()
	res, err := e.Execute(context.Background(), req)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

// leftovers lists what a workspace directory holds besides the live spare
// workspaces (see newWorkspace): what runs left behind.
func leftovers(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), sparePrefix) && !deadWorkspace(filepath.Join(dir, e.Name())) {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
