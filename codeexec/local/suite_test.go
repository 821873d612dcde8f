package local_test

import (
	"testing"
	"time"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/codeexectest"
	"github.com/adkskills/adkskills/codeexec/local"
)

// The black-box suite every executor passes.

func TestConformance(t *testing.T) {
	codeexectest.Run(t, func() codeexec.Executor { return local.New() })
}

// Under a WaitDelay far shorter than a loaded reader takes to drain a pipe,
// tailRuns runs at once still return the end of their output.
const (
	tailRuns      = 32
	tailWaitDelay = time.Millisecond
)

func TestOutputTailShortWaitDelay(t *testing.T) {
	codeexectest.OutputTail(t, local.New(local.WithWaitDelay(tailWaitDelay)), tailRuns)
}
