//go:build ignore

package integration

// parallelDeltasMerged: ADK v2.2.0 keeps only the first call's artifact
// delta in the event it records for the calls of one model turn.
const parallelDeltasMerged = false
