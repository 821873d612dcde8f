// Package execenv is the environment every executor gives a script: an
// allowlist, nothing inherited, then the operator's and the request's
// variables. Local and Sandbox build it on the host, agentsandbox in the
// pod, so the three agree on every variable.
package execenv

import (
	"maps"
	"slices"
)

// DefaultPATH is a script's PATH when nothing else gives one.
const DefaultPATH = "/usr/local/bin:/usr/bin:/bin"

// Build returns a script's environment ("K=V", sorted by name) for a
// workspace whose skill root, HOME and TMPDIR are skill, home and tmp: the
// allowlist, then each layer in order (a later layer wins). The allowlist is
// PATH (path, or DefaultPATH when empty), LANG and LC_ALL = C.UTF-8, HOME,
// TMPDIR, PYTHONPATH and SKILL_DIR = the skill root,
// PYTHONDONTWRITEBYTECODE=1 and PYTHONIOENCODING=utf-8.
func Build(skill, home, tmp, path string, layers ...map[string]string) []string {
	if path == "" {
		path = DefaultPATH
	}
	m := map[string]string{
		"PATH":                    path,
		"LANG":                    "C.UTF-8",
		"LC_ALL":                  "C.UTF-8",
		"HOME":                    home,
		"TMPDIR":                  tmp,
		"PYTHONPATH":              skill,
		"PYTHONDONTWRITEBYTECODE": "1",
		"PYTHONIOENCODING":        "utf-8",
		"SKILL_DIR":               skill,
	}
	for _, l := range layers {
		maps.Copy(m, l)
	}
	env := make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}
