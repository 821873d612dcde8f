package artifacttest_test

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/artifacttest"
)

// The reference passes its own suite.
func TestInMemory(t *testing.T) {
	artifacttest.Run(t, artifact.InMemoryService)
}

// brokenEnv names, in a child process, the broken service to run the suite
// against.
const brokenEnv = "ARTIFACTTEST_BROKEN"

// brokenServices each have one bug, and fails lists the subtests of Run
// that must fail, and only those, each with a fragment of its failure
// message that shows it failed for that bug.
var brokenServices = []struct {
	name  string
	wrap  func(artifact.Service) artifact.Service
	fails map[string]string
}{
	{"LeakyList", func(s artifact.Service) artifact.Service {
		return &leakyList{Service: s, sessions: map[[2]string][]string{}}
	}, map[string]string{
		"UserScope":          "List(",
		"Isolation":          "List(",
		"HostileIDs":         "List(",
		"AgreesWithInMemory": "List(",
	}},
	{"CountedVersions", func(s artifact.Service) artifact.Service { return countedVersions{s, new(sync.Mutex)} }, map[string]string{
		"DeleteVersion":      "Save(",
		"AgreesWithInMemory": "Save(",
	}},
	{"RacyVersions", func(s artifact.Service) artifact.Service { return racyVersions{s} }, map[string]string{
		"ConcurrentSaves": "Save gave version",
	}},
	{"NoUserScope", noUserScope, map[string]string{
		"UserScope":          `Load(app="app" user="ada" session="s2" name="user:cfg"`,
		"DeleteAll":          `"user:u"`,
		"HostileIDs":         `"user:f"`,
		"ConcurrentSaves":    "Save gave version",
		"AgreesWithInMemory": `"user:`,
	}},
	{"FoldedCase", foldedCase, map[string]string{
		"UserScope":          `Save(app="app" user="ada" session="s1" name="User:cfg"`,
		"Isolation":          `Save(app="app" user="ada" session="s1" name="A"`,
		"HostileNames":       `Save(app="app" user="ada" session="s1" name="a"`,
		"AgreesWithInMemory": "List(",
	}},
	{"PayloadOnly", func(s artifact.Service) artifact.Service { return payloadOnly{s} }, map[string]string{
		"RoundTrip":          `DisplayName: "report.csv"`,
		"AgreesWithInMemory": "FileData",
	}},
	{"PlainNotFound", func(s artifact.Service) artifact.Service { return plainNotFound{s} }, map[string]string{
		"Versioning":         "not fs.ErrNotExist",
		"SaveIgnoresVersion": "not fs.ErrNotExist",
		"Missing":            "not fs.ErrNotExist",
		"DeletionRecord":     "not fs.ErrNotExist",
		"DeleteVersion":      "not fs.ErrNotExist",
		"DeleteAll":          "not fs.ErrNotExist",
		"UserScope":          "not fs.ErrNotExist",
		"LoadDuringSaves":    "not fs.ErrNotExist",
		"DeleteDuringSaves":  "not fs.ErrNotExist",
		"AgreesWithInMemory": "not fs.ErrNotExist",
	}},
}

// TestBrokenChild runs the suite against the broken service brokenEnv
// names. It is not a test on its own: TestBrokenServicesFail runs it in a
// child process and expects it to fail.
func TestBrokenChild(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("run by TestBrokenServicesFail, in a child process")
	}
	for _, b := range brokenServices {
		if b.name == name {
			artifacttest.Run(t, func() artifact.Service { return b.wrap(artifact.InMemoryService()) })
			return
		}
	}
	t.Fatalf("%s=%q: no such broken service", brokenEnv, name)
}

// TestBrokenServicesFail runs the suite against each broken service in a
// child process of the test binary (so that the failures the suite reports
// do not fail this test) and checks that exactly the expected subtests
// fail, each for the reason intended.
func TestBrokenServicesFail(t *testing.T) {
	for _, b := range brokenServices {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			// Not -test.short, nor -artifacttest.seed: the expected failures
			// are those of the default seed and number of calls.
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBrokenChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), brokenEnv+"="+b.name)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("the suite against %s ended with %v, want exit status 1:\n%s", b.name, err, out.String())
			}
			failed := failures(out.String())
			got := slices.Sorted(maps.Keys(failed))
			want := slices.Sorted(maps.Keys(b.fails))
			t.Logf("%s fails %v", b.name, got)
			if !slices.Equal(got, want) {
				t.Errorf("the suite against %s failed %v, want %v:\n%s", b.name, got, want, out.String())
			}
			for sub, fragment := range b.fails {
				if msg, ok := failed[sub]; ok && !strings.Contains(msg, fragment) {
					t.Errorf("%s failed, but not with %q:\n%s", sub, fragment, msg)
				}
			}
		})
	}
}

// failLine is how go test reports a failed subtest of TestBrokenChild.
var failLine = regexp.MustCompile(`^\s*--- FAIL: TestBrokenChild/(\S+) `)

// failures reads the output of a failed go test run: the subtests of
// TestBrokenChild that failed, each with what it logged.
func failures(out string) map[string]string {
	failed := map[string]string{}
	current := ""
	for line := range strings.Lines(out) {
		if m := failLine.FindStringSubmatch(line); m != nil {
			current = m[1]
			failed[current] = ""
			continue
		}
		if strings.Contains(line, "--- FAIL: ") || strings.HasPrefix(line, "FAIL") {
			current = ""
		}
		if current != "" {
			failed[current] += line
		}
	}
	return failed
}
