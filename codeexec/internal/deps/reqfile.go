package deps

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/adkskills/adkskills/internal/valid"
)

// A skill's requirements.txt, read as pip reads one (line continuations,
// comments, options, one requirement a line) with what a skill may not do
// refused: every option that changes where packages come from or lets a
// source build run, a requirement that is a URL or a path, an include
// that leaves the skill, an environment variable.

// maxDeclarationBytes bounds a declaration file (requirements.txt,
// package.json, a lock file) and the script read for its PEP 723 block.
const maxDeclarationBytes = 8 << 20

// maxIncludeDepth bounds nested -r and -c includes.
const maxIncludeDepth = 8

// commentRE is pip's COMMENT_RE.
var commentRE = regexp.MustCompile(`(^|\s+)#.*$`)

// envVarRE is pip's pattern of an environment variable reference, which pip
// would expand from the operator's environment.
var envVarRE = regexp.MustCompile(`\$\{[A-Z0-9_]+\}`)

// refusedOptions are the options of a requirements file that a skill may
// not use, with why.
var refusedOptions = map[string]string{
	"-i": "the operator configures the index", "--index-url": "the operator configures the index",
	"--extra-index-url": "the operator configures the index", "--no-index": "the operator configures the index",
	"-f": "the operator configures --find-links", "--find-links": "the operator configures --find-links",
	"--trusted-host": "the operator configures trusted hosts",
	"-e":             "an editable install runs the skill's own build", "--editable": "an editable install runs the skill's own build",
	"--no-binary": "source builds are the operator's choice", "--only-binary": "source builds are the operator's choice",
	"--config-settings": "build options are the operator's", "--global-option": "build options are the operator's",
	"--install-option": "build options are the operator's", "-Z": "options of pip are the operator's",
	"--always-unzip": "options of pip are the operator's", "--use-feature": "options of pip are the operator's",
	"--prefer-binary": "options of pip are the operator's", "--require-hashes": "a --hash on a line asks for it",
}

// reqSet is what a requirements file declares.
type reqSet struct {
	reqs        []Requirement
	constraints []Requirement
	pre         bool
}

// parseRequirementsFile reads name (a path in skill) and what it includes.
// Every error wraps ErrDeclaration.
func parseRequirementsFile(skill fs.FS, name string) (*reqSet, error) {
	rs := &reqSet{}
	if err := rs.read(skill, name, false, map[string]bool{}, 0); err != nil {
		return nil, err
	}
	return rs, nil
}

// read parses one file into rs (as constraints when constraint).
func (rs *reqSet) read(skill fs.FS, name string, constraint bool, seen map[string]bool, depth int) error {
	if depth > maxIncludeDepth {
		return fmt.Errorf("%w: %s: includes nested deeper than %d", ErrDeclaration, name, maxIncludeDepth)
	}
	if seen[name] {
		return fmt.Errorf("%w: %s includes itself", ErrDeclaration, name)
	}
	seen[name] = true
	defer delete(seen, name)
	data, err := readBounded(skill, name)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDeclaration, name, err)
	}
	lines, err := requirementLines(data)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDeclaration, name, err)
	}
	for _, l := range lines {
		if err := rs.line(skill, name, l.text, constraint, seen, depth); err != nil {
			return fmt.Errorf("%w: %s line %d: %w", ErrDeclaration, name, l.n, err)
		}
	}
	return nil
}

// reqLine is one logical line of a requirements file and where it starts.
type reqLine struct {
	n    int
	text string
}

// requirementLines splits a requirements file into logical lines as pip
// does: continuations joined, comments removed, blank lines dropped.
func requirementLines(data []byte) ([]reqLine, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	var out []reqLine
	var joined []string
	first := 0
	for i, line := range strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\n") {
		n := i + 1
		if !strings.HasSuffix(line, "\\") || commentRE.MatchString(line) {
			if commentRE.MatchString(line) {
				line = " " + line
			}
			if joined != nil {
				line = strings.Join(append(joined, line), "")
				n, joined = first, nil
			}
			if text := strings.TrimSpace(commentRE.ReplaceAllString(line, "")); text != "" {
				out = append(out, reqLine{n: n, text: text})
			}
			continue
		}
		if joined == nil {
			first = n
		}
		joined = append(joined, strings.Trim(line, "\\"))
	}
	if joined != nil {
		if text := strings.TrimSpace(commentRE.ReplaceAllString(strings.Join(joined, ""), "")); text != "" {
			out = append(out, reqLine{n: first, text: text})
		}
	}
	return out, nil
}

// line handles one logical line of file name.
func (rs *reqSet) line(skill fs.FS, name, text string, constraint bool, seen map[string]bool, depth int) error {
	if envVarRE.MatchString(text) {
		return fmt.Errorf("%q names an environment variable: a skill's requirements are literal", text)
	}
	fields := strings.Fields(text)
	i := 0
	for i < len(fields) && !strings.HasPrefix(fields[i], "-") {
		i++
	}
	args, opts := fields[:i], fields[i:]
	if len(args) == 0 {
		return rs.option(skill, name, opts, constraint, seen, depth)
	}
	r, err := ParseRequirement(strings.Join(args, " "))
	if err != nil {
		return err
	}
	for j := 0; j < len(opts); j++ {
		opt, val, hasVal := strings.Cut(opts[j], "=")
		if opt != "--hash" {
			return refuse(opt)
		}
		if !hasVal {
			if j+1 >= len(opts) {
				return fmt.Errorf("--hash needs a value")
			}
			j++
			val = opts[j]
		}
		if !hashRE.MatchString(val) {
			return fmt.Errorf("--hash %q is not ALGORITHM:HEXDIGEST", val)
		}
		r.Hashes = append(r.Hashes, val)
	}
	slices.Sort(r.Hashes)
	r.Hashes = slices.Compact(r.Hashes)
	if constraint {
		rs.constraints = append(rs.constraints, r)
	} else {
		rs.reqs = append(rs.reqs, r)
	}
	return nil
}

// hashRE is a --hash value.
var hashRE = regexp.MustCompile(`^(sha256|sha384|sha512):[0-9a-fA-F]+$`)

// option handles an option line: -r and -c includes inside the skill and
// --pre; everything else is refused.
func (rs *reqSet) option(skill fs.FS, name string, opts []string, constraint bool, seen map[string]bool, depth int) error {
	opt := opts[0]
	var val string
	for _, o := range []string{"--requirement", "--constraint", "-r", "-c"} {
		switch {
		case opt == o:
			if len(opts) < 2 {
				return fmt.Errorf("%s needs a file", o)
			}
			val, opts = opts[1], opts[2:]
		case strings.HasPrefix(opt, o+"=") && strings.HasPrefix(o, "--"):
			val, opts = opt[len(o)+1:], opts[1:]
		case len(o) == 2 && strings.HasPrefix(opt, o) && !strings.HasPrefix(opt, "--"):
			val, opts = opt[2:], opts[1:]
		default:
			continue
		}
		if len(opts) > 0 {
			return fmt.Errorf("unexpected %q after %s", strings.Join(opts, " "), o)
		}
		inc, err := includePath(name, val)
		if err != nil {
			return err
		}
		return rs.read(skill, inc, constraint || o == "-c" || o == "--constraint", seen, depth+1)
	}
	if opt == "--pre" && len(opts) == 1 {
		rs.pre = true
		return nil
	}
	o, _, _ := strings.Cut(opt, "=")
	return refuse(o)
}

// refuse is the error for an option a skill may not use.
func refuse(opt string) error {
	why, ok := refusedOptions[opt]
	if !ok {
		why = "not an option a skill may set"
	}
	return fmt.Errorf("option %s is not allowed in a skill's requirements (%s): allowed are requirements, -r/-c of files inside the skill, --pre and --hash", opt, why)
}

// includePath resolves an include of file from (relative to from's folder)
// and refuses one that is a URL or leaves the skill.
func includePath(from, file string) (string, error) {
	if strings.Contains(file, "://") || strings.HasPrefix(file, "/") {
		return "", fmt.Errorf("include %q: only files inside the skill can be included", file)
	}
	p, err := valid.Path(path.Join(path.Dir(from), file))
	if err != nil || p == "." || path.IsAbs(file) {
		return "", fmt.Errorf("include %q leaves the skill folder", file)
	}
	return p, nil
}

// readBounded reads a file of skill, refusing one over
// maxDeclarationBytes.
func readBounded(skill fs.FS, name string) ([]byte, error) {
	f, err := skill.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxDeclarationBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDeclarationBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxDeclarationBytes)
	}
	return b, nil
}
