//go:build !unix

package deps

import (
	"errors"
	"io/fs"
	"os"
	"sync"
)

// errLocked is what tryLock returns when another holder has the lock.
var errLocked = errors.New("locked")

// Without flock, locks exclude the goroutines of this process only: one
// store directory must not be shared by two processes here.
var (
	locksMu sync.Mutex
	locks   = map[string]*procLock{}
)

// procLock is one lock file's state in this process.
type procLock struct {
	shared    map[*os.File]bool
	exclusive *os.File
}

// tryLock takes f's lock (shared or exclusive) without waiting; it is
// released when f is closed through unlockFile.
func tryLock(f *os.File, exclusive bool) error {
	locksMu.Lock()
	defer locksMu.Unlock()
	l := locks[f.Name()]
	if l == nil {
		l = &procLock{shared: map[*os.File]bool{}}
		locks[f.Name()] = l
	}
	switch {
	case l.exclusive != nil, exclusive && len(l.shared) > 0:
		return errLocked
	case exclusive:
		l.exclusive = f
	default:
		l.shared[f] = true
	}
	return nil
}

// releaseLock forgets f's lock.
func releaseLock(f *os.File) {
	locksMu.Lock()
	defer locksMu.Unlock()
	if l := locks[f.Name()]; l != nil {
		delete(l.shared, f)
		if l.exclusive == f {
			l.exclusive = nil
		}
	}
}

// processAlive reports whether a process pid exists; without a way to ask,
// every process is taken for alive (old leftovers still go after
// leftoverAge).
func processAlive(pid int) bool { return pid > 0 }

// fileIdentity is empty: size and time identify a file here.
func fileIdentity(fs.FileInfo) string { return "" }
