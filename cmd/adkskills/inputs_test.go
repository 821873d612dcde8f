package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/fileartifact"
)

// docx writes a small .docx-like zip into dir and returns its path.
func docx(t *testing.T, dir string, parts map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, data := range parts {
		f, err := w.Create(name)
		require.NoError(t, err)
		_, err = io.WriteString(f, data)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	p := filepath.Join(dir, "letter.docx")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p
}

// TestRunInputs is the round trip from the shell: --input saves a local
// document into the session and passes it in; --input-artifact passes in
// the tree an earlier run wrote, by glob; artifacts cat prints the result.
func TestRunInputs(t *testing.T) {
	vars, _ := store(t)
	parts := map[string]string{"[Content_Types].xml": "<Types/>", "word/document.xml": "<w:t>Hello</w:t>"}
	doc := docx(t, t.TempDir(), parts)
	skills := testSkills(t)

	o := invoke(t, invocation{vars: vars, args: []string{"run", "--skills", skills, "--input", doc, "office-roundtrip", "scripts/unpack.py", "--", "letter.docx", "unpacked"}})
	require.Equal(t, exitOK, o.code, o.stderr)
	assert.True(t, strings.HasPrefix(o.stdout, "== input files ==\n"+doc+` -> artifact "letter.docx" version 1, passed in as letter.docx`+"\n== stdout ==\n"), o.stdout)
	files := printedFiles(t, o.stdout)
	assert.Contains(t, files, "unpacked/word/document.xml")
	assert.NotContains(t, files, "letter.docx", "the input, unchanged, is not an output")

	o = invoke(t, invocation{vars: vars, args: []string{"run", "--skills", skills, "--input-artifact", "unpacked/**", "office-roundtrip", "scripts/pack.py", "--", "unpacked", "dist/letter.docx"}})
	require.Equal(t, exitOK, o.code, o.stderr)
	assert.True(t, strings.HasPrefix(o.stdout, "== input files ==\n--input-artifact 'unpacked/**' passed in 2 files:\n"+
		"    unpacked/[Content_Types].xml (8 B)\n    unpacked/word/document.xml (16 B)\n== stdout ==\n"), o.stdout)
	assert.Contains(t, o.stdout, "packed 2 parts into dist/letter.docx in office-roundtrip")
	assert.Len(t, printedFiles(t, o.stdout), 1, o.stdout)

	cat := invoke(t, invocation{vars: vars, args: []string{"artifacts", "cat", "dist/letter.docx"}})
	require.Equal(t, exitOK, cat.code, cat.stderr)
	r, err := zip.NewReader(strings.NewReader(cat.stdout), int64(len(cat.stdout)))
	require.NoError(t, err)
	got := map[string]string{}
	for _, f := range r.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		got[f.Name] = string(b)
	}
	assert.Equal(t, parts, got)

	o = invoke(t, invocation{vars: vars, args: []string{"run", "--skills", skills, "--input", doc, "--input-artifact", "unpacked/**",
		"office-roundtrip", "scripts/unpack.py", "--", "letter.docx", "unpacked"}})
	require.Equal(t, exitOK, o.code, o.stderr)
	assert.True(t, strings.HasPrefix(o.stdout, "== input files ==\n"+doc+` -> artifact "letter.docx" version 2, passed in as letter.docx`+"\n"+
		"--input-artifact 'unpacked/**' passed in 2 files:\n"), "the same file again is a new version; the upload is not listed twice:\n%s", o.stdout)
	assert.Empty(t, printedFiles(t, o.stdout), "unpacked over the tree it was given, the same bytes: nothing changed")
}

func TestRunInputErrors(t *testing.T) {
	dir := t.TempDir()
	doc := docx(t, dir, map[string]string{"a.xml": "a"})
	other := filepath.Join(t.TempDir(), "letter.docx")
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o600))
	big := filepath.Join(dir, "big.bin")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(codeexec.DefaultMaxOutputFileBytes+1))
	require.NoError(t, f.Close())
	skillFile := filepath.Join(t.TempDir(), "SKILL.md")
	require.NoError(t, os.WriteFile(skillFile, []byte("---\nname: evil\n---\n"), 0o600))
	skills := testSkills(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"a missing file", []string{"--input", filepath.Join(dir, "nope.docx")}, exitUsage, "adkskills: --input: open "},
		{"two files with one name", []string{"--input", doc, "--input", other}, exitUsage, fmt.Sprintf("adkskills: --input %s and %s: both would be letter.docx in the script's folder", doc, other)},
		{"over the input limit", []string{"--input", big}, exitUsage, "adkskills: --input " + big + ": over 32.0 MiB, the limit of one input file"},
		{"a skill's own file", []string{"--input", skillFile}, exitFailure, `adkskills: INVALID_ARGUMENTS: input_files[0] "SKILL.md": would replace the file "SKILL.md" the run already has`},
		{"a session file that is not there", []string{"--input-artifact", "unpacked/**"}, exitFailure, `adkskills: INVALID_ARGUMENTS: input_files[0] "unpacked/**": the glob matches no file path of this session`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--skills", skills}, tt.args...)
			o := invoke(t, invocation{args: append(args, "office-roundtrip", "scripts/unpack.py", "--", "x", "y")})
			assert.Equal(t, tt.code, o.code, o.stderr)
			assert.Contains(t, o.stderr, tt.stderr)
			assert.Empty(t, o.stdout)
		})
	}
}

// TestArtifactsBrowsesAnAgentsStore: --app, --user and --session reach the
// artifacts an agent's runner saved in a fileartifact store.
func TestArtifactsBrowsesAnAgentsStore(t *testing.T) {
	vars, dir := store(t)
	s, err := fileartifact.New(dir)
	require.NoError(t, err)
	_, err = s.Save(context.Background(), &artifact.SaveRequest{AppName: "my_agent", UserID: "alice", SessionID: "s-42",
		FileName: "dist∕report.md", Part: genai.NewPartFromBytes([]byte("# report"), "text/markdown")})
	require.NoError(t, err)
	scope := []string{"--app", "my_agent", "--user", "alice", "--session", "s-42"}

	ls := invoke(t, invocation{vars: vars, args: append([]string{"artifacts", "ls"}, scope...)})
	require.Equal(t, exitOK, ls.code, ls.stderr)
	assert.Regexp(t, `(?m)^dist/report\.md\s+dist∕report\.md\s+1\s+1\s+8 B\s+text/markdown$`, ls.stdout)
	cat := invoke(t, invocation{vars: vars, args: append([]string{"artifacts", "cat", "dist/report.md"}, scope...)})
	require.Equal(t, exitOK, cat.code, cat.stderr)
	assert.Equal(t, "# report", cat.stdout)

	none := invoke(t, invocation{vars: vars, user: "alice", args: []string{"artifacts", "ls", "--session", "s-42"}})
	assert.Equal(t, exitOK, none.code)
	assert.Contains(t, none.stderr, `no artifacts in session "s-42" of user "alice", app "adkskills"`, "another app's store is not this one")
	bad := invoke(t, invocation{vars: vars, args: []string{"artifacts", "ls", "--app", ""}})
	assert.Equal(t, exitUsage, bad.code)
	assert.Contains(t, bad.stderr, "--app must not be empty")
}

// TestArtifactsLsShowsFiles: ls names each artifact's file as the script
// wrote it (not its escaped name, which is what the store's folders on disk
// are named after), reads an earlier release's names, shows "-" for a name
// no script file has, and escapes what would rewrite the terminal.
func TestArtifactsLsShowsFiles(t *testing.T) {
	vars, dir := store(t)
	s, err := fileartifact.New(dir)
	require.NoError(t, err)
	for _, name := range []string{"dist∕data∕summary.json", "out%2Fx.txt", "~7E.txt", "\x1b[31mred"} {
		_, err := s.Save(context.Background(), &artifact.SaveRequest{AppName: appName, UserID: "tester", SessionID: defaultSession, FileName: name,
			Part: genai.NewPartFromBytes([]byte("x"), "text/plain")})
		require.NoError(t, err)
	}
	ls := invoke(t, invocation{vars: vars, user: "tester", args: []string{"artifacts"}})
	require.Equal(t, exitOK, ls.code, ls.stderr)
	lines := strings.Split(strings.TrimSpace(ls.stdout), "\n")
	require.Len(t, lines, 5, ls.stdout)
	assert.Regexp(t, `^-\s+\\x1b\[31mred\s+1\s+1\s+1 B\s+text/plain$`, lines[1])
	assert.Regexp(t, `^dist/data/summary\.json\s+dist∕data∕summary\.json\s+1 `, lines[2])
	assert.Regexp(t, `^out/x\.txt\s+out%2Fx\.txt\s+1 `, lines[3])
	assert.Regexp(t, `^~\.txt\s+~7E\.txt\s+1 `, lines[4])
	assert.NotContains(t, ls.stdout, "\x1b")
}
