package agentsandboxtest

import (
	"fmt"
	"os"
)

// Standalone is a [TB] for a cluster outside a test (an Example, a demo
// program): Fatal panics, Errorf prints to standard error, and Close runs
// the cleanups, the cluster's among them, last registered first.
type Standalone struct{ cleanups []func() }

// Helper does nothing.
func (*Standalone) Helper() {}

// TempDir makes a folder that Close removes.
func (s *Standalone) TempDir() string {
	dir, err := os.MkdirTemp("", "agentsandboxtest-")
	if err != nil {
		panic(err)
	}
	s.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Cleanup registers f for Close.
func (s *Standalone) Cleanup(f func()) { s.cleanups = append(s.cleanups, f) }

// Fatal panics with its arguments.
func (*Standalone) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// Errorf prints the message on standard error.
func (*Standalone) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// Close runs the registered cleanups, last first.
func (s *Standalone) Close() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
	s.cleanups = nil
}
