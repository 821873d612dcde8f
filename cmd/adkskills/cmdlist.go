package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/depcheck"
	"github.com/adkskills/adkskills/internal/skillfs"
)

var listAbout = fmt.Sprintf(`Lists the skills of the skills folder: name, description and the files
run_skill_script can run (by extension, or by a #! line; entry points
first, at most %d named), then the skill folders that cannot be loaded, with
the reason (run adkskills validate for every problem, with line numbers).
Hidden folders are not skills; those holding skill folders (as .curated
does in openai/skills) are named on stderr, with the --skills to list them.`, skillfs.MaxListedScripts)

func listCommand(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet("list", "adkskills list [--skills DIR]", listAbout)
	skills := skillsFlag(fs)
	pos, _, code, done := c.parse(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.unexpectedDir(fs, pos, "list the skills in")
	}
	dir := c.skillsDir(*skills)
	root, err := c.openSkills(dir)
	if err != nil {
		c.errorf("%v", err)
		return exitUsage
	}
	defer root.Close()
	src := skillfs.New(root.FS(), c.logger(slog.LevelError))
	found, err := src.Scan()
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	table := codeexec.DefaultInterpreters()
	w := c.stdout
	var problems []skillfs.Skill
	valid := 0
	for _, sk := range found {
		if sk.Err != nil {
			problems = append(problems, sk)
			continue
		}
		valid++
		fm := sk.Parsed.Frontmatter
		fmt.Fprintln(w, fm.Name)
		wrap(w, fm.Description, "    ", 80)
		for _, warning := range sk.Parsed.Warnings {
			wrap(w, "warning: "+warning, "    ", 80)
		}
		scripts, err := skillfs.Scripts(ctx, src, fm.Name, table)
		switch {
		case err != nil:
			fmt.Fprintf(w, "    scripts: cannot be listed: %v\n", err)
		case len(scripts) == 0:
			fmt.Fprintln(w, "    scripts: none")
		default:
			fmt.Fprintf(w, "    scripts: %s\n", skillfs.ListScripts(scripts))
		}
	}
	hidden := c.hiddenNotes(root, dir, "list")
	if len(found) == 0 {
		fmt.Fprintf(w, "no skills in %s (a skill is a folder holding a %s)\n", dir, skillfs.SkillFile)
		return exitOK
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "\n%s cannot be loaded:\n", plural(len(problems), "skill folder", "skill folders"))
		for _, sk := range problems {
			// The reason starts with the skill file's path in the folder.
			msg := sk.Err.Error()
			file := filepath.Join(dir, sk.Dir)
			if rest, ok := strings.CutPrefix(msg, sk.Dir+"/"+skillfs.SkillFile+": "); ok {
				file, msg = filepath.Join(file, skillfs.SkillFile), rest
			}
			fmt.Fprintf(w, "%s: %s\n", file, msg)
		}
	}
	fmt.Fprintf(w, "\n%s in %s", plural(valid, "skill", "skills"), dir)
	if len(problems) > 0 {
		fmt.Fprintf(w, "; %s cannot be loaded (adkskills validate shows every problem)", plural(len(problems), "folder", "folders"))
	}
	if hidden > 0 {
		fmt.Fprintf(w, "; %s skipped", plural(hidden, "hidden folder", "hidden folders"))
	}
	fmt.Fprintln(w)
	return exitOK
}

// unexpectedDir is the usage error of list and validate given a folder
// where --skills was meant: one argument is taken for that folder.
func (c *cli) unexpectedDir(fs *flagSet, pos []string, purpose string) int {
	if len(pos) > 1 {
		return c.usageError(fs, "%s: unexpected argument %q", fs.Name(), pos[0])
	}
	return c.usageError(fs, "%s: unexpected argument %q: to %s %s, run adkskills %s --skills %s",
		fs.Name(), pos[0], purpose, pos[0], fs.Name(), shellWord(pos[0]))
}

// hiddenNotes says, on stderr, which hidden folders of the skills folder dir
// hold skills that list and validate passed over, and how to include them.
// It returns how many it named.
func (c *cli) hiddenNotes(root *os.Root, dir, command string) int {
	hidden, err := skillfs.HiddenFolders(root.FS())
	if err != nil {
		return 0
	}
	for _, h := range hidden {
		p := filepath.Join(dir, h.Dir)
		switch {
		case h.Skills > 0:
			c.errorf("%s: a hidden folder, skipped: for its %s, run adkskills %s --skills %s",
				p, plural(h.Skills, "skill folder", "skill folders"), command, shellWord(p))
		default:
			c.errorf("%s: a hidden folder, skipped: it holds a %s, but a skill's name (its folder's) cannot start with a dot",
				p, skillfs.SkillFile)
		}
	}
	return len(hidden)
}

// wrap writes text word-wrapped to width columns, each line indented.
func wrap(w io.Writer, text, indent string, width int) {
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		fmt.Fprintln(w, line)
	}
}

// dependencyReport prints, for the Python and Node scripts of skills (only:
// that one), what their dependencies need, and returns how many errors and
// notes it printed.
func (c *cli) dependencyReport(ctx context.Context, root *os.Root, dir string, skills []string, only, python string) (errs, notes int) {
	node := "node"
	if _, err := exec.LookPath(node); err != nil {
		node = ""
	}
	for _, sk := range skills {
		if only != "" && sk != only {
			continue
		}
		skill, err := fs.Sub(root.FS(), sk)
		if err != nil {
			continue
		}
		var scripts []string
		_ = fs.WalkDir(skill, ".", func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil
			case d.IsDir() && p != "." && strings.HasPrefix(d.Name(), "."), d.IsDir() && d.Name() == "node_modules":
				return fs.SkipDir
			case d.Type().IsRegular() && slices.Contains([]string{".py", ".js", ".mjs", ".cjs"}, path.Ext(p)):
				scripts = append(scripts, p)
			}
			return nil
		})
		report, err := depcheck.Check(ctx, skill, scripts, python, node, "")
		if err != nil {
			c.errorf("validate --deps: %v", err)
			return errs + 1, notes
		}
		for _, s := range report {
			where := filepath.Join(dir, sk, filepath.FromSlash(s.Path))
			switch {
			case s.Err != nil:
				fmt.Fprintf(c.stdout, "%s: error: dependencies: %v\n", where, s.Err)
				errs++
			case len(s.MissingImports) > 0:
				fmt.Fprintf(c.stdout, "%s: error: imports %s, which nothing installed or declared provides: it cannot run\n", where, strings.Join(s.MissingImports, ", "))
				errs++
			}
			if len(s.Declared) > 0 {
				fmt.Fprintf(c.stdout, "%s: note: declares %s (in %s)", where, strings.Join(s.Declared, ", "), s.Source)
				if len(s.Unsatisfied) > 0 {
					fmt.Fprintf(c.stdout, "; not installed yet: %s (the first run installs them, unless --no-install)", strings.Join(s.Unsatisfied, ", "))
				}
				fmt.Fprintln(c.stdout)
				notes++
			}
		}
	}
	return errs, notes
}

// plural formats "1 skill", "2 skills".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

const validateAbout = `Checks every skill folder against the Agent Skills rules: the frontmatter
parses (errors with line numbers), name and description follow the rules of
ADK's own parser, the name matches the folder, scripts/ holds only files an
interpreter runs. Keys outside the specification are warnings. Prints one
FILE:LINE: message line per problem, then a summary; the exit status is 1
when there is any error, or no skill at all. DIR may also be a single skill
folder. Hidden folders are not skills; those holding skill folders (as
.curated does in openai/skills) are named on stderr, with the --skills to
check them.

With --deps it also lists, per script, the dependencies it declares and
those --python (and node) and the dependency store cannot satisfy without
installing, and the modules a Python script imports that nothing provides:
a script that imports such a module is an error, since it cannot run.`

func validateCommand(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet("validate", "adkskills validate [--skills DIR] [--deps [--python PROGRAM]]", validateAbout)
	skills := skillsFlag(fs)
	checkDeps := fs.Bool("deps", false, "check what each script's dependencies need (never installs)")
	python := fs.String("python", "python3", "with --deps, the Python that runs .py scripts: a `PROGRAM` in PATH or an absolute path")
	pos, _, code, done := c.parse(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.unexpectedDir(fs, pos, "check the skills in")
	}
	dir := c.skillsDir(*skills)
	fi, err := os.Stat(c.abs(dir))
	if err != nil || !fi.IsDir() {
		c.errorf("skills folder %s does not exist or is not a folder (set --skills%s)", dir, c.exampleHint(dir))
		return exitUsage
	}
	// A single skill folder is validated as the only skill of its parent.
	base, only := c.abs(dir), ""
	if _, err := os.Stat(filepath.Join(base, skillfs.SkillFile)); err == nil {
		abs, err := filepath.Abs(base)
		if err != nil {
			c.errorf("%v", err)
			return exitFailure
		}
		base, only = filepath.Dir(abs), filepath.Base(abs)
		dir = filepath.Dir(filepath.Clean(dir))
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	defer root.Close()
	report, err := skillfs.Validate(root.FS(), codeexec.DefaultInterpreters())
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	nSkills, errs, warns := 0, 0, 0
	for _, s := range report.Skills {
		if only == "" || s == only {
			nSkills++
		}
	}
	for _, p := range report.Problems {
		if only != "" && !strings.HasPrefix(p.Path, only+"/") {
			continue
		}
		if p.Severity == skillfs.SeverityError {
			errs++
		} else {
			warns++
		}
		p.Path = filepath.Join(dir, filepath.FromSlash(p.Path))
		fmt.Fprintln(c.stdout, p)
	}
	if *checkDeps {
		e, w := c.dependencyReport(ctx, root, dir, report.Skills, only, *python)
		errs, warns = errs+e, warns+w
	}
	hidden := 0
	if only == "" {
		hidden = c.hiddenNotes(root, dir, "validate")
	}
	fmt.Fprintf(c.stdout, "%s, %s (%s, %s)\n", plural(nSkills, "skill", "skills"),
		plural(errs+warns, "problem", "problems"), plural(errs, "error", "errors"), plural(warns, "warning", "warnings"))
	if nSkills == 0 {
		why := fmt.Sprintf("no skills in %s: a skill is a folder in it holding a %s", dir, skillfs.SkillFile)
		if hidden > 0 {
			why += " (hidden folders aside: see above)"
		}
		c.errorf("validate: %s", why)
		return exitFailure
	}
	if errs > 0 {
		return exitFailure
	}
	return exitOK
}
