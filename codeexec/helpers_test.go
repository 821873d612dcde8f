package codeexec

import (
	"context"
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
