package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestProbeCache: a successful probe is remembered, a later executor with
// the same key skips the trial, and a changed key (another option, another
// boot or bubblewrap, a file someone else wrote) runs it again.
func TestProbeCache(t *testing.T) {
	requireSandbox(t)
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "sub", "probe")
	tests := []struct {
		name   string
		before func(t *testing.T)
		opts   []Option
		trial  bool
	}{
		{"first", nil, nil, true},
		{"same key", nil, nil, false},
		{"another option", nil, []Option{WithNetwork(true)}, true},
		{"the first again", nil, nil, true},
		{"remembered", nil, nil, false},
		{"another key in the file", func(t *testing.T) {
			if err := os.WriteFile(cache, []byte("0123\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil, true},
		{"no cache", nil, []Option{WithProbeCache("")}, true},
	}
	for _, tt := range tests {
		if tt.before != nil {
			tt.before(t)
		}
		s := New(append([]Option{WithProbeCache(cache), WithPrepared(0)}, tt.opts...)...)
		n := trials.Load()
		if err := s.Probe(ctx); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := trials.Load() != n; got != tt.trial {
			t.Errorf("%s: trial ran %v, want %v", tt.name, got, tt.trial)
		}
	}
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the cache file: %v %v", fi, err)
	}
	if err := New(WithProbeCache("relative")).Err(); err == nil {
		t.Errorf("WithProbeCache(relative): no error")
	}
}
