package skillfs

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// folder is an immediate subfolder of a skills folder that holds a skill
// file: one skill, valid or not.
type folder struct {
	// Dir is the folder's name.
	Dir string
	// File is the skill file's name: SkillFile, or the same name in another
	// case ("skill.md").
	File string
	// Problem says why the skill file cannot be read as one, or is "".
	Problem string
}

// path is the skill file's path in the skills folder.
func (f folder) path() string { return path.Join(f.Dir, f.File) }

// skillFolders lists, in name order, the immediate subfolders of fsys that
// hold a skill file: a SKILL.md, or a file of that name in another case
// (an error Validate reports and Scan carries). Hidden folders, .git and
// __pycache__ are not skills. Scan (list, the catalogue) and Validate both
// start here, so they count the same skills.
func skillFolders(fsys fs.FS) ([]folder, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []folder
	for _, e := range entries {
		dir := e.Name()
		if !e.IsDir() || strings.HasPrefix(dir, ".") || skipDirs[dir] {
			continue
		}
		if f, ok := skillFileOf(fsys, dir); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// skillFileOf finds the skill file of dir: SKILL.md first, else a file of
// that name in another case.
func skillFileOf(fsys fs.FS, dir string) (folder, bool) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		// A folder that cannot be listed may be a skill: say so.
		return folder{Dir: dir, File: SkillFile, Problem: fmt.Sprintf("cannot read the folder: %v", err)}, true
	}
	var found *fs.DirEntry
	for i, e := range entries {
		if e.Name() == SkillFile {
			found = &entries[i]
			break
		}
		if found == nil && strings.EqualFold(e.Name(), SkillFile) {
			found = &entries[i]
		}
	}
	if found == nil {
		return folder{}, false
	}
	e := *found
	f := folder{Dir: dir, File: e.Name()}
	switch {
	case e.Type()&fs.ModeSymlink != 0:
		f.Problem = "the skill file is a symbolic link, which is never read: copy the file in"
	case e.IsDir():
		f.Problem = "the skill file is a folder"
	case !e.Type().IsRegular():
		f.Problem = "the skill file is not a regular file"
	case f.File != SkillFile:
		f.Problem = fmt.Sprintf("the skill file must be named %s, not %s", SkillFile, f.File)
	}
	return f, true
}

// Hidden is a hidden folder of a skills folder that holds skills: Scan and
// Validate pass over it, and list and validate say so. A skill folder is
// never hidden (a skill's name cannot start with a dot); catalogues such as
// openai/skills keep groups of skills in hidden folders (.curated, .system).
type Hidden struct {
	// Dir is the folder's name (".curated").
	Dir string
	// Skills counts its immediate subfolders that hold a skill file.
	Skills int
	// HasSkillFile reports a skill file in the folder itself.
	HasSkillFile bool
}

// HiddenFolders lists, in name order, the hidden folders of fsys (.git
// aside) that hold a skill file, or subfolders that do.
func HiddenFolders(fsys fs.FS) ([]Hidden, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("the skills folder cannot be read: %w", err)
	}
	var out []Hidden
	for _, e := range entries {
		dir := e.Name()
		if !e.IsDir() || !strings.HasPrefix(dir, ".") || skipDirs[dir] {
			continue
		}
		h := Hidden{Dir: dir}
		_, h.HasSkillFile = skillFileOf(fsys, dir)
		if sub, err := fs.Sub(fsys, dir); err == nil {
			inner, _ := skillFolders(sub)
			h.Skills = len(inner)
		}
		if h.HasSkillFile || h.Skills > 0 {
			out = append(out, h)
		}
	}
	return out, nil
}
