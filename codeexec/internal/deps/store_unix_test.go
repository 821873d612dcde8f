//go:build unix && !depsunit

package deps

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/adkskills/adkskills/codeexec/internal/deps/depstest"
)

// TestEnvironmentIsReadOnly: nothing in an environment has a write bit,
// and another uid (the sandbox's script) can read and import it but can
// neither change a file nor add one.
func TestEnvironmentIsReadOnly(t *testing.T) {
	f := newFixture(t, []depstest.Wheel{depstest.PackageWheel("tinydep", "1.0")}, map[string]string{"run.py": pep723(`"tinydep"`, "")})
	s := f.store(t, Config{})
	env, err := f.resolve(t, s, "run.py")
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	err = filepath.WalkDir(env.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o222 != 0 {
			return fmt.Errorf("%s has mode %v", p, fi.Mode())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("writing as another uid needs root")
	}
	// The path to the store is open to others as a sandbox bind makes it.
	for d := f.storeDir; d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
				t.Fatal(err)
			}
		}
	}
	site := env.PythonPath[0]
	script := fmt.Sprintf(`import sys
sys.path.insert(0, %q)
import tinydep
print(tinydep.VERSION)
for attempt in (lambda: open(%q, "a"), lambda: open(%q, "w")):
    try:
        attempt()
        print("WROTE")
    except PermissionError:
        print("denied")
`, site, filepath.Join(site, "tinydep", "__init__.py"), filepath.Join(site, "tinydep", "new.py"))
	// The test's interpreter may sit where uid 65534 cannot go (pyenv's
	// in /root): the system's reads the pure-Python package as well.
	other, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("no /usr/bin/python3 to run as another uid")
	}
	cmd := exec.Command(other, "-I", "-c", script)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if got := strings.Fields(string(out)); err != nil || !slices.Equal(got, []string{"1.0", "denied", "denied"}) {
		t.Fatalf("as uid 65534: %q (%v), want the import to work and both writes denied", out, err)
	}
}
