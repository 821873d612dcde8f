package skilltoolset

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/adkskills/adkskills/tools/runscript"
)

type instructionConfig struct {
	hasExecutor bool
	runScript   bool
	inline      bool
	languages   []string
	extra       string
}

// buildInstruction writes the system instruction for one configuration. It
// replaces ADK's default, which says scripts run "via bash" and forbids other
// tools on skill files.
func buildInstruction(c instructionConfig) string {
	var b strings.Builder
	b.WriteString("You can use Agent Skills: folders of instructions, scripts and resources for specialized tasks. " +
		"The skills available to you are listed in <available_skills> below.\n\n")
	b.WriteString("1. If a skill looks relevant to the user's request, call `load_skill` with `name=\"<SKILL_NAME>\"` to read its instructions first, then follow them step by step before you answer.\n")
	b.WriteString("2. Paths inside a skill are relative to the skill's root folder (the folder holding SKILL.md), e.g. `references/guide.md` or `scripts/report.py`. `load_skill_resource` reads such a file. " +
		"A long SKILL.md or file keeps its beginning and end around a marker that says how much was cut; the answer's `warning` says how to read the rest, " +
		"and `load_skill_resource` with `offset` and `length` (in characters) reads any part of a file.\n")
	n := 3
	step := func(s string) {
		b.WriteString(strings.TrimSpace(strconv.Itoa(n) + ". " + s))
		b.WriteString("\n")
		n++
	}
	switch {
	case c.runScript:
		step("`run_skill_script` runs a script shipped with a skill: give `skill_name`, `script_path` relative to the skill's root folder " +
			"(e.g. `scripts/report.py`, never an absolute path), `args` as a list of strings, and optional `stdin`. " +
			"The script's working directory is the skill's root folder. When a skill's instructions show a command such as " +
			"`python scripts/report.py --out report.pdf`, call `run_skill_script` with `script_path` `scripts/report.py` and `args` `[\"--out\", \"report.pdf\"]`: do not try to run a shell.")
	case !c.hasExecutor:
		step("Scripts cannot be run in this agent: no code executor is configured. You may read a script with `load_skill_resource`.")
	}
	if c.runScript || c.inline {
		step("A run returns `status` (success, error or timeout), `exit_code`, `stdout` and `stderr`. Very long output keeps its beginning and end around a marker that says how much was cut. " +
			"Every file the script writes in its working directory is saved as an artifact and listed in `output_files` with its `name`, `artifact` and `version`; the file's content is not in the response. " +
			"Tell the user which artifacts were produced, by artifact name.")
		step("Every run starts from a fresh copy of the skill's folder. To give a script files of this session (a file the user uploaded, or files an earlier run wrote), " +
			"list them in `input_files`: artifact names, file paths as `output_files[].name` reports them, or globs over those paths " +
			"(`*` within one folder, `**` across folders, e.g. `unpacked/**`). Each file is placed at its path in the working directory before the script starts, " +
			"so a tree an earlier run wrote comes back as the same tree; pass paths in `args` as the script expects them. " +
			"A file the run leaves unchanged is not reported again; a changed one is saved as a new version of the same artifact. " +
			"A file the run deletes, renames or moves away is listed in `deleted_files` and leaves the session's files: paths and globs no longer pass it in, " +
			"so the next run gets the tree as this one left it.")
	}
	if c.inline {
		step("`run_skill_inline_script` runs code you write (language: " + strings.Join(c.languages, ", ") + "), optionally inside a skill's folder with `skill_name`. " +
			"A human must approve every call, so prefer a skill's own scripts and keep inline scripts short and clear.")
	}
	step("An `error_code` ending in `_FATAL` means stop: do not call the tool again for this request; tell the user what failed.")
	if c.extra != "" {
		b.WriteString("\n")
		b.WriteString(c.extra)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// maxListedFilesChars bounds the list of the session's files the
// instruction carries: a session with thousands of files lists what fits
// and counts the rest, which a glob selects.
const maxListedFilesChars = 2_000

// sessionFilesNote is the instruction's list of the files input_files can
// pass in, by path, quoted so that a name reads as data; "" when the
// session has none.
func sessionFilesNote(files []runscript.SessionFile) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Files of this session that `input_files` can pass in, by path (%d): ", len(files))
	used := 0
	for i, f := range files {
		q := strconv.Quote(f.Path)
		if used+len(q) > maxListedFilesChars {
			fmt.Fprintf(&b, "… and %d more (select them with a glob).", len(files)-i)
			return b.String()
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q)
		used += len(q) + 2
	}
	b.WriteString(".")
	return b.String()
}
