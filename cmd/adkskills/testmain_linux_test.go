package main

import (
	"testing"

	"github.com/adkskills/adkskills/codeexec/agentsandbox/agentsandboxtest"
)

// runTests runs the tests with a sandboxd for the fake cluster.
func runTests(m *testing.M) int { return agentsandboxtest.Main(m) }
