//go:build !unix

package host

import "os"

// growPipe is a no-op here.
func growPipe(*os.File) {}

// pipeState cannot tell anything here.
func (o *output) pipeState() (writers bool, pending int, ok bool) { return false, 0, false }
