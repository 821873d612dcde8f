//go:build !linux

package main

import "testing"

// runTests runs the tests (the fake cluster runs on Linux only).
func runTests(m *testing.M) int { return m.Run() }
