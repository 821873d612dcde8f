package hook

import (
	"slices"
	"testing"
)

func TestHookCall(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		args []string
		ok   bool
	}{
		{nil, nil, false},
		{[]string{"agent"}, nil, false},
		{[]string{"agent", "serve"}, nil, false},
		{[]string{"agent", Flag}, []string{}, true},
		{[]string{"agent", Flag, "3", "3128", "--", "sh"}, []string{"3", "3128", "--", "sh"}, true},
		{[]string{"agent", "-v", Flag}, nil, false},
	} {
		args, ok := Call(tt.argv)
		if ok != tt.ok || !slices.Equal(args, tt.args) {
			t.Errorf("Call(%q) = %q, %t", tt.argv, args, ok)
		}
	}
}

func TestParsePort(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint16
		ok   bool
	}{
		{"1", 1, true}, {"443", 443, true}, {"65535", 65535, true},
		{"", 0, false}, {"0", 0, false}, {"01", 0, false}, {"+1", 0, false}, {"-1", 0, false},
		{"65536", 0, false}, {"1e3", 0, false}, {" 1", 0, false}, {"x", 0, false},
	} {
		got, err := ParsePort(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParsePort(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestArgs(t *testing.T) {
	got := Args("/run/x", 8, 3128)
	want := []string{"/run/x", Flag, "8", "3128", "--"}
	if !slices.Equal(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
	if args, ok := Call(append(got, "sh")); !ok || !slices.Equal(args, []string{"8", "3128", "--", "sh"}) {
		t.Errorf("Call(Args(...)) = %q, %v", args, ok)
	}
}
