package skilltoolset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool/skilltoolset/skill"

	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/internal/adktest"
	"github.com/adkskills/adkskills/internal/skillfs"
	"github.com/adkskills/adkskills/internal/truncate"
)

// readCap is the small cap the read tests use, so that short files cut.
const readCap = 10

// callTool runs the toolset's tool name with args, as ADK's flow does.
func callTool(t *testing.T, ts *SkillToolset, name string, args map[string]any) (map[string]any, error) {
	t.Helper()
	tools, err := ts.Tools(nil)
	require.NoError(t, err)
	for _, tl := range tools {
		if tl.Name() == name {
			tc, _ := adktest.ToolContext(t, nil, "inv")
			return tl.(interface {
				Run(adkglue.ToolContext, any) (map[string]any, error)
			}).Run(tc, args)
		}
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

// readSkills is a skill whose files are longer than readCap: ASCII,
// characters of every width, and invalid UTF-8.
var readSkills = fstest.MapFS{
	"r/SKILL.md":          {Data: []byte("---\nname: r\ndescription: Réads — ✓.\n---\nÉtape 1: ✓ lire 😀 puis écrire.\n")},
	"r/assets/ascii.txt":  {Data: []byte("0123456789abcdefghijklmnopqrstuvwxyz\n")},
	"r/assets/multi.txt":  {Data: []byte("aé€😀ß中🇫🇷👩‍💻z\n☃️𝄞 and more text after it")},
	"r/assets/binary.bin": {Data: []byte("\x89PNG\r\n\x1a\n\x00\xff\xfe rest of a binary file")},
	"r/assets/short.txt":  {Data: []byte("short")},
	"r/assets/empty.txt":  {Data: []byte{}},
}

// TestLoadSkillResourceIsBounded: a file over the cap comes back as
// truncate cuts it, with a warning naming the cut characters; reading by
// offset and length from 0, following next_offset, gives back every
// character once, in order, never more than the cap per answer.
func TestLoadSkillResourceIsBounded(t *testing.T) {
	ts, err := New(context.Background(), NewFSSource(readSkills), WithMaxReadChars(readCap))
	require.NoError(t, err)
	for _, file := range []string{"assets/ascii.txt", "assets/multi.txt", "assets/binary.bin", "assets/short.txt", "SKILL.md"} {
		t.Run(file, func(t *testing.T) {
			content := string(readSkills["r/"+file].Data)
			chars := []rune(content) // invalid bytes are one U+FFFD each
			resp, err := callTool(t, ts, loadResourceName, map[string]any{"skill_name": "r", "resource_path": file})
			require.NoError(t, err)
			assert.Equal(t, truncate.String(content, readCap), resp["content"])
			if len(chars) <= readCap {
				assert.NotContains(t, resp, "warning")
				assert.NotContains(t, resp, "total_chars")
			} else {
				from, to := truncate.Elided(int64(len(chars)), readCap)
				assert.Equal(t, fmt.Sprintf("The file is %d characters, over the %d-character cap: the marker stands for characters %d to %d. Read them with offset %d and length up to %d.",
					len(chars), readCap, from, to, from, readCap), resp["warning"])
				assert.EqualValues(t, len(chars), resp["total_chars"])
			}

			var got []rune
			for offset, calls := 0, 0; ; calls++ {
				require.Less(t, calls, len(chars)+1, "paging ends")
				args := map[string]any{"skill_name": "r", "resource_path": file, "length": readCap + 5} // over the cap: clamped
				if offset > 0 {
					args["offset"] = offset
				}
				resp, err := callTool(t, ts, loadResourceName, args)
				require.NoError(t, err)
				part, _ := resp["content"].(string)
				assert.LessOrEqual(t, utf8.RuneCountInString(part), readCap)
				assert.EqualValues(t, len(chars), resp["total_chars"])
				got = append(got, []rune(part)...)
				next, more := resp["next_offset"]
				if !more {
					break
				}
				assert.EqualValues(t, len(got), next)
				offset = len(got)
			}
			assert.Equal(t, string(chars), string(got), "the pages make up the file")

			resp, err = callTool(t, ts, loadResourceName, map[string]any{"skill_name": "r", "resource_path": file, "offset": 1, "length": 2})
			require.NoError(t, err)
			assert.Equal(t, string(chars[1:3]), resp["content"], "offset and length are in characters")
		})
	}
}

// TestLoadSkillResourceRefusesBadRanges: every malformed or impossible
// range is a clear error, and reads nothing.
func TestLoadSkillResourceRefusesBadRanges(t *testing.T) {
	ts, err := New(context.Background(), NewFSSource(readSkills), WithMaxReadChars(readCap))
	require.NoError(t, err)
	base := func(kv ...any) map[string]any {
		m := map[string]any{"skill_name": "r", "resource_path": "assets/ascii.txt"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"negative offset", base("offset", -1), "offset must be 0 or more, got -1"},
		{"negative length", base("length", -5), "length must be 1 or more, got -5"},
		{"offset past the end", base("offset", 37), "offset 37 is past the end of 'assets/ascii.txt': it has 37 characters"},
		{"huge offset", base("offset", int64(1)<<62), "is past the end"},
		{"fractional offset", base("offset", 1.5), "offset"},
		{"offset as text", base("offset", "3"), "offset"},
		{"length as a list", base("length", []any{1}), "length"},
		{"unknown argument", base("limit", 3), "limit"},
		{"no skill", map[string]any{"resource_path": "assets/ascii.txt"}, `missing properties: ["skill_name"]`},
		{"no path", map[string]any{"skill_name": "r"}, `missing properties: ["resource_path"]`},
		{"empty skill", base("skill_name", ""), "skill name is required"},
		{"empty path", base("resource_path", ""), "resource path is required"},
		{"a path out of the skill", base("resource_path", "../r/SKILL.md"), "invalid resource path"},
		{"a missing file", base("resource_path", "assets/none.txt"), "resource not found"},
		{"empty file past its end", base("resource_path", "assets/empty.txt", "offset", 1), "past the end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := callTool(t, ts, loadResourceName, tt.args)
			require.Error(t, err, "%v", resp)
			assert.Contains(t, err.Error(), tt.want)
			assert.Nil(t, resp)
		})
	}
	resp, err := callTool(t, ts, loadResourceName, base("resource_path", "assets/empty.txt", "offset", 0, "length", 3))
	require.NoError(t, err, "an empty file reads as empty")
	assert.EqualValues(t, map[string]any{"skill_name": "r", "path": "assets/empty.txt"}, resp)
}

// TestLoadSkillIsBounded: instructions over the cap are cut as truncate
// cuts them; from a file-system source the warning names the cut
// characters as SKILL.md offsets (characters, after the frontmatter) that
// load_skill_resource reads, from any other source it says they cannot be
// read in parts.
func TestLoadSkillIsBounded(t *testing.T) {
	front := "---\nname: r\ndescription: Réads — ✓.\n---\n"
	body := "Étape 1: ✓ lire 😀 puis écrire.\n"
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "r", "references"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r", "SKILL.md"), []byte(front+body), 0o644))
	from, to := truncate.Elided(int64(utf8.RuneCountInString(body)), readCap)
	for _, src := range []struct {
		name   string
		source skill.Source
		hint   string
	}{
		{"fs source", NewFSSource(os.DirFS(dir)), fmt.Sprintf("Read them with load_skill_resource: resource_path \"SKILL.md\", offset %d, length up to %d.", utf8.RuneCountInString(front)+int(from), readCap)},
		{"ADK's source", skill.NewFileSystemSource(os.DirFS(dir)), "This skill source cannot read them in parts."},
	} {
		t.Run(src.name, func(t *testing.T) {
			ts, err := New(context.Background(), src.source, WithMaxReadChars(readCap))
			require.NoError(t, err)
			resp, err := callTool(t, ts, loadSkillName, map[string]any{"name": "r"})
			require.NoError(t, err)
			assert.Equal(t, truncate.String(body, readCap), resp["instructions"])
			assert.Equal(t, fmt.Sprintf("The instructions are %d characters, over the %d-character cap: the marker stands for characters %d to %d of them. %s",
				utf8.RuneCountInString(body), readCap, from, to, src.hint), resp["warning"])
			assert.Equal(t, "Réads — ✓.", resp["frontmatter"].(map[string]any)["description"])
		})
	}
	// The offset the warning names reads the cut characters, a cap at a time.
	ts, err := New(context.Background(), NewFSSource(os.DirFS(dir)), WithMaxReadChars(readCap))
	require.NoError(t, err)
	resp, err := callTool(t, ts, loadResourceName, map[string]any{"skill_name": "r", "resource_path": "SKILL.md",
		"offset": utf8.RuneCountInString(front) + int(from), "length": readCap})
	require.NoError(t, err)
	assert.Equal(t, string([]rune(body)[from:from+readCap]), resp["content"])

	// Under the cap: ADK's answer, unchanged.
	ts, err = New(context.Background(), NewFSSource(os.DirFS(dir)))
	require.NoError(t, err)
	resp, err = callTool(t, ts, loadSkillName, map[string]any{"name": "r"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"skill_name": "r", "instructions": body,
		"frontmatter": map[string]any{"name": "r", "description": "Réads — ✓."}}, resp)
	for _, args := range []map[string]any{{}, {"name": ""}, {"name": "none"}, {"name": 3}} {
		_, err := callTool(t, ts, loadSkillName, args)
		assert.Error(t, err, "%v", args)
	}
}

// manySkills is a skills folder of n skills whose descriptions are desc
// characters long.
func manySkills(n, desc int) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		d := fmt.Sprintf("Skill %d <&>", i)
		d += strings.Repeat("d", max(desc-len(d), 0))
		fsys[name+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: \"" + d + "\"\n---\n")}
	}
	return fsys
}

// TestCatalogueIsBounded: the catalogue in the instruction and each
// list_skills answer hold whole entries within MaxCatalogueChars, and the
// line after them counts the rest and names the offset that lists them;
// paging list_skills lists every skill exactly once.
func TestCatalogueIsBounded(t *testing.T) {
	const desc = 200
	n := 3 * MaxCatalogueChars / desc // three pages' worth
	ts, err := New(context.Background(), NewFSSource(manySkills(n, desc)))
	require.NoError(t, err)
	req := &model.LLMRequest{}
	require.NoError(t, ts.ProcessRequest(nil, req))
	text := systemText(req)
	start := strings.Index(text, "<available_skills>\n")
	require.GreaterOrEqual(t, start, 0)
	cat, marker, ok := strings.Cut(text[start:], "</available_skills>\n")
	require.True(t, ok, "a line follows the list")
	cat += "</available_skills>"
	assert.LessOrEqual(t, utf8.RuneCountInString(cat), MaxCatalogueChars)
	listed := strings.Count(cat, "<skill>")
	assert.Equal(t, fmt.Sprintf("... [%d more skills not listed: over the %d-character catalogue cap; list_skills with offset %d lists them] ...", n-listed, MaxCatalogueChars, listed), marker)
	assert.Contains(t, cat, "Skill 0 &lt;&amp;&gt;", "escaped as ADK escapes")

	seen := map[string]int{}
	for offset, calls := 0, 0; ; calls++ {
		require.Less(t, calls, n, "paging ends")
		args := map[string]any{}
		if offset > 0 {
			args["offset"] = offset
		}
		resp, err := callTool(t, ts, listSkillsName, args)
		require.NoError(t, err)
		page := resp["skills"].(string)
		list, rest, _ := strings.Cut(page, "</available_skills>")
		assert.LessOrEqual(t, utf8.RuneCountInString(list+"</available_skills>"), MaxCatalogueChars)
		for _, m := range strings.Split(list, "<name>\n")[1:] {
			name, _, _ := strings.Cut(m, "\n")
			seen[name]++
		}
		if rest == "" {
			break
		}
		_, err = fmt.Sscanf(rest[strings.Index(rest, "offset "):], "offset %d", &offset)
		require.NoError(t, err, rest)
	}
	assert.Len(t, seen, n)
	for name, k := range seen {
		assert.Equal(t, 1, k, name)
	}
	for _, bad := range []any{-1, n, 1.5, "2"} {
		_, err := callTool(t, ts, listSkillsName, map[string]any{"offset": bad})
		assert.Error(t, err, "offset %v", bad)
	}
}

// longSource is a source whose one skill has a description far over
// skillfs.MaxDescriptionBytes (ADK's parser would refuse it; a custom
// source need not).
type longSource struct {
	skill.Source
	fm *skill.Frontmatter
}

func (s longSource) ListFrontmatters(context.Context) ([]*skill.Frontmatter, error) {
	return []*skill.Frontmatter{s.fm}, nil
}

// TestCatalogueCutsLongDescriptions: a description over
// skillfs.MaxDescriptionBytes characters keeps its head and tail around
// truncate's marker, so one skill cannot fill the catalogue.
func TestCatalogueCutsLongDescriptions(t *testing.T) {
	d := strings.Repeat("long ", 10*skillfs.MaxDescriptionBytes)
	ts, err := New(context.Background(), longSource{Source: NewFSSource(readSkills), fm: &skill.Frontmatter{Name: "long", Description: d}})
	require.NoError(t, err)
	req := &model.LLMRequest{}
	require.NoError(t, ts.ProcessRequest(nil, req))
	assert.Contains(t, systemText(req), "<description>\n"+truncate.String(d, skillfs.MaxDescriptionBytes)+"\n</description>")
	assert.NotContains(t, systemText(req), "more skills not listed")
}

// TestReadsHoldBoundedMemory: reading a SKILL.md and a file many times the
// cap, whole or by range, allocates a small multiple of the cap, not the
// file's size.
func TestReadsHoldBoundedMemory(t *testing.T) {
	const fileBytes = 160 * DefaultMaxReadChars // 16 MB
	dir := t.TempDir()
	line := strings.Repeat("m", 99) + "\n"
	big := strings.Repeat(line, fileBytes/len(line))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "big", "assets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big", "SKILL.md"), []byte("---\nname: big\ndescription: Big.\n---\n"+big), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big", "assets", "big.txt"), []byte(big), 0o644))
	big = ""
	ts, err := New(context.Background(), NewFSSource(os.DirFS(dir)))
	require.NoError(t, err)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{loadSkillName, map[string]any{"name": "big"}},
		{loadResourceName, map[string]any{"skill_name": "big", "resource_path": "assets/big.txt"}},
		{loadResourceName, map[string]any{"skill_name": "big", "resource_path": "assets/big.txt", "offset": fileBytes / 2}},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		resp, err := callTool(t, ts, c.tool, c.args)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		require.NotEmpty(t, resp)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(40*DefaultMaxReadChars), "%s %v allocated %d bytes for a %d-byte file",
			c.tool, c.args, after.TotalAlloc-before.TotalAlloc, fileBytes)
	}
}
