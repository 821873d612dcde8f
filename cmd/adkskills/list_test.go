package main

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestList(t *testing.T) {
	tests := []struct {
		name   string
		skills string
		stdout []string // pieces, in order
		absent []string
	}{
		{
			name:   "bundled skills",
			skills: testSkills(t),
			stdout: []string{
				"node-tools\n    Node.js scripts", "    scripts: scripts/echo.js\n",
				"office-roundtrip\n", "    scripts: scripts/edit.py, scripts/pack.py, scripts/unpack.py\n",
				"py-tools\n", "    scripts: scripts/env.py, scripts/fail.py, scripts/upper.py\n",
				"report-writer\n    Writes a short report about a person (Markdown, JSON and a PNG badge) from\n    the cards in its folder.",
				"    scripts: scripts/fmt_helpers.py, scripts/report.py\n",
				"shell-tools\n", "\n5 skills in ",
			},
			absent: []string{"cannot be loaded", "SKILL.md", "cards/greeting.txt"},
		},
		{
			name:   "skills with problems",
			skills: badSkills(t),
			stdout: []string{
				"extra-keys\n", "good-skill\n", "    scripts: scripts/hello.py\n",
				"long-description\n    xxxx", "    warning: the description is 1025 characters, over the limit of 1024: the\n    skill is loaded with it whole, but other clients may refuse it\n",
				"unsupported-script\n", "    scripts: scripts/ok.py\n",
				"6 skill folders cannot be loaded:\n",
				filepath.Join(badSkills(t), "Bad_Name", "SKILL.md") + ": line 2: name may only contain lowercase",
				filepath.Join(badSkills(t), "missing-description", "SKILL.md") + ": description must be between 1 and 1024 characters long\n",
				filepath.Join(badSkills(t), "yaml-syntax", "SKILL.md") + ": line 4: invalid YAML",
				"\n4 skills in " + badSkills(t) + "; 6 folders cannot be loaded (adkskills validate shows every problem)\n",
			},
			absent: []string{"scripts/tool.rb"},
		},
		{
			name:   "no skills",
			skills: t.TempDir(),
			stdout: []string{"no skills in "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := invoke(t, invocation{args: []string{"list", "--skills", tt.skills}})
			assert.Equal(t, exitOK, o.code, o.stderr)
			assert.Empty(t, o.stderr)
			rest := o.stdout
			for _, piece := range tt.stdout {
				i := strings.Index(rest, piece)
				if !assert.GreaterOrEqual(t, i, 0, "stdout lacks %q (in order):\n%s", piece, o.stdout) {
					break
				}
				rest = rest[i+len(piece):]
			}
			for _, a := range tt.absent {
				assert.NotContains(t, o.stdout, a)
			}
		})
	}
}

func TestValidateCommand(t *testing.T) {
	single := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(single, "solo", "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(single, "solo", "SKILL.md"), []byte("---\nname: solo\ndescription: One skill.\nversion: 2\n---\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(single, "solo", "scripts", "x.rb"), []byte("#!/usr/bin/env ruby\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(single, "other"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(single, "other", "SKILL.md"), []byte("---\nname: wrong\n---\n"), 0o644))
	bad := badSkills(t)
	tests := []struct {
		name   string
		skills string
		code   int
		lines  []string // the whole of stdout
	}{
		{
			name:   "bad skills",
			skills: bad,
			code:   exitFailure,
			lines: []string{
				bad + "/Bad_Name/SKILL.md:2: invalid name \"Bad_Name\": name may only contain lowercase alphanumeric characters (a-z, 0-9) and hyphens",
				bad + "/extra-keys/SKILL.md:4: warning: unknown frontmatter key \"argument-hint\": not in the Agent Skills specification, so it is ignored",
				bad + "/extra-keys/SKILL.md:5: warning: unknown frontmatter key \"version\": not in the Agent Skills specification, so it is ignored",
				bad + "/list-description/SKILL.md:3: \"description\" must be a string, got a list",
				bad + "/long-description/SKILL.md:3: invalid description (1025 characters): description must be between 1 and 1024 characters long; adkskills still loads the skill, other clients may refuse it",
				bad + "/missing-description/SKILL.md:1: the frontmatter has no description: add one that says what the skill does and when to use it",
				bad + "/name-mismatch/SKILL.md:2: the name \"other-name\" does not match the folder name \"name-mismatch\"",
				bad + "/unclosed-frontmatter/SKILL.md:1: the frontmatter opened on line 1 has no closing '---' line",
				bad + "/unsupported-script/scripts/tool.rb: warning: its #! line names ruby, which no interpreter runs, so run_skill_script cannot run it (supported: .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or node)",
				bad + "/yaml-syntax/SKILL.md:4: invalid YAML: yaml: mapping values are not allowed in this context",
				"10 skills, 10 problems (7 errors, 3 warnings)",
			},
		},
		{
			name:   "warnings only pass",
			skills: testSkills(t),
			code:   exitOK,
			lines: []string{
				testSkills(t) + "/shell-tools/SKILL.md:4: warning: unknown frontmatter key \"argument-hint\": not in the Agent Skills specification, so it is ignored",
				testSkills(t) + "/shell-tools/SKILL.md:5: warning: unknown frontmatter key \"user-invocable\": not in the Agent Skills specification, so it is ignored",
				testSkills(t) + "/shell-tools/SKILL.md:6: warning: unknown frontmatter key \"version\": not in the Agent Skills specification, so it is ignored",
				"5 skills, 3 problems (0 errors, 3 warnings)",
			},
		},
		{
			name:   "a single skill folder",
			skills: filepath.Join(single, "solo"),
			code:   exitOK,
			lines: []string{
				single + "/solo/SKILL.md:4: warning: unknown frontmatter key \"version\": not in the Agent Skills specification, so it is ignored",
				single + "/solo/scripts/x.rb: warning: its #! line names ruby, which no interpreter runs, so run_skill_script cannot run it (supported: .py, .sh, .bash, .js, .mjs, .cjs, or a #! line naming python3, bash or node)",
				"1 skill, 2 problems (0 errors, 2 warnings)",
			},
		},
		{
			name:   "a single valid skill folder",
			skills: filepath.Join(testSkills(t), "report-writer"),
			code:   exitOK,
			lines:  []string{"1 skill, 0 problems (0 errors, 0 warnings)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := invoke(t, invocation{args: []string{"validate", "--skills", tt.skills}})
			assert.Equal(t, tt.code, o.code, o.stderr)
			assert.Equal(t, strings.Join(tt.lines, "\n")+"\n", o.stdout)
			assert.Empty(t, o.stderr)
		})
	}
}

// TestListAndValidateCountTheSameSkills: on every fixture folder, list's
// "N skills; M folders cannot be loaded" adds up to validate's "N skills".
func TestListAndValidateCountTheSameSkills(t *testing.T) {
	countRe := regexp.MustCompile(`(?m)^(\d+) skills? in .*?(?:; (\d+) folders? cannot be loaded.*)?$`)
	validateRe := regexp.MustCompile(`(?m)^(\d+) skills?, `)
	tests := []struct {
		dir  string
		want int
	}{
		{catalogueSkills(t), 6},
		{badSkills(t), 10},
		{testSkills(t), 5},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.dir), func(t *testing.T) {
			l := invoke(t, invocation{args: []string{"list", "--skills", tt.dir}})
			m := countRe.FindStringSubmatch(l.stdout)
			require.NotNil(t, m, l.stdout)
			loaded, _ := strconv.Atoi(m[1])
			broken, _ := strconv.Atoi(cmp.Or(m[2], "0"))
			v := invoke(t, invocation{args: []string{"validate", "--skills", tt.dir}})
			vm := validateRe.FindStringSubmatch(v.stdout)
			require.NotNil(t, vm, v.stdout)
			counted, _ := strconv.Atoi(vm[1])
			assert.Equal(t, tt.want, counted, "validate")
			assert.Equal(t, tt.want, loaded+broken, "list: %s", m[0])
		})
	}
}

// TestCatalogueShapes: skills shaped like the public catalogues' validate
// with the one genuine violation only, and list names their scripts, a
// script without an extension included.
func TestCatalogueShapes(t *testing.T) {
	dir := catalogueSkills(t)
	v := invoke(t, invocation{args: []string{"validate", "--skills", dir}})
	assert.Equal(t, exitFailure, v.code)
	assert.Equal(t, dir+"/wordy-api/SKILL.md:3: invalid description (1068 characters): description must be between 1 and 1024 characters long; "+
		"adkskills still loads the skill, other clients may refuse it\n6 skills, 1 problem (1 error, 0 warnings)\n", v.stdout)

	l := invoke(t, invocation{args: []string{"list", "--skills", dir}})
	assert.Equal(t, exitOK, l.code, l.stderr)
	for _, piece := range []string{
		"shebang-tool\n", "    scripts: scripts/greet\n",
		"    scripts: scripts/accept.py, scripts/office/unpack.py, scripts/__init__.py, scripts/office/helpers/__init__.py, scripts/office/helpers/runs.py\n",
		"wordy-api\n", "    warning: the description is 1068 characters, over the limit of 1024",
		"\n6 skills in " + dir + "\n",
	} {
		assert.Contains(t, l.stdout, piece)
	}
}

func TestValidateMissingFolder(t *testing.T) {
	o := invoke(t, invocation{args: []string{"validate", "--skills", filepath.Join(t.TempDir(), "nope")}})
	assert.Equal(t, exitUsage, o.code)
	assert.Equal(t, 1, strings.Count(o.stderr, "\n"), o.stderr)
	assert.Contains(t, o.stderr, "does not exist or is not a folder")
}

// TestHiddenAndEmptySkillFolders: list and validate name the hidden folders
// they pass over that hold skills, with the command that includes them, and
// validate of no skill at all fails and says why.
func TestHiddenAndEmptySkillFolders(t *testing.T) {
	layout := func(dirs ...string) string {
		root := t.TempDir()
		for _, d := range dirs {
			require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
			name := filepath.Base(d)
			require.NoError(t, os.WriteFile(filepath.Join(root, d, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: A skill.\n---\n"), 0o644))
		}
		return root
	}
	openai := layout(".curated/a", ".curated/b", ".system/c", ".git/x")
	mixed := layout("good", ".draft")
	empty := t.TempDir()
	noSkills := func(dir string, hidden bool) string {
		s := "adkskills: validate: no skills in " + dir + ": a skill is a folder in it holding a SKILL.md"
		if hidden {
			s += " (hidden folders aside: see above)"
		}
		return s + "\n"
	}
	tests := []struct {
		name     string
		cmd, dir string
		code     int
		stdout   string // a piece of stdout
		stderr   string // the whole of stderr
	}{
		{"validate, skills only in hidden folders", "validate", openai, exitFailure, "0 skills, 0 problems (0 errors, 0 warnings)\n",
			"adkskills: " + openai + "/.curated: a hidden folder, skipped: for its 2 skill folders, run adkskills validate --skills " + openai + "/.curated\n" +
				"adkskills: " + openai + "/.system: a hidden folder, skipped: for its 1 skill folder, run adkskills validate --skills " + openai + "/.system\n" +
				noSkills(openai, true)},
		{"list, skills only in hidden folders", "list", openai, exitOK, "no skills in " + openai,
			"adkskills: " + openai + "/.curated: a hidden folder, skipped: for its 2 skill folders, run adkskills list --skills " + openai + "/.curated\n" +
				"adkskills: " + openai + "/.system: a hidden folder, skipped: for its 1 skill folder, run adkskills list --skills " + openai + "/.system\n"},
		{"validate, the suggested command", "validate", openai + "/.curated", exitOK, "2 skills, 0 problems", ""},
		{"validate, a hidden skill folder", "validate", mixed, exitOK, "1 skill, 0 problems",
			"adkskills: " + mixed + "/.draft: a hidden folder, skipped: it holds a SKILL.md, but a skill's name (its folder's) cannot start with a dot\n"},
		{"list, a hidden skill folder", "list", mixed, exitOK, "1 skill in " + mixed + "; 1 hidden folder skipped\n",
			"adkskills: " + mixed + "/.draft: a hidden folder, skipped: it holds a SKILL.md, but a skill's name (its folder's) cannot start with a dot\n"},
		{"validate, an empty folder", "validate", empty, exitFailure, "0 skills, 0 problems", noSkills(empty, false)},
		{"list, an empty folder", "list", empty, exitOK, "no skills in " + empty, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := invoke(t, invocation{args: []string{tt.cmd, "--skills", tt.dir}})
			assert.Equal(t, tt.code, o.code, o.stderr)
			assert.Contains(t, o.stdout, tt.stdout)
			assert.Equal(t, tt.stderr, o.stderr)
		})
	}
}

// TestValidateDependencies: --deps names what each script declares and
// what is not installed yet, and a script that imports what nothing
// provides is an error; without --deps nothing of it shows.
func TestValidateDependencies(t *testing.T) {
	dir := t.TempDir()
	for p, c := range map[string]string{
		"needy/SKILL.md":            "---\nname: needy\ndescription: Needs packages.\n---\n",
		"needy/scripts/declares.py": "# /// script\n# dependencies = [\"tinydep>=1\"]\n# ///\nimport tinydep\n",
		"needy/scripts/imports.py":  "import json\nimport nosuchmodule_adkskills\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // an empty dependency store
	o := invoke(t, invocation{args: []string{"validate", "--skills", dir, "--deps"}})
	assert.Equal(t, exitFailure, o.code, o.stderr)
	assert.Equal(t, dir+"/needy/scripts/declares.py: note: declares tinydep>=1 (in scripts/declares.py); not installed yet: tinydep>=1 (the first run installs them, unless --no-install)\n"+
		dir+"/needy/scripts/imports.py: error: imports nosuchmodule_adkskills, which nothing installed or declared provides: it cannot run\n"+
		"1 skill, 2 problems (1 error, 1 warning)\n", o.stdout)
	plain := invoke(t, invocation{args: []string{"validate", "--skills", dir}})
	assert.Equal(t, exitOK, plain.code)
	assert.Equal(t, "1 skill, 0 problems (0 errors, 0 warnings)\n", plain.stdout)

	// run --no-install reports what is missing instead of installing it;
	// --python names the interpreter that runs .py scripts.
	run := invoke(t, invocation{args: []string{"run", "--skills", dir, "--no-install", "needy", "scripts/declares.py"}})
	assert.NotEqual(t, exitOK, run.code)
	assert.Contains(t, run.stdout+run.stderr, "the script's declared dependencies are not available, so it did not run: pip could not install tinydep>=1")
	py := invoke(t, invocation{args: []string{"run", "--skills", dir, "--python", "/nonexistent/python9", "needy", "scripts/imports.py"}})
	assert.NotEqual(t, exitOK, py.code)
	assert.Contains(t, py.stdout+py.stderr, "interpreter could not be started")
}
