//go:build !linux

package host

// ProtectAgent does nothing off Linux: there is no such switch.
func ProtectAgent() error { return nil }
