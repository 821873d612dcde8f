package egress_test

import (
	"context"
	"fmt"

	"github.com/adkskills/adkskills/codeexec/internal/egress"
	"github.com/adkskills/adkskills/codeexec/internal/egress/hook"
)

// ExamplePair shows the agent's side of the handoff. The child end goes to
// the sandbox as descriptor 3 (exec.Cmd.ExtraFiles[0]), and the sandbox runs
// the script behind the hook; here no sandbox starts, so the agent learns
// that no listener will come.
func ExamplePair() {
	agent, child, err := egress.Pair()
	if err != nil {
		panic(err)
	}
	defer agent.Close()
	fmt.Println(hook.Args("/run/adkskills/egress-hook", 3, egress.InsidePort))
	child.Close() // as the agent does once the sandbox has started
	_, err = egress.ReceiveListener(context.Background(), agent, egress.InsidePort)
	fmt.Println(err)
	// Output:
	// [/run/adkskills/egress-hook -adkskills-egress-hook 3 3128 --]
	// egress: listener handoff failed: the sandbox ended before its hook handed a listener over
}
