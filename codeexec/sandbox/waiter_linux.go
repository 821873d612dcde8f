package sandbox

import (
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// The waiter is the last helper of a prepared sandbox: the host's /bin/sh,
// started by prlimit under the run's rlimits, under the filter, in the
// script's namespaces, as the run's user. It writes one byte to readyFD (the
// sandbox is up), closes it, and reads the run's program from goFD, which
// the agent writes once the skill is staged (see program): the program
// closes goFD, enters the skill's folder and executes the script with
// exactly the run's environment. A prepared sandbox released
// unused reads end of file: the waiter exits with waiterReleased.
//
// A shell and not the agent's own executable: a Go program runs every
// package's initialisation before it could wait, 15 ms for a test binary
// and 50 ms for the command line's, where dash takes 1 ms.

// goFD is the waiter's descriptor of the pipe it reads its program from;
// readyFD the pipe it writes one byte to, and closes, once it runs. A
// prepared sandbox has no egress, so they take the handoff's numbers;
// both are single digits, as a POSIX shell's redirections want.
const (
	goFD    = handoffFD
	readyFD = hookExeFD
)

// waiterReleased is the waiter's exit status when it was released unused.
const waiterReleased = 125

// waiterScript is the waiter's shell program (tests change it to one that
// does not start).
var waiterScript = "printf R >&" + strconv.Itoa(readyFD) + " && exec " + strconv.Itoa(readyFD) + ">&- && . /proc/self/fd/" + strconv.Itoa(goFD) + "; exit " + strconv.Itoa(waiterReleased)

// errNotForWaiter: a run the waiter's program cannot say exactly as
// bubblewrap and prlimit would start it (an environment name env would take
// for an option, an interpreter path env would take for an assignment).
// The run starts the usual way.
var errNotForWaiter = errors.New("the run cannot be handed to a prepared sandbox's waiter")

// program is the shell program the waiter runs for a run: it closes goFD,
// enters dir (the script's folder, as bubblewrap's --chdir) and executes
// argv with exactly env, as prlimit would: exit status 126 when dir cannot
// be entered or argv[0] cannot be executed, 127 when it is not found.
// Every word is single-quoted, so no byte of an argument, a variable or a
// path means anything to the shell.
//
// With exact (the shell exports no variable of its own but PWD and
// OLDPWD, see exportsNothing) and every name in env a plain shell
// variable's, the shell exports env and executes argv itself; otherwise
// it executes env -i (at the host path envPath) with env and argv, one
// program more to start.
func program(envPath string, exact bool, dir string, argv, env []string) (string, error) {
	if len(argv) == 0 || strings.Contains(argv[0], "=") || hasNUL(dir) || hasNUL(envPath) ||
		slices.ContainsFunc(argv, hasNUL) || slices.ContainsFunc(env, hasNUL) {
		return "", errNotForWaiter
	}
	plain := exact // every name a plain shell variable's
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || k[0] == '-' {
			return "", errNotForWaiter
		}
		plain = plain && !notPlainVariable(k)
	}
	var b strings.Builder
	b.WriteString("exec " + strconv.Itoa(goFD) + "<&- || exit 126\ncd -P ")
	b.WriteString(shellWord(dir))
	b.WriteString(" || exit 126\n")
	if plain {
		b.WriteString("unset OLDPWD PWD\n") // cd's, and exported
		for _, kv := range env {
			b.WriteString("export " + shellWord(kv) + "\n")
		}
		b.WriteString("exec")
	} else {
		b.WriteString("exec " + shellWord(envPath) + " -i")
		for _, kv := range env {
			b.WriteString(" " + shellWord(kv))
		}
	}
	for _, a := range argv {
		b.WriteString(" " + shellWord(a))
	}
	b.WriteByte('\n')
	return b.String(), nil
}

// shellSpecial are the variables a POSIX shell (or a common /bin/sh:
// dash, bash, busybox ash) sets itself or acts on before the script
// starts: the shell does not export them as given.
// (PWD and OLDPWD, which cd sets, are exported after it as given.)
var shellSpecial = []string{"CDPATH", "ENV", "EPOCHREALTIME", "EPOCHSECONDS", "HISTFILE", "IFS", "LINENO", "OPTARG", "OPTIND", "PPID", "PS1", "PS2", "PS4", "RANDOM", "SECONDS", "SHLVL", "SRANDOM", "_"}

// notPlainVariable reports whether name is not a shell variable's name
// that the shell exports as given.
func notPlainVariable(name string) bool {
	if name == "" || slices.Contains(shellSpecial, name) || strings.HasPrefix(name, "BASH") {
		return true
	}
	for i, c := range name {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return true
		}
	}
	return false
}

// hasNUL reports whether s holds a NUL byte, which ends a shell's word.
func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// shellWord quotes s as one word of a POSIX shell: between single quotes,
// each single quote of s closing the quotes, escaped, and opening them
// again. s must hold no NUL byte (no argument or variable can).
func shellWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// exportsNothing reports whether the shell sh exports no variable of its
// own but PWD and OLDPWD to what it executes, as dash: started with an
// empty environment in /, it must pass env (at envPath) PWD=/ alone.
func exportsNothing(sh, envPath string) bool {
	cmd := exec.Command(sh, "-c", "unset OLDPWD; exec "+shellWord(envPath))
	cmd.Env = []string{}
	cmd.Dir = "/"
	out, err := cmd.Output()
	return err == nil && string(out) == "PWD=/\n"
}
