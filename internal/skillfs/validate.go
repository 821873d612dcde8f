package skillfs

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"google.golang.org/adk/tool/skilltoolset/skill"
	"gopkg.in/yaml.v3"

	"github.com/adkskills/adkskills/internal/valid"
)

// Severity ranks a Problem: errors keep a skill (or a script) from working,
// warnings do not.
type Severity string

// Severities of a Problem.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one finding of Validate.
type Problem struct {
	// Path is the file concerned, relative to the skills folder, with "/"
	// separators ("my-skill/SKILL.md", "my-skill/scripts/tool.rb").
	Path string
	// Line is the 1-based line of Path, or 0 when the problem concerns the
	// whole file.
	Line int
	// Severity is SeverityError or SeverityWarning.
	Severity Severity
	// Msg says what is wrong and, where it helps, how to fix it.
	Msg string
}

// String formats the problem as compilers do: "PATH:LINE: MSG", with
// "warning: " before the message of a warning and no LINE when it is 0.
func (p Problem) String() string {
	loc := p.Path
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.Path, p.Line)
	}
	if p.Severity == SeverityWarning {
		return loc + ": warning: " + p.Msg
	}
	return loc + ": " + p.Msg
}

// Report is the result of Validate.
type Report struct {
	// Skills are the folders checked as skills, in name order.
	Skills []string
	// Problems are sorted by Path, then Line.
	Problems []Problem
}

// Errors counts the problems of SeverityError.
func (r *Report) Errors() int {
	n := 0
	for _, p := range r.Problems {
		if p.Severity == SeverityError {
			n++
		}
	}
	return n
}

// MaxBodyLines is the length of a SKILL.md body the specification
// recommends not to exceed.
const MaxBodyLines = 500

// Validate checks every skill folder of fsys against the Agent Skills rules,
// strictly. A skill folder is an immediate subfolder holding a SKILL.md (or
// a file of that name in another case, an error); hidden folders, .git and
// __pycache__ are not skills; Source.Scan counts the same folders.
//
//   - the frontmatter opens and closes with '---' lines and is YAML, with
//     the line of any syntax error;
//   - name and description are present and pass ADK's own rules
//     (skill.Validate: name format and length, description 1–1024, compatibility
//     at most 500), and name matches the folder name;
//   - each key has the right shape (an unquoted "[TODO: …]" is a list, not
//     a string);
//   - whatever else ADK's parser refuses (skillfs.Parse, which skill sources
//     use to load a skill) is an error too, so a skill with no error loads;
//   - keys outside the specification are warnings: they are ignored when the
//     skill loads;
//   - a file under scripts/ that says it is a program (a #! line, or the
//     executable bit) but that no interpreter of the table runs  is a warning:
//     run_skill_script cannot run it. Other files there are data (schemas,
//     templates, helper modules), which the specification allows beside
//     scripts, and are not reported;
//   - symbolic links (never staged) and bodies over MaxBodyLines are
//     warnings; a folder whose skill file is not spelt SKILL.md is an error.
//
// The error is for a skills folder that cannot be read at all.
func Validate(fsys fs.FS, table Table) (*Report, error) {
	folders, err := skillFolders(fsys)
	if err != nil {
		return nil, fmt.Errorf("the skills folder cannot be read: %w", err)
	}
	r := &Report{}
	if fi, err := fs.Stat(fsys, SkillFile); err == nil && !fi.IsDir() {
		r.Problems = append(r.Problems, Problem{Path: SkillFile, Severity: SeverityError,
			Msg: "this folder is itself a skill: pass the folder that contains skill folders"})
	}
	for _, f := range folders {
		r.Skills = append(r.Skills, f.Dir)
		if f.Problem != "" {
			r.Problems = append(r.Problems, Problem{Path: f.path(), Severity: SeverityError, Msg: f.Problem})
			continue
		}
		content, err := fs.ReadFile(fsys, f.path())
		if err != nil {
			r.Problems = append(r.Problems, Problem{Path: f.path(), Severity: SeverityError,
				Msg: fmt.Sprintf("cannot read: %v", err)})
			continue
		}
		r.Problems = append(r.Problems, checkSkillFile(f.Dir, content)...)
		r.Problems = append(r.Problems, checkFiles(fsys, f.Dir, table)...)
	}
	slices.SortStableFunc(r.Problems, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	return r, nil
}

// checkSkillFile checks one SKILL.md; dir is its folder's name.
func checkSkillFile(dir string, content []byte) []Problem {
	c := &skillFileCheck{dir: dir, file: path.Join(dir, SkillFile), values: map[string]*yaml.Node{}}
	content = bytes.TrimPrefix(content, bom)
	yamlBytes, bodyStart, err := split(content)
	if err != nil {
		c.parseError(err)
		return c.probs
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(yamlBytes, &doc); err != nil {
		c.parseError(yamlError(err))
		return c.probs
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		c.add(2, SeverityError, "the frontmatter must be a YAML mapping of keys to values (name: …, description: …)")
		return c.probs
	}
	c.m = doc.Content[0]
	c.keys()
	c.name()
	c.description()
	c.compatibility()
	// Anything else ADK's parser refuses (a nested metadata value, a
	// malformed allowed-tools) keeps the skill from loading: report it too.
	if !c.explained {
		if _, err := Parse(content); err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				pe = &ParseError{Msg: err.Error()}
			}
			c.add(pe.Line, SeverityError, "ADK's parser refuses the frontmatter: %s", pe.Msg)
		}
	}
	body := content[bodyStart:]
	if n := bytes.Count(body, []byte("\n")); n > MaxBodyLines {
		bodyLine := bytes.Count(content[:bodyStart], []byte("\n")) + 1
		c.add(bodyLine, SeverityWarning, "the body is %d lines long; the specification recommends under %d: move details to references/", n, MaxBodyLines)
	}
	return c.probs
}

// skillFileCheck is the check of one SKILL.md. Each field is checked on its
// own through ADK's skill.Validate, with valid stand-ins for the other
// fields, so every problem is reported and the rules stay ADK's.
type skillFileCheck struct {
	dir, file string
	m         *yaml.Node            // the frontmatter mapping
	values    map[string]*yaml.Node // the specification's keys, well shaped
	probs     []Problem
	// explained records an error that Parse would also find, so its own
	// verdict is added only when none explains it.
	explained bool
}

// standIn is the valid value the other fields get while one is checked.
const standIn = "x"

func (c *skillFileCheck) add(line int, sev Severity, format string, args ...any) {
	c.probs = append(c.probs, Problem{Path: c.file, Line: line, Severity: sev, Msg: fmt.Sprintf(format, args...)})
}

// parseError adds the problem err, with its line when it has one.
func (c *skillFileCheck) parseError(err error) {
	var pe *ParseError
	if errors.As(err, &pe) {
		c.add(pe.Line, SeverityError, "%s", pe.Msg)
	} else {
		c.add(0, SeverityError, "%v", err)
	}
}

// keys reports duplicate, unknown and ill-shaped keys and keeps the rest.
func (c *skillFileCheck) keys() {
	seen := map[string]int{}
	for i := 0; i < len(c.m.Content); i += 2 {
		k, v := c.m.Content[i], c.m.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			c.add(k.Line+1, SeverityError, "duplicate key %q (first on line %d)", k.Value, first)
			c.explained = true
			continue
		}
		seen[k.Value] = k.Line + 1
		if !isSpecKey(k.Value) {
			c.add(k.Line+1, SeverityWarning, "unknown frontmatter key %q: not in the Agent Skills specification, so it is ignored", k.Value)
			continue
		}
		if probs := shapeProblems(k, v); len(probs) > 0 {
			for _, p := range probs {
				c.parseError(p)
			}
			c.explained = true
			continue
		}
		c.values[k.Value] = v
	}
}

// scalar is the value of key and its line, when it has a non-null one.
func (c *skillFileCheck) scalar(key string) (string, int, bool) {
	v, ok := c.values[key]
	if !ok || v.Tag == "!!null" {
		return "", 0, false
	}
	return v.Value, v.Line + 1, true
}

// missing reports whether the frontmatter has no key named key at all.
func (c *skillFileCheck) missing(key string) bool {
	for i := 0; i < len(c.m.Content); i += 2 {
		if c.m.Content[i].Value == key {
			return false
		}
	}
	return true
}

// name checks the name: valid, and the folder's.
func (c *skillFileCheck) name() {
	name, line, ok := c.scalar("name")
	switch {
	case ok:
		if err := skill.Validate(&skill.Frontmatter{Name: name, Description: standIn}); err != nil {
			c.add(line, SeverityError, "invalid name %q: %v", name, err)
			c.explained = true
		}
		if name != c.dir {
			c.add(line, SeverityError, "the name %q does not match the folder name %q", name, c.dir)
		}
	case c.missing("name"):
		c.add(1, SeverityError, "the frontmatter has no name: add name: %s", c.dir)
		c.explained = true
	default:
		if v, isNull := c.values["name"]; isNull {
			c.add(v.Line+1, SeverityError, "the name is empty: add name: %s", c.dir)
			c.explained = true
		}
	}
}

// description checks the description: present, not empty, within ADK's
// limit.
func (c *skillFileCheck) description() {
	desc, line, ok := c.scalar("description")
	switch {
	case ok && desc == "":
		c.add(line, SeverityError, "the description is empty: say what the skill does and when to use it")
		c.explained = true
	case ok:
		if err := skill.Validate(&skill.Frontmatter{Name: standIn, Description: desc}); err != nil {
			c.add(line, SeverityError, "invalid description (%s): %v; adkskills still loads the skill, other clients may refuse it",
				descriptionSize(desc), err)
			c.explained = true
		}
	case c.missing("description"):
		c.add(1, SeverityError, "the frontmatter has no description: add one that says what the skill does and when to use it")
		c.explained = true
	default:
		if v, ok := c.values["description"]; ok && v.Tag == "!!null" {
			c.add(v.Line+1, SeverityError, "the description is empty: say what the skill does and when to use it")
			c.explained = true
		}
	}
}

// compatibility checks the compatibility field's length.
func (c *skillFileCheck) compatibility() {
	if compat, line, ok := c.scalar("compatibility"); ok {
		if err := skill.Validate(&skill.Frontmatter{Name: standIn, Description: standIn, Compatibility: compat}); err != nil {
			c.add(line, SeverityError, "invalid compatibility (%d characters): %v", len(compat), err)
			c.explained = true
		}
	}
}

// checkFiles walks a skill folder for programs no interpreter runs and for
// symbolic links.
func checkFiles(fsys fs.FS, dir string, table Table) []Problem {
	var probs []Problem
	scriptsDir := path.Join(dir, "scripts")
	_ = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			probs = append(probs, Problem{Path: p, Severity: SeverityWarning, Msg: fmt.Sprintf("cannot read: %v", err)})
			return nil
		}
		if d.IsDir() {
			if p != dir && skipDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			probs = append(probs, Problem{Path: p, Severity: SeverityWarning,
				Msg: "symbolic link: it is never listed, staged for a script or read; copy the file in"})
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(p, scriptsDir+"/") {
			return nil
		}
		if msg := unrunnableProgram(fsys, p, d, table); msg != "" {
			probs = append(probs, Problem{Path: p, Severity: SeverityWarning, Msg: msg})
		}
		return nil
	})
	return probs
}

// unrunnableProgram says why run_skill_script cannot run the file p, which
// says it is a program (a #! line or the executable bit), or returns ""
// when the table runs it or it is data.
func unrunnableProgram(fsys fs.FS, p string, d fs.DirEntry, table Table) string {
	if table.Runs(p, nil) == nil {
		return ""
	}
	head, err := fileHead(fsys, p)
	if err != nil {
		return fmt.Sprintf("cannot read: %v", err)
	}
	if table.Runs(p, head) == nil {
		return ""
	}
	if prog, ok := valid.Shebang(head); ok {
		return fmt.Sprintf("its #! line names %s, which no interpreter runs, so run_skill_script cannot run it (%s)", prog, table.Supported())
	}
	if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o111 != 0 {
		return fmt.Sprintf("it is executable, but no interpreter runs it, so run_skill_script cannot run it (%s)", table.Supported())
	}
	return ""
}

// fileHead reads the start of a file: enough for its #! line.
func fileHead(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return valid.ReadHead(f)
}
