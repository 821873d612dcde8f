package hostsuite

import (
	"os"
	"strings"
	"testing"

	"github.com/adkskills/adkskills/codeexec/codeexectest"
)

// oomFirstChoice is the oom_score_adj every run process has: the kernel's
// highest, so the OOM killer takes a script before the agent.
const oomFirstChoice = "1000"

// testOOMScore: every process of a run, the script and what it starts, is
// the OOM killer's first choice from its first instruction, while the
// agent keeps its own score.
func testOOMScore(t *testing.T, newExec NewExecutor) {
	agentBefore := readOOMScore(t)
	src := `cat /proc/self/oom_score_adj
sh -c 'cat /proc/self/oom_score_adj'
(cat /proc/self/oom_score_adj) &
wait
`
	res := codeexectest.MustRun(t, newExec(Options{}), codeexectest.Script("scripts/oom.sh", src))
	got := strings.Fields(res.Stdout.Text)
	if len(got) != 3 {
		t.Fatalf("stdout %q, stderr %q: want three scores", res.Stdout.Text, res.Stderr.Text)
	}
	for i, s := range got {
		if s != oomFirstChoice {
			t.Errorf("process %d of the run: oom_score_adj %s, want %s", i, s, oomFirstChoice)
		}
	}
	if after := readOOMScore(t); after != agentBefore || after == oomFirstChoice {
		t.Errorf("the agent's oom_score_adj went from %s to %s: a run must change only its own processes", agentBefore, after)
	}
}

// readOOMScore returns this process's oom_score_adj.
func readOOMScore(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
