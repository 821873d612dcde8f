package skillfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanAndValidateCountTheSameSkills: list (Scan) and validate agree on
// which folders are skills, and on which of them have a skill file that
// cannot be read as one.
func TestScanAndValidateCountTheSameSkills(t *testing.T) {
	front := func(name string) *fstest.MapFile { return skillMD("name: "+name+"\ndescription: A skill.\n", "") }
	fsys := fstest.MapFS{
		"good/SKILL.md":          front("good"),
		"lower/skill.md":         front("lower"),
		"both/SKILL.md":          front("both"),
		"both/skill.md":          front("both"),
		"linked/SKILL.md":        {Data: []byte("../good/SKILL.md"), Mode: fs.ModeSymlink},
		"folder/SKILL.md/x":      {Data: []byte("")},
		".hidden/SKILL.md":       front(".hidden"),
		"__pycache__/SKILL.md":   front("__pycache__"),
		"not-a-skill/README.md":  {Data: []byte("no skill file")},
		"nested/inner/SKILL.md":  front("inner"),
		"SKILL.md":               front("top"),
		"loose-file-at-the-root": {Data: []byte("")},
	}
	tests := []struct {
		dir      string
		problem  string // "" when the skill file is read as one
		fileName string
	}{
		{"both", "", "SKILL.md"},
		{"folder", "the skill file is a folder", "SKILL.md"},
		{"good", "", "SKILL.md"},
		{"linked", "the skill file is a symbolic link", "SKILL.md"},
		{"lower", "the skill file must be named SKILL.md, not skill.md", "skill.md"},
	}

	r, err := Validate(fsys, codeexec.DefaultInterpreters())
	require.NoError(t, err)
	scanned, err := New(fsys, nil).Scan()
	require.NoError(t, err)

	var dirs, scannedDirs []string
	for _, tt := range tests {
		dirs = append(dirs, tt.dir)
	}
	for _, sk := range scanned {
		scannedDirs = append(scannedDirs, sk.Dir)
	}
	assert.Equal(t, dirs, r.Skills, "validate's skills")
	assert.Equal(t, dirs, scannedDirs, "list's skills")

	for i, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			sk := scanned[i]
			var problem *Problem
			for _, p := range r.Problems {
				if p.Path == tt.dir+"/"+tt.fileName && p.Severity == SeverityError {
					problem = &p
				}
			}
			if tt.problem == "" {
				assert.NoError(t, sk.Err)
				assert.Nil(t, problem, "validate")
				return
			}
			require.Error(t, sk.Err)
			assert.Contains(t, sk.Err.Error(), tt.dir+"/"+tt.fileName+": ")
			assert.Contains(t, sk.Err.Error(), tt.problem)
			require.NotNil(t, problem, "validate reports %s/%s", tt.dir, tt.fileName)
			assert.Contains(t, problem.Msg, tt.problem)
		})
	}
}

func TestHiddenFolders(t *testing.T) {
	front := func(name string) *fstest.MapFile { return skillMD("name: "+name+"\ndescription: A skill.\n", "") }
	fsys := fstest.MapFS{
		".curated/a/SKILL.md":       front("a"),
		".curated/b/SKILL.md":       front("b"),
		".curated/notes/README.md":  {Data: []byte("no skill")},
		".curated/.deeper/SKILL.md": front("deeper"),
		".system/c/skill.md":        front("c"),
		".draft/SKILL.md":           front("draft"),
		".git/x/SKILL.md":           front("x"),
		".github/workflows/ci.yml":  {Data: []byte("")},
		".cache/deep/er/SKILL.md":   front("er"),
		"visible/SKILL.md":          front("visible"),
		".loose-file":               {Data: []byte("")},
	}
	got, err := HiddenFolders(fsys)
	require.NoError(t, err)
	assert.Equal(t, []Hidden{
		{Dir: ".curated", Skills: 2},
		{Dir: ".draft", HasSkillFile: true},
		{Dir: ".system", Skills: 1},
	}, got)

	_, err = HiddenFolders(os.DirFS(filepath.Join(t.TempDir(), "missing")))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
