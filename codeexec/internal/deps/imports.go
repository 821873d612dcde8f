package deps

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/adkskills/adkskills/internal/valid"
)

// MissingImport is a top-level module a script imports that the
// interpreter cannot find, or a script it cannot parse.
type MissingImport struct {
	// Script is the script's path relative to the skill root.
	Script string
	// Line is the line of the import (or of the syntax error).
	Line int
	// Module is the top-level module ("defusedxml"); "" when the script
	// does not parse.
	Module string
	// SyntaxError is why the script does not parse with this interpreter.
	SyntaxError string
}

// String says what is missing, as an operator or a model reads it.
func (m MissingImport) String() string {
	if m.Module == "" {
		return fmt.Sprintf("%s:%d: does not parse: %s", m.Script, m.Line, m.SyntaxError)
	}
	return fmt.Sprintf("%s:%d: imports %s, which the interpreter cannot find", m.Script, m.Line, m.Module)
}

// importChecker finds the imports of scripts with ast (no code of theirs
// runs) and asks importlib.util.find_spec for each top-level module, with
// the environment's folders first on sys.path. Imports guarded by a
// try/except ImportError or by "if TYPE_CHECKING:" are optional and not
// reported; relative imports and the skill's own modules are not asked.
const importChecker = `import ast, sys, json, importlib.util
req = json.load(sys.stdin)
sys.path[:] = req["path"] + [p for p in sys.path if p not in ("", ".")]
CATCH = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
def catches(h):
    if h.type is None:
        return True
    elts = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
    return any(getattr(e, "id", getattr(e, "attr", None)) in CATCH for e in elts)
def optional(tree):
    opt = set()
    for node in ast.walk(tree):
        body = []
        if type(node).__name__ in ("Try", "TryStar") and any(catches(h) for h in node.handlers):
            body = node.body
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            body = node.body
        for stmt in body:
            opt.update(id(n) for n in ast.walk(stmt))
    return opt
found = {}
def findable(top):
    if top not in found:
        try:
            found[top] = importlib.util.find_spec(top) is not None
        except Exception:
            found[top] = True
    return found[top]
out = []
for s in req["scripts"]:
    try:
        tree = ast.parse(s["source"], filename=s["name"])
    except (SyntaxError, ValueError) as e:
        out.append({"script": s["name"], "line": getattr(e, "lineno", 0) or 0, "syntax": str(getattr(e, "msg", e))})
        continue
    opt, local, seen = optional(tree), set(s["local"]), set()
    for node in ast.walk(tree):
        if id(node) in opt:
            continue
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module]
        else:
            continue
        for m in mods:
            top = m.split(".")[0]
            if top in local or top in seen or top == "__future__":
                continue
            seen.add(top)
            if not findable(top):
                out.append({"script": s["name"], "line": node.lineno, "module": top})
print(json.dumps(out))
`

// MissingImports tells which top-level modules the Python scripts (paths
// relative to the skill root) import that python (an absolute path)
// cannot import with env's folders on its path (env may be nil), seen as
// the script sees it: the script's own folder and the skill root (the
// skill's modules), then the environment, then the interpreter's own
// sys.path without the user's site-packages. It reads the scripts and
// never runs them: use it before a run (validate, doctor) or to explain a
// ModuleNotFoundError after one.
func MissingImports(ctx context.Context, python string, skill fs.FS, scripts []string, env *Env) ([]MissingImport, error) {
	type scriptReq struct {
		Name   string   `json:"name"`
		Source string   `json:"source"`
		Local  []string `json:"local"`
	}
	req := struct {
		Path    []string    `json:"path"`
		Scripts []scriptReq `json:"scripts"`
	}{Path: []string{}, Scripts: []scriptReq{}}
	if env != nil {
		req.Path = append(req.Path, env.PythonPath...)
	}
	for _, sc := range scripts {
		p, err := valid.Path(sc)
		if err != nil || p == "." {
			return nil, fmt.Errorf("script %q: %v", sc, err)
		}
		src, err := readBounded(skill, p)
		if err != nil {
			return nil, fmt.Errorf("script %s: %w", p, err)
		}
		req.Scripts = append(req.Scripts, scriptReq{Name: p, Source: string(src), Local: localModules(skill, path.Dir(p))})
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-I", "-c", importChecker)
	cmd.Env = []string{"LC_ALL=C.UTF-8", "PYTHONIOENCODING=utf-8"}
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(in)
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &limitedBuilder{b: &stderr, n: maxOutputChars}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("checking imports with %s: %w: %s", python, err, strings.TrimSpace(stderr.String()))
	}
	var found []struct {
		Script string `json:"script"`
		Line   int    `json:"line"`
		Module string `json:"module"`
		Syntax string `json:"syntax"`
	}
	if err := json.Unmarshal(out, &found); err != nil {
		return nil, fmt.Errorf("checking imports with %s: unexpected answer %q", python, truncatedLine(out))
	}
	res := make([]MissingImport, 0, len(found))
	for _, f := range found {
		res = append(res, MissingImport{Script: f.Script, Line: f.Line, Module: f.Module, SyntaxError: f.Syntax})
	}
	slices.SortFunc(res, func(a, b MissingImport) int {
		if c := strings.Compare(a.Script, b.Script); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return res, nil
}

// localModules are the top-level modules the skill itself provides to a
// script in folder dir: the modules and packages (any folder: a namespace
// package) of dir and of the skill root.
func localModules(skill fs.FS, dir string) []string {
	var out []string
	for _, d := range []string{dir, "."} {
		entries, err := fs.ReadDir(skill, d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			switch {
			case e.IsDir():
				out = append(out, name)
			case strings.HasSuffix(name, ".py") || strings.HasSuffix(name, ".pyc") || strings.HasSuffix(name, ".so") || strings.HasSuffix(name, ".pyd"):
				out = append(out, strings.SplitN(name, ".", 2)[0])
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// moduleNotFoundRE matches Python 3's and Python 2's message.
var moduleNotFoundRE = regexp.MustCompile(`(?:ModuleNotFoundError|ImportError): No module named '?([A-Za-z0-9_.]+)'?`)

// MissingModule reads a run's stderr for the last "No module named"
// error and returns the top-level module it names.
func MissingModule(stderr string) (string, bool) {
	all := moduleNotFoundRE.FindAllStringSubmatch(stderr, -1)
	if len(all) == 0 {
		return "", false
	}
	m := all[len(all)-1][1]
	top, _, _ := strings.Cut(m, ".")
	return top, top != ""
}
