//go:build !linux && !darwin

package host

// cloneFile cannot clone here.
func cloneFile(src, dst string) error { return errNoClone }
