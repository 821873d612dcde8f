package main

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
)

// The errors flag.FlagSet.Parse returns, which name the flag with one dash.
var (
	errUndefinedRe = regexp.MustCompile(`^flag provided but not defined: -(.+)$`)
	errNoValueRe   = regexp.MustCompile(`^flag needs an argument: -(.+)$`)
	errBadValueRe  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([^:]+): (.*)$`)
)

// flagProblem rewrites an error of fs.Parse for the user: which flag was
// wrong, and, for a command that passes arguments on (run), that those go
// after "--".
func flagProblem(fs *flagSet, err error) string {
	msg := err.Error()
	var out string
	switch {
	case errUndefinedRe.MatchString(msg):
		name := errUndefinedRe.FindStringSubmatch(msg)[1]
		out = fmt.Sprintf("unknown flag --%s", name)
		if fs.rest != "" {
			out += fmt.Sprintf("; %s go after --: %s -- --%s", fs.rest, fs.restSynopsis, name)
		} else if names := fs.flagNames(); names != "" {
			out += " (its flags: " + names + ")"
		}
	case errNoValueRe.MatchString(msg):
		name := errNoValueRe.FindStringSubmatch(msg)[1]
		out = fmt.Sprintf("--%s needs a value: --%s %s", name, name, fs.valueKind(name))
	case errBadValueRe.MatchString(msg):
		m := errBadValueRe.FindStringSubmatch(msg)
		out = fmt.Sprintf("invalid value %q for --%s %s", m[1], m[2], fs.valueKind(m[2]))
		if reason := m[3]; reason != "parse error" {
			out += ": " + reason
		}
	default:
		out = msg
	}
	return fs.Name() + ": " + out
}

// valueKind names the value a flag takes, as its usage does ("DURATION";
// "(true or false)" for a boolean; "VALUE" when the usage names none).
func (fs *flagSet) valueKind(name string) string {
	f := fs.Lookup(name)
	if f == nil {
		return "VALUE"
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "(true or false)"
	}
	if kind, _ := flag.UnquoteUsage(f); kind != "" {
		return kind
	}
	return "VALUE"
}

// flagNames lists the command's flags: "--skills, --json".
func (fs *flagSet) flagNames() string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return strings.Join(names, ", ")
}

// shellWord quotes s for a POSIX shell when it needs it, so a command line
// the user is told to run can be pasted as it is.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
