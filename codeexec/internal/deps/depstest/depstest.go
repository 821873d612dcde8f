// Package depstest builds what the dependency tests install from: wheels
// made in the test (a wheel is a zip with its .dist-info; no build backend,
// no network), for a wheelhouse an offline operator points pip at.
package depstest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Wheel describes one wheel to build.
type Wheel struct {
	Name, Version string
	Requires      []string // Requires-Dist
	Files         map[string]string
}

// WriteWheel writes w into dir as a pure-Python wheel with a correct
// RECORD, and returns its path.
func WriteWheel(t testing.TB, dir string, w Wheel) string {
	t.Helper()
	dist := fmt.Sprintf("%s-%s.dist-info", strings.ReplaceAll(w.Name, "-", "_"), w.Version)
	files := map[string]string{}
	for p, c := range w.Files {
		files[p] = c
	}
	var meta strings.Builder
	fmt.Fprintf(&meta, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n", w.Name, w.Version)
	for _, r := range w.Requires {
		fmt.Fprintf(&meta, "Requires-Dist: %s\n", r)
	}
	files[dist+"/METADATA"] = meta.String()
	files[dist+"/WHEEL"] = "Wheel-Version: 1.0\nGenerator: deps-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	var names []string
	for p := range files {
		names = append(names, p)
	}
	slices.Sort(names)
	var record strings.Builder
	for _, p := range names {
		sum := sha256.Sum256([]byte(files[p]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[p]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", dist)
	files[dist+"/RECORD"] = record.String()
	names = append(names, dist+"/RECORD")
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-py3-none-any.whl", strings.ReplaceAll(w.Name, "-", "_"), w.Version))
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, p := range names {
		f, err := z.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(files[p])); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// PackageWheel is a wheel of one module, name, whose VERSION is version.
func PackageWheel(name, version string, requires ...string) Wheel {
	mod := strings.ReplaceAll(name, "-", "_")
	return Wheel{Name: name, Version: version, Requires: requires,
		Files: map[string]string{mod + "/__init__.py": fmt.Sprintf("VERSION = %q\n", version)}}
}
