//go:build unix

package codeexec

// paths lists the paths of files.
func paths(fs []File) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}
