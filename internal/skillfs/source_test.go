package skillfs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/tool/skilltoolset/skill"
)

// writeTree creates files (path -> content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// skillsTree is a skills folder with good, tolerant, broken and hostile
// entries, plus a secret outside it that symlinks point at.
func skillsTree(t *testing.T) (dir, secret string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "skills")
	secret = filepath.Join(base, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOP SECRET"), 0o600))
	writeTree(t, dir, map[string]string{
		"good/SKILL.md":                  "---\nname: good\ndescription: Good.\n---\nDo good.\n",
		"good/scripts/run.py":            "print(1)\n",
		"good/cards/a.json":              "{}",
		"good/.git/config":               "[core]\n",
		"good/scripts/__pycache__/x.pyc": "bytecode",
		"tolerant/SKILL.md":              "---\nname: tolerant\ndescription: Extra keys.\nargument-hint: x\nuser-invocable: true\n---\n",
		"broken/SKILL.md":                "---\nname: broken\ndescription: [oops\n",
		"mismatch/SKILL.md":              "---\nname: other-name\ndescription: Wrong folder.\n---\n",
		"wordy/SKILL.md":                 "---\nname: wordy\ndescription: " + strings.Repeat("w", MaxDescriptionBytes+1) + "\n---\n",
		"not-a-skill/README.md":          "no SKILL.md here",
		"stray.md":                       "a file at the top level",
	})
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "good", "cards", "leak.txt")))
	require.NoError(t, os.Symlink(filepath.Dir(secret), filepath.Join(dir, "good", "outside")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "good"), filepath.Join(dir, "linked")))
	return dir, secret
}

func TestListFrontmattersSkipsBrokenSkills(t *testing.T) {
	dir, _ := skillsTree(t)
	var logs bytes.Buffer
	src := New(os.DirFS(dir), slog.New(slog.NewTextHandler(&logs, nil)))
	for range 3 {
		fms, err := src.ListFrontmatters(context.Background())
		require.NoError(t, err)
		var names []string
		for _, fm := range fms {
			names = append(names, fm.Name)
		}
		assert.Equal(t, []string{"good", "tolerant", "wordy"}, names, "broken skills are left out, the rest stay; symlinked folders are not skills")
	}
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "skill=broken"), "one warning per problem, however often the catalogue is read:\n%s", out)
	assert.Equal(t, 1, strings.Count(out, "skill=mismatch"))
	assert.Contains(t, out, "does not match the folder name")
	assert.NotContains(t, out, "not-a-skill")
	assert.Equal(t, 1, strings.Count(out, "skill=wordy"), "a skill that loads despite a problem: one warning")
	assert.Contains(t, out, "the description is 1025 characters, over the limit of 1024")

	skills, err := src.Scan()
	require.NoError(t, err)
	assert.Len(t, skills, 5, "Scan reports every folder with a SKILL.md, valid or not")
}

func TestLoadAndListResources(t *testing.T) {
	dir, _ := skillsTree(t)
	src := New(os.DirFS(dir), slog.New(slog.DiscardHandler))
	ctx := context.Background()

	files, err := src.ListResources(ctx, "good", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"SKILL.md", "cards/a.json", "scripts/run.py"}, files, "whole folder, no symlinks, no .git or __pycache__")
	sub, err := src.ListResources(ctx, "good", "scripts")
	require.NoError(t, err)
	assert.Equal(t, []string{"scripts/run.py"}, sub)

	body, err := src.LoadInstructions(ctx, "good")
	require.NoError(t, err)
	assert.Equal(t, "Do good.\n", body)
	fm, err := src.LoadFrontmatter(ctx, "tolerant")
	require.NoError(t, err)
	assert.Equal(t, "Extra keys.", fm.Description)

	rc, err := src.LoadResource(ctx, "good", "cards/a.json")
	require.NoError(t, err)
	data, _ := io.ReadAll(rc)
	require.NoError(t, rc.Close())
	assert.Equal(t, "{}", string(data))

	bad := []struct {
		skill, path string
		want        error
	}{
		{"good", "cards/leak.txt", skill.ErrInvalidResourcePath},
		{"good", "outside/secret.txt", skill.ErrInvalidResourcePath},
		{"good", "../tolerant/SKILL.md", skill.ErrInvalidResourcePath},
		{"good", "/etc/passwd", skill.ErrInvalidResourcePath},
		{"good", "cards", skill.ErrResourceNotFound},
		{"good", "nope.txt", skill.ErrResourceNotFound},
		{"good", ".", skill.ErrInvalidResourcePath},
		{"linked", "cards/a.json", skill.ErrSkillNotFound},
		{"../skills/good", "cards/a.json", skill.ErrInvalidSkillName},
		{"nope", "x", skill.ErrSkillNotFound},
	}
	for _, b := range bad {
		rc, err := src.LoadResource(ctx, b.skill, b.path)
		if rc != nil {
			data, _ := io.ReadAll(rc)
			rc.Close()
			t.Errorf("%s/%s opened: %q", b.skill, b.path, data)
			continue
		}
		assert.ErrorIs(t, err, b.want, "%s/%s", b.skill, b.path)
	}
	for _, p := range []string{"../", "/", "outside"} {
		_, err := src.ListResources(ctx, "good", p)
		assert.Error(t, err, p)
	}
	_, err = src.LoadFrontmatter(ctx, "broken")
	assert.ErrorIs(t, err, skill.ErrInvalidFrontmatter)
	_, err = src.LoadFrontmatter(ctx, "mismatch")
	assert.ErrorIs(t, err, skill.ErrInvalidSkillName)
}

func TestSourceOverRootFS(t *testing.T) {
	dir, _ := skillsTree(t)
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	src := New(root.FS(), slog.New(slog.DiscardHandler))
	files, err := src.ListResources(context.Background(), "good", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"SKILL.md", "cards/a.json", "scripts/run.py"}, files)
	_, err = src.LoadResource(context.Background(), "good", "cards/leak.txt")
	assert.Error(t, err)
}

// TestReadRemembersEachSkillFile: a SKILL.md read again with the same
// content gives what the first read gave, as a copy its caller may change;
// a changed SKILL.md (even one of the same size) is parsed anew, and so is
// a broken one once fixed.
func TestReadRemembersEachSkillFile(t *testing.T) {
	const (
		good  = "---\nname: memo\ndescription: First.\nmetadata:\n  k: v\nallowed-tools: Read\n---\nOne.\n"
		same  = "---\nname: memo\ndescription: Other.\nmetadata:\n  k: v\nallowed-tools: Read\n---\nOne.\n"
		wrong = "---\nname: other\ndescription: First.\n---\nOne.\n"
	)
	require.Len(t, same, len(good), "the changed file keeps the size")
	ctx := context.Background()
	dir := t.TempDir()
	src := New(os.DirFS(dir), slog.New(slog.DiscardHandler))
	steps := []struct {
		content, desc, body string
		err                 error
	}{
		{good, "First.", "One.\n", nil},
		{good, "First.", "One.\n", nil},
		{same, "Other.", "One.\n", nil},
		{wrong, "", "", skill.ErrInvalidSkillName},
		{wrong, "", "", skill.ErrInvalidSkillName},
		{good, "First.", "One.\n", nil},
	}
	for i, st := range steps {
		writeTree(t, dir, map[string]string{"memo/SKILL.md": st.content})
		fm, err := src.LoadFrontmatter(ctx, "memo")
		body, berr := src.LoadInstructions(ctx, "memo")
		if st.err != nil {
			require.ErrorIs(t, err, st.err, "step %d", i)
			require.ErrorIs(t, berr, st.err, "step %d", i)
			continue
		}
		require.NoError(t, err, "step %d", i)
		require.NoError(t, berr, "step %d", i)
		assert.Equal(t, st.desc, fm.Description, "step %d", i)
		assert.Equal(t, st.body, body, "step %d", i)
		assert.Equal(t, map[string]string{"k": "v"}, fm.Metadata, "step %d", i)
		// The caller's copy is its own.
		fm.Description, fm.Metadata["k"] = "changed", "changed"
		fm.AllowedTools = append(fm.AllowedTools[:0], "changed")
		again, err := src.LoadFrontmatter(ctx, "memo")
		require.NoError(t, err)
		assert.Equal(t, st.desc, again.Description, "step %d: a caller's change reached the next read", i)
		assert.Equal(t, "v", again.Metadata["k"], "step %d", i)
		if assert.NotEmpty(t, again.AllowedTools, "step %d", i) {
			assert.NotEqual(t, "changed", again.AllowedTools[0], "step %d", i)
		}
	}
}

// BenchmarkListFrontmatters lists a catalogue of benchSkills skills, as
// every model request does (the catalogue and the declared tools).
func BenchmarkListFrontmatters(b *testing.B) {
	const benchSkills = 20
	dir := b.TempDir()
	files := map[string]string{}
	for i := range benchSkills {
		name := "skill-" + strings.Repeat("x", i%5) + string(rune('a'+i))
		files[name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: " + strings.Repeat("Does things. ", 20) + "\nlicense: MIT\nmetadata:\n  author: someone\n  version: \"1.0\"\n---\n# Usage\n\n" + strings.Repeat("Step.\n", 50)
	}
	writeTree(b, dir, files)
	src := New(os.DirFS(dir), slog.New(slog.DiscardHandler))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		fms, err := src.ListFrontmatters(ctx)
		if err != nil || len(fms) != benchSkills {
			b.Fatalf("%d skills, %v", len(fms), err)
		}
	}
}

// countingFS counts the bytes read from its files.
type countingFS struct {
	fs.FS
	read atomic.Int64
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, n: &c.read}, nil
}

func (c *countingFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(c.FS, name) }

type countingFile struct {
	fs.File
	n *atomic.Int64
}

func (f *countingFile) Read(p []byte) (int, error) {
	k, err := f.File.Read(p)
	f.n.Add(int64(k))
	return k, err
}

// TestHugeBodyIsNotRead: the catalogue and the frontmatter read a SKILL.md
// no further than its frontmatter, and Instructions streams the body.
func TestHugeBodyIsNotRead(t *testing.T) {
	const bodyBytes = 64 * MaxFrontmatterBytes
	front := "---\nname: huge\ndescription: Huge.\n---\n"
	body := strings.Repeat("0123456789abcdef", bodyBytes/16)
	for _, prefix := range []string{"", string(bom)} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"huge/SKILL.md": prefix + front + body})
		fsys := &countingFS{FS: os.DirFS(dir)}
		src := New(fsys, slog.New(slog.DiscardHandler))
		ctx := context.Background()
		for range 3 {
			fms, err := src.ListFrontmatters(ctx)
			require.NoError(t, err)
			require.Len(t, fms, 1)
			_, err = src.LoadFrontmatter(ctx, "huge")
			require.NoError(t, err)
		}
		assert.LessOrEqual(t, fsys.read.Load(), int64(6*(len(bom)+MaxFrontmatterBytes+1)), "each read stops after the frontmatter")

		fsys.read.Store(0)
		r, off, err := src.Instructions(ctx, "huge")
		require.NoError(t, err)
		assert.Equal(t, int64(utf8.RuneCountInString(prefix+front)), off, "the characters before the body")
		assert.LessOrEqual(t, fsys.read.Load(), int64(len(bom)+MaxFrontmatterBytes+1), "opening reads no more than the frontmatter")
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		assert.True(t, string(got) == body, "the body streams whole (%d bytes, want %d)", len(got), len(body))

		whole, err := src.LoadInstructions(ctx, "huge")
		require.NoError(t, err)
		assert.True(t, whole == body, "LoadInstructions returns the body whole")
	}
}

// TestFrontmatterBound: a frontmatter ending at MaxFrontmatterBytes loads;
// one byte more is an error, for the loader, Parse and Validate alike.
func TestFrontmatterBound(t *testing.T) {
	frontOf := func(size int) string {
		const open, tail = "---\nname: bound\ndescription: Bound.\n", "---\n"
		pad := size - len(open) - len(tail) - len("#\n")
		return open + "#" + strings.Repeat("x", pad) + "\n" + tail
	}
	tests := []struct {
		name    string
		content string
		ok      bool
	}{
		{"at the bound", frontOf(MaxFrontmatterBytes) + "Body.\n", true},
		{"at the bound, no body", frontOf(MaxFrontmatterBytes), true},
		{"at the bound after a BOM", string(bom) + frontOf(MaxFrontmatterBytes) + "Body.\n", true},
		{"one byte over", frontOf(MaxFrontmatterBytes+1) + "Body.\n", false},
		{"never closed", "---\nname: bound\n" + strings.Repeat("#x\n", MaxFrontmatterBytes), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"bound/SKILL.md": tt.content})
			src := New(os.DirFS(dir), slog.New(slog.DiscardHandler))
			fm, err := src.LoadFrontmatter(context.Background(), "bound")
			_, perr := Parse([]byte(tt.content))
			r, verr := Validate(os.DirFS(dir), nil)
			require.NoError(t, verr)
			if tt.ok {
				require.NoError(t, err)
				assert.Equal(t, "Bound.", fm.Description)
				assert.NoError(t, perr)
				assert.Zero(t, r.Errors(), "%v", r.Problems)
				return
			}
			require.ErrorIs(t, err, skill.ErrInvalidFrontmatter)
			assert.Contains(t, err.Error(), fmt.Sprintf("within its first %d bytes", MaxFrontmatterBytes))
			assert.ErrorIs(t, perr, skill.ErrInvalidFrontmatter)
			assert.NotZero(t, r.Errors(), "Validate agrees with the loader")
		})
	}
}

// FuzzHeadSplitsAsWhole: what the loader reads of a SKILL.md (readHead)
// splits exactly as the whole file does. pad lengthens the frontmatter
// towards the bound.
func FuzzHeadSplitsAsWhole(f *testing.F) {
	f.Add([]byte("---\nname: a\n"), uint32(0), []byte("---\nbody"))
	f.Add([]byte("\ufeff---\r\n"), uint32(MaxFrontmatterBytes-12), []byte("\n---\r\nbody"))
	f.Add([]byte("---\n#"), uint32(MaxFrontmatterBytes-9), []byte("\n---"))
	f.Add([]byte("---\n#"), uint32(MaxFrontmatterBytes-8), []byte("\n---\n"))
	f.Add([]byte("---\n#"), uint32(MaxFrontmatterBytes-6), []byte("\n---x\n---\n"))
	f.Add([]byte("no opening"), uint32(5), []byte{})
	f.Fuzz(func(t *testing.T, prefix []byte, pad uint32, suffix []byte) {
		content := slices.Concat(prefix, bytes.Repeat([]byte{'x'}, int(pad%(MaxFrontmatterBytes+64))), suffix)
		file, err := fstest.MapFS{"SKILL.md": {Data: content}}.Open("SKILL.md")
		if err != nil {
			t.Fatal(err)
		}
		head, err := readHead(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(content, head) || len(head) > len(bom)+MaxFrontmatterBytes+1 {
			t.Fatalf("head of %d bytes is not a bounded prefix", len(head))
		}
		gotEnd, gotErr := frontmatterEnd(head)
		wantEnd, wantErr := frontmatterEnd(content)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("head: %v, whole: %v", gotErr, wantErr)
		}
		if gotErr == nil && gotEnd != wantEnd {
			t.Fatalf("head ends the frontmatter at %d, whole at %d", gotEnd, wantEnd)
		}
	})
}
