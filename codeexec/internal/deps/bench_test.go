//go:build !depsunit

package deps

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/adkskills/adkskills/codeexec/internal/deps/depstest"
)

// BenchmarkResolve measures a script's first resolution (a new store:
// the interpreter probed, pip installing one wheel from the wheelhouse,
// the environment made read-only and renamed into place) and a later one
// (the script read, its block parsed, the key computed, the environment
// found and held).
func BenchmarkResolve(b *testing.B) {
	py := python(b)
	root := b.TempDir()
	wheelhouse := filepath.Join(root, "wheelhouse")
	skill := filepath.Join(root, "skill")
	if err := os.MkdirAll(wheelhouse, 0o755); err != nil {
		b.Fatal(err)
	}
	depstest.WriteWheel(b, wheelhouse, depstest.PackageWheel("tinydep", "1.0"))
	writeTree(b, skill, map[string]string{"scripts/run.py": pep723(`"tinydep>=1"`, "import tinydep\n")})
	env := offlineEnv(b, wheelhouse)
	in := Interpreter{Language: Python, Path: py}
	resolve := func(b *testing.B, s *Store) {
		e, err := s.Resolve(b.Context(), os.DirFS(skill), "scripts/run.py", in)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
	b.Run("First", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			s, err := New(Config{Dir: filepath.Join(root, "first-"+strconv.Itoa(n)), Env: env})
			if err != nil {
				b.Fatal(err)
			}
			resolve(b, s)
		}
	})
	b.Run("Later", func(b *testing.B) {
		s, err := New(Config{Dir: filepath.Join(root, "later"), Env: env})
		if err != nil {
			b.Fatal(err)
		}
		resolve(b, s)
		for b.Loop() {
			resolve(b, s)
		}
	})
}
