package agentsandbox

import (
	"fmt"
	"testing"

	"github.com/adkskills/adkskills/codeexec/internal/host"
)

// TestListerBounded: the collection keeps at most MaxCollectedEntries of
// find's records, however many a script's files make, says it stopped
// only past them, and takes each record's fields.
func TestListerBounded(t *testing.T) {
	for _, tt := range []struct {
		name    string
		records int
		stopped bool
	}{
		{"AtTheBound", host.MaxCollectedEntries, false},
		{"PastIt", host.MaxCollectedEntries + 3, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var l lister
			for i := range tt.records {
				l.record(fmt.Appendf(nil, "f %d 7:1.5:2.5 out/%07d.txt", i, i))
			}
			if l.err != nil || len(l.entries) != host.MaxCollectedEntries || l.stopped != tt.stopped {
				t.Fatalf("%d entries, stopped %v, err %v; want %d, %v", len(l.entries), l.stopped, l.err, host.MaxCollectedEntries, tt.stopped)
			}
			if e := l.entries[42]; e.kind != 'f' || e.size != 42 || e.stamp != "7:1.5:2.5" || e.path != "out/0000042.txt" {
				t.Errorf("record 42 read as %+v", e)
			}
		})
	}
	var l lister
	l.record([]byte("f notanumber 1:2:3 x"))
	if l.err == nil {
		t.Error("a malformed record is taken")
	}
}
