package scriptrun

import (
	"sync"

	"google.golang.org/adk/agent"

	"github.com/adkskills/adkskills/internal/adkglue"
)

// Session is what a call of either script tool needs from the host it runs
// in, besides its context: the session's files and the turn it belongs to.
// ADK's tool context is one host (Runner.ToolSession adapts it); an MCP
// session is another (package mcpskills).
type Session interface {
	// ArtifactStore returns the session's files, or nil without an artifact
	// store: output files are then listed, not saved, and input_files is
	// refused. Output files are saved through it, and inputs loaded.
	ArtifactStore() agent.Artifacts
	// ScriptMissed records one SCRIPT_NOT_FOUND answer and returns how many
	// the current turn has had, this one included: from the second on, the
	// answer is SCRIPT_NOT_FOUND_FATAL, which tells the model to stop
	// retrying. What a turn is, is the host's: ADK's invocation.
	ScriptMissed() int
}

// scriptMissesKey counts SCRIPT_NOT_FOUND answers in invocation-scoped
// state: ADK drops "temp:" keys when the invocation ends.
const scriptMissesKey = "temp:adkskills:script_misses:"

// toolSession is ADK's tool context as a Session: artifacts through
// adkglue.Artifacts, misses counted in the invocation's state.
type toolSession struct {
	tc adkglue.ToolContext
	mu *sync.Mutex // serializes the count's read and write across parallel calls
}

func (s toolSession) ArtifactStore() agent.Artifacts { return adkglue.Artifacts(s.tc) }

func (s toolSession) ScriptMissed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := scriptMissesKey + s.tc.InvocationID()
	n := 0
	if v, err := s.tc.State().Get(key); err == nil {
		n, _ = v.(int)
	}
	n++
	_ = s.tc.State().Set(key, n)
	return n
}
