package skillfs

import (
	"fmt"
	"os"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adkskills/adkskills/codeexec"
)

// want is an expected problem: its file (relative to the skill folder),
// line, severity and a piece of its message.
type want struct {
	file string
	line int
	sev  Severity
	msg  string
}

func errAt(file string, line int, msg string) want { return want{file, line, SeverityError, msg} }
func warnAt(file string, line int, msg string) want {
	return want{file, line, SeverityWarning, msg}
}

// checkProblems asserts that got holds exactly the wanted problems of the
// skill folder dir, in order.
func checkProblems(t *testing.T, dir string, got []Problem, wants []want) {
	t.Helper()
	var mine []Problem
	for _, p := range got {
		if strings.HasPrefix(p.Path, dir+"/") || (dir == "" && !strings.Contains(p.Path, "/")) {
			mine = append(mine, p)
		}
	}
	require.Len(t, mine, len(wants), "problems of %q: %v", dir, mine)
	for i, w := range wants {
		p := mine[i]
		assert.Equal(t, path.Join(dir, w.file), p.Path, "problem %d: %s", i, p)
		assert.Equal(t, w.line, p.Line, "problem %d: %s", i, p)
		assert.Equal(t, w.sev, p.Severity, "problem %d: %s", i, p)
		assert.Contains(t, p.Msg, w.msg, "problem %d", i)
	}
}

// TestValidateBadSkills checks each folder of testdata/badskills for exactly
// the problems it was written to have.
func TestValidateBadSkills(t *testing.T) {
	r, err := Validate(os.DirFS("../../testdata/badskills"), codeexec.DefaultInterpreters())
	require.NoError(t, err)
	tests := []struct {
		dir   string
		wants []want
	}{
		{"Bad_Name", []want{errAt("SKILL.md", 2, `invalid name "Bad_Name": name may only contain lowercase alphanumeric`)}},
		{"name-mismatch", []want{errAt("SKILL.md", 2, `the name "other-name" does not match the folder name "name-mismatch"`)}},
		{"missing-description", []want{errAt("SKILL.md", 1, "no description")}},
		{"long-description", []want{errAt("SKILL.md", 3, "invalid description (1025 characters): description must be between 1 and 1024 characters long; adkskills still loads the skill, other clients may refuse it")}},
		{"unclosed-frontmatter", []want{errAt("SKILL.md", 1, "no closing '---' line")}},
		// The colon inside the unquoted value on line 4 of the file.
		{"yaml-syntax", []want{errAt("SKILL.md", 4, "invalid YAML: yaml: mapping values are not allowed")}},
		{"list-description", []want{errAt("SKILL.md", 3, `"description" must be a string, got a list`)}},
		{"extra-keys", []want{
			warnAt("SKILL.md", 4, `unknown frontmatter key "argument-hint"`),
			warnAt("SKILL.md", 5, `unknown frontmatter key "version"`),
		}},
		{"unsupported-script", []want{warnAt("scripts/tool.rb", 0, `its #! line names ruby, which no interpreter runs`)}},
		{"good-skill", nil},
	}
	var dirs []string
	for _, tt := range tests {
		dirs = append(dirs, tt.dir)
		t.Run(tt.dir, func(t *testing.T) {
			checkProblems(t, tt.dir, r.Problems, tt.wants)
		})
	}
	assert.ElementsMatch(t, dirs, r.Skills, "every folder of testdata/badskills has a case")
	assert.Equal(t, 7, r.Errors())
}

// TestValidateAgreesWithLoader: a skill has an error in its SKILL.md
// exactly when the lenient loader the toolset uses cannot load it, so
// "validate passes" means "the agent sees the skill". The one exception is a
// description over the limit: an error for validate, a warning for the
// loader, which loads the skill anyway.
func TestValidateAgreesWithLoader(t *testing.T) {
	for _, root := range []string{"../../testdata/badskills", "../../testdata/skills"} {
		fsys := os.DirFS(root)
		r, err := Validate(fsys, codeexec.DefaultInterpreters())
		require.NoError(t, err)
		skills, err := New(fsys, nil).Scan()
		require.NoError(t, err)
		require.NotEmpty(t, skills)
		for _, sk := range skills {
			var errs []Problem
			for _, p := range r.Problems {
				if p.Path == sk.Dir+"/"+SkillFile && p.Severity == SeverityError {
					errs = append(errs, p)
				}
			}
			if sk.Err == nil && len(sk.Parsed.Warnings) > 0 {
				require.Len(t, errs, 1, "%s/%s: warnings %v", root, sk.Dir, sk.Parsed.Warnings)
				assert.Contains(t, errs[0].Msg, "invalid description")
				assert.Contains(t, sk.Parsed.Warnings[0], "the description is")
				continue
			}
			assert.Equal(t, sk.Err != nil, len(errs) > 0, "%s/%s: loader error %v, problems %v", root, sk.Dir, sk.Err, r.Problems)
		}
	}
}

// TestValidateRepositorySkills: the bundled skills have no error; the
// keys other clients use are warnings.
func TestValidateRepositorySkills(t *testing.T) {
	r, err := Validate(os.DirFS("../../testdata/skills"), codeexec.DefaultInterpreters())
	require.NoError(t, err)
	assert.Equal(t, []string{"node-tools", "office-roundtrip", "py-tools", "report-writer", "shell-tools"}, r.Skills)
	assert.Zero(t, r.Errors(), "%v", r.Problems)
	checkProblems(t, "shell-tools", r.Problems, []want{
		warnAt("SKILL.md", 4, `"argument-hint"`),
		warnAt("SKILL.md", 5, `"user-invocable"`),
		warnAt("SKILL.md", 6, `"version"`),
	})
}

func skillMD(front, body string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\n" + front + "---\n" + body)}
}

const okFront = "name: s\ndescription: Does things. Use it for tests.\n"

// TestValidateCases covers the rules the testdata folders do not.
func TestValidateCases(t *testing.T) {
	tests := []struct {
		name  string
		fsys  fstest.MapFS
		wants []want // problems of the skill folder "s"
		root  []want // problems at the root of the skills folder
	}{
		{name: "valid", fsys: fstest.MapFS{"s/SKILL.md": skillMD(okFront, "# S\n")}},
		{name: "null metadata", fsys: fstest.MapFS{"s/SKILL.md": skillMD(okFront+"metadata:\n", "")}},
		{name: "body at the recommended length", fsys: fstest.MapFS{"s/SKILL.md": skillMD(okFront, strings.Repeat("line\n", MaxBodyLines))}},
		{
			name: "caches and version control are not scripts",
			fsys: fstest.MapFS{
				"s/SKILL.md":                      skillMD(okFront, ""),
				"s/scripts/__pycache__/x.bin":     {Data: []byte{0}},
				"s/scripts/.git/objects/ab/cdef0": {Data: []byte{0}},
			},
		},
		{
			name:  "empty description",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD("name: s\ndescription: \"\"\n", "")},
			wants: []want{errAt("SKILL.md", 3, "the description is empty")},
		},
		{
			name:  "null description",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD("name: s\ndescription:\n", "")},
			wants: []want{errAt("SKILL.md", 3, "the description is empty")},
		},
		{
			name:  "missing name",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD("description: Does things.\n", "")},
			wants: []want{errAt("SKILL.md", 1, "no name: add name: s")},
		},
		{
			name: "bad name and mismatch and missing description reported together",
			fsys: fstest.MapFS{"s/SKILL.md": skillMD("license: MIT\nname: -s\n", "")},
			wants: []want{
				errAt("SKILL.md", 1, "no description"),
				errAt("SKILL.md", 3, `invalid name "-s": name must not start or end with a hyphen`),
				errAt("SKILL.md", 3, `does not match the folder name "s"`),
			},
		},
		{
			name:  "description over 1024 bytes in fewer characters",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD("name: s\ndescription: "+strings.Repeat("é", 600)+"\n", "")},
			wants: []want{errAt("SKILL.md", 3, "(600 characters, 1200 bytes (ADK counts bytes))")},
		},
		{
			name:  "compatibility over 500",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD(okFront+"compatibility: "+strings.Repeat("c", 501)+"\n", "")},
			wants: []want{errAt("SKILL.md", 4, "invalid compatibility (501 characters): compatibility must not exceed 500 characters")},
		},
		{
			name: "metadata values that are not strings",
			fsys: fstest.MapFS{"s/SKILL.md": skillMD(okFront+"metadata:\n  tags: [a, b]\n  ok: yes\n  nested:\n    k: v\n", "")},
			wants: []want{
				errAt("SKILL.md", 5, `metadata "tags" must be a string, got a list`),
				errAt("SKILL.md", 7, `metadata "nested" must be a string, got a mapping`),
			},
		},
		{
			// Only ADK's parser catches this one: the fallback reports it.
			name:  "allowed-tools ADK cannot split",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD(okFront+"allowed-tools: Bash(git\n", "")},
			wants: []want{errAt("SKILL.md", 4, "ADK's parser refuses the frontmatter: allowed-tools must be a whitespace- or comma-separated list")},
		},
		{
			name:  "metadata as a string",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD(okFront+"metadata: none\n", "")},
			wants: []want{errAt("SKILL.md", 4, `"metadata" must be a mapping, got a string`)},
		},
		{
			name:  "frontmatter not opened",
			fsys:  fstest.MapFS{"s/SKILL.md": &fstest.MapFile{Data: []byte("# S\nname: s\n")}},
			wants: []want{errAt("SKILL.md", 1, "must start with a '---' line")},
		},
		{
			name:  "frontmatter is a list",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD("- name\n- description\n", "")},
			wants: []want{errAt("SKILL.md", 2, "must be a YAML mapping")},
		},
		{
			name:  "duplicate key",
			fsys:  fstest.MapFS{"s/SKILL.md": skillMD(okFront+"name: s\n", "")},
			wants: []want{errAt("SKILL.md", 4, `duplicate key "name" (first on line 2)`)},
		},
		{
			name: "body over the recommended length",
			fsys: fstest.MapFS{"s/SKILL.md": skillMD(okFront, strings.Repeat("line\n", MaxBodyLines+1))},
			// The body starts after the 4 frontmatter lines.
			wants: []want{warnAt("SKILL.md", 5, fmt.Sprintf("the body is %d lines long", MaxBodyLines+1))},
		},
		{
			name: "scripts: data, templates and helpers may sit beside scripts; a program no interpreter runs is a warning",
			fsys: fstest.MapFS{
				"s/SKILL.md":                         skillMD(okFront, ""),
				"s/scripts/README.md":                {Data: []byte("notes")},
				"s/scripts/requirements.txt":         {Data: []byte("requests")},
				"s/scripts/office/schemas/wml.xsd":   {Data: []byte("<?xml version=\"1.0\"?>")},
				"s/scripts/templates/comments.xml":   {Data: []byte("<w:comments/>")},
				"s/scripts/shadcn-components.tar.gz": {Data: []byte("\x1f\x8b")},
				"s/scripts/lib/helper.py":            {Data: []byte("")},
				"s/scripts/Tool.RB":                  {Data: []byte("")},
				"s/scripts/tool":                     {Data: []byte("#!/usr/bin/env python3\nprint(1)\n")},
				"s/scripts/run":                      {Data: []byte("#!/bin/sh\n")},
				"s/scripts/native":                   {Data: []byte("\x7fELF"), Mode: 0o755},
				"s/assets/logo.rb":                   {Data: []byte("#!/usr/bin/env ruby\n")}, // not under scripts/
			},
			wants: []want{
				warnAt("scripts/native", 0, "it is executable, but no interpreter runs it, so run_skill_script cannot run it (supported: .py"),
				warnAt("scripts/run", 0, "its #! line names sh, which no interpreter runs"),
			},
		},
		{
			name: "symbolic link",
			fsys: fstest.MapFS{
				"s/SKILL.md":        skillMD(okFront, ""),
				"s/references/link": {Data: []byte("/etc/passwd"), Mode: os.ModeSymlink},
			},
			wants: []want{warnAt("references/link", 0, "symbolic link")},
		},
		{
			name:  "skill file spelt in lower case",
			fsys:  fstest.MapFS{"s/skill.md": skillMD(okFront, "")},
			wants: []want{errAt("skill.md", 0, "must be named SKILL.md, not skill.md")},
		},
		{
			name: "skills folder that is itself a skill",
			fsys: fstest.MapFS{"SKILL.md": skillMD(okFront, ""), "s/SKILL.md": skillMD(okFront, "")},
			root: []want{errAt("SKILL.md", 0, "this folder is itself a skill")},
		},
		{
			name: "folders without a skill file and hidden folders are not skills",
			fsys: fstest.MapFS{
				"s/SKILL.md":           skillMD(okFront, ""),
				"notes/readme.txt":     {Data: []byte("x")},
				".git/SKILL.md":        {Data: []byte("junk")},
				"__pycache__/SKILL.md": {Data: []byte("junk")},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Validate(tt.fsys, codeexec.DefaultInterpreters())
			require.NoError(t, err)
			checkProblems(t, "s", r.Problems, tt.wants)
			checkProblems(t, "", r.Problems, tt.root)
			assert.Equal(t, []string{"s"}, r.Skills)
		})
	}
}

// TestValidateInterpreterTable: the table decides which scripts are
// runnable.
func TestValidateInterpreterTable(t *testing.T) {
	fsys := fstest.MapFS{
		"s/SKILL.md":        skillMD(okFront, ""),
		"s/scripts/tool.rb": {Data: []byte("")},
		"s/scripts/x.py":    {Data: []byte("#!/usr/bin/env python3\n")},
		"s/scripts/rake":    {Data: []byte("#!/usr/bin/env ruby\n")},
	}
	ruby := codeexec.Interpreters{{Language: "ruby", Extensions: []string{".rb"}, Command: []string{"ruby"}}}
	r, err := Validate(fsys, ruby)
	require.NoError(t, err)
	checkProblems(t, "s", r.Problems, []want{warnAt("scripts/x.py", 0, "names python3, which no interpreter runs, so run_skill_script cannot run it (supported: .rb, or a #! line naming ruby)")})
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Path: "s/SKILL.md", Line: 3, Severity: SeverityError, Msg: "bad"}, "s/SKILL.md:3: bad"},
		{Problem{Path: "s/SKILL.md", Line: 4, Severity: SeverityWarning, Msg: "odd"}, "s/SKILL.md:4: warning: odd"},
		{Problem{Path: "s/scripts/x.rb", Severity: SeverityError, Msg: "bad"}, "s/scripts/x.rb: bad"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.p.String())
	}
}

func TestValidateUnreadableFolder(t *testing.T) {
	_, err := Validate(os.DirFS(t.TempDir()+"/missing"), codeexec.DefaultInterpreters())
	require.Error(t, err)
}

// TestValidateCatalogueShapes: skills shaped like the public catalogues'
// (schemas, templates, archives and helper modules beside scripts, scripts
// without an extension, scripts for other platforms) have no problem but
// the one genuine violation, a description over the limit, which still
// loads.
func TestValidateCatalogueShapes(t *testing.T) {
	fsys := os.DirFS(catalogue)
	r, err := Validate(fsys, codeexec.DefaultInterpreters())
	require.NoError(t, err)
	assert.Equal(t, []string{"art-templates", "office-docs", "screen-capture", "shebang-tool", "web-builder", "wordy-api"}, r.Skills)
	require.Len(t, r.Problems, 1, "%v", r.Problems)
	checkProblems(t, "wordy-api", r.Problems, []want{errAt("SKILL.md", 3, "invalid description (1068 characters)")})

	skills, err := New(fsys, nil).Scan()
	require.NoError(t, err)
	require.Len(t, skills, len(r.Skills), "list counts what validate counts")
	for _, sk := range skills {
		assert.NoError(t, sk.Err, "every skill loads")
	}
}
