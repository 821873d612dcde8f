package egress

import (
	"fmt"
	"strings"
)

// Report is what a proxy did for its run.
type Report struct {
	// Connections counts the upstream connections opened (attempts
	// included).
	Connections int
	// BytesSent and BytesReceived count the bytes to and from upstream
	// hosts (headers and TLS included: the bytes on the wire above TCP).
	BytesSent, BytesReceived int64
	// Refusals counts every refused request.
	Refusals int
	// Refused lists the distinct refused targets, the first
	// Limits.MaxRefused in the order of their first refusal.
	Refused []Refusal
	// RefusedOmitted counts the distinct refused targets beyond those.
	RefusedOmitted int
}

// Refusal is one refused target.
type Refusal struct {
	// Target is the host:port the script asked for.
	Target string
	// Code is the X-Proxy-Error value: blocked-by-allowlist,
	// blocked-address, connection-limit, byte-limit or tunnel-limit.
	Code string
	// Reason says why, as the script was told (of the first refusal).
	Reason string
	// Count is how many requests for Target were refused.
	Count int
}

// Warning is the report's refusals as one line for the model and the
// operator, or "" when nothing was refused.
func (r Report) Warning() string {
	if r.Refusals == 0 {
		return ""
	}
	var parts []string
	for _, f := range r.Refused {
		s := f.Target + " (" + f.Reason + ")"
		if f.Count > 1 {
			s += fmt.Sprintf(" x%d", f.Count)
		}
		parts = append(parts, s)
	}
	if r.RefusedOmitted > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", r.RefusedOmitted))
	}
	return "the sandbox's network refused: " + strings.Join(parts, "; ") +
		". Only the hosts on the egress allowlist are reachable; the operator can add HOST:PORT entries."
}
