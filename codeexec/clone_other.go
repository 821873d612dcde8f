//go:build !linux && !darwin

package codeexec

// cloneFile cannot clone here.
func cloneFile(src, dst string) error { return errNoClone }
