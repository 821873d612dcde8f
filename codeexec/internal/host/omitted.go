package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/adkskills/adkskills/codeexec"
)

// Bounds every executor's collection keeps, so that a run's Result and the
// model's response stay bounded however many files a script leaves.
const (
	// MaxOmittedListed bounds Result.Omitted: a run that leaves out more
	// files gets one more entry, with an empty Path, counting the rest.
	MaxOmittedListed = 1000
	// MaxCollectedEntries is how many entries (files and folders) one
	// collection looks at; past it, it stops and says so (see
	// Omissions.Stopped).
	MaxCollectedEntries = 100_000
)

// Omissions gathers a run's OmittedFile entries as every executor reports
// them: at most MaxOmittedListed listed, sorted by path, and one last entry
// that counts and sizes the rest. The zero value is ready to use.
type Omissions struct {
	listed []codeexec.OmittedFile
	more   int
	size   int64
}

// Add records f.
func (o *Omissions) Add(f codeexec.OmittedFile) {
	if len(o.listed) < MaxOmittedListed {
		o.listed = append(o.listed, f)
		return
	}
	o.more++
	o.size += f.Size
}

// Stopped records that the collection stopped at path after
// MaxCollectedEntries entries.
func (o *Omissions) Stopped(path string) {
	o.Add(codeexec.OmittedFile{Path: path, Reason: fmt.Sprintf("the walk stopped after %d entries: the rest was not looked at", MaxCollectedEntries)})
}

// List returns the entries sorted by path, plus the count of the rest.
func (o *Omissions) List() []codeexec.OmittedFile {
	slices.SortFunc(o.listed, func(a, b codeexec.OmittedFile) int { return strings.Compare(a.Path, b.Path) })
	if o.more > 0 {
		o.listed = append(o.listed, codeexec.OmittedFile{Size: o.size, Reason: fmt.Sprintf("%d more omitted files not listed", o.more)})
	}
	return o.listed
}

// Refusal says why an output file of size bytes cannot join files already
// collected (total bytes in all), or is "" when it fits l: the reasons
// every executor gives, checked in this order.
func Refusal(l codeexec.FileLimits, files int, total, size int64) string {
	switch {
	case size > l.MaxFileBytes:
		return fmt.Sprintf("larger than the %d-byte limit per file", l.MaxFileBytes)
	case files >= l.MaxFiles:
		return fmt.Sprintf("over the limit of %d files per run", l.MaxFiles)
	case total+size > l.MaxTotalBytes:
		return fmt.Sprintf("over the %d-byte limit for all files of a run", l.MaxTotalBytes)
	}
	return ""
}
