package integration

// parallelDeltasMerged: ADK v1.7.0 merges the artifact deltas of the calls
// of one model turn into the event it records.
const parallelDeltasMerged = true
