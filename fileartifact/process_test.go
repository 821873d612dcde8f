package fileartifact

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// Tests here run the test binary itself as other processes (the helper
// process pattern): TestMain turns it into a helper when helperEnv is set.

const (
	helperEnv  = "FILEARTIFACT_TEST_HELPER" // "save", "crash" or "hold"
	helperDir  = "FILEARTIFACT_TEST_DIR"
	helperID   = "FILEARTIFACT_TEST_ID"
	helperSave = "FILEARTIFACT_TEST_SAVES"
	// crashSize is the size of each part the crash helper saves: large, so a
	// kill usually lands in the middle of writing one.
	crashSize = 4 << 20
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "save":
		os.Exit(helperMain(saveHelper))
	case "crash":
		os.Exit(helperMain(crashHelper))
	case "hold":
		os.Exit(helperMain(holdHelper))
	default:
		fmt.Fprintf(os.Stderr, "unknown %s=%q\n", helperEnv, os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperMain opens the store and runs f, reporting its error on stderr.
func helperMain(f func(s *Service, out io.Writer) error) int {
	s, err := New(os.Getenv(helperDir))
	if err == nil {
		err = f(s, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// saveHelper waits for its standard input to close (the start signal, so
// every helper begins together), then saves the artifact "user:shared"
// FILEARTIFACT_TEST_SAVES times, printing "VERSION BODY" for each save.
func saveHelper(s *Service, out io.Writer) error {
	n, err := strconv.Atoi(os.Getenv(helperSave))
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		return err
	}
	for i := range n {
		body := fmt.Sprintf("process %s save %d", os.Getenv(helperID), i)
		r, err := s.Save(context.Background(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "user:shared",
			Part: genai.NewPartFromBytes([]byte(body), "text/plain")})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d %s\n", r.Version, body)
	}
	return nil
}

// crashHelper saves crashBody parts to "big" until it is killed, printing
// each version it saved.
func crashHelper(s *Service, out io.Writer) error {
	for i := uint64(1); ; i++ {
		r, err := s.Save(context.Background(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "big",
			Part: genai.NewPartFromBytes(crashBody(i), "application/octet-stream")})
		if err != nil {
			return err
		}
		fmt.Fprintln(out, r.Version)
	}
}

// holdHelper saves crashBody(holdSeed) to "held" and holds the save
// between writing the version and claiming it: it prints "staged" and
// waits for its standard input to close, then claims and prints the
// version. Killed while it waits, it dies mid-save with the whole version
// written.
func holdHelper(s *Service, out io.Writer) error {
	claim := s.rename
	s.rename = func(r *os.Root, oldname, newname string) error {
		fmt.Fprintln(out, "staged")
		if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
			return err
		}
		return claim(r, oldname, newname)
	}
	r, err := s.Save(context.Background(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "held",
		Part: genai.NewPartFromBytes(crashBody(holdSeed), "application/octet-stream")})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, r.Version)
	return nil
}

// holdSeed seeds what the hold helper saves.
const holdSeed = 7

// crashBody is a self-checking payload: its seed, then crashSize-8 bytes
// derived from the seed.
func crashBody(seed uint64) []byte {
	b := make([]byte, crashSize)
	binary.BigEndian.PutUint64(b, seed)
	for i := 8; i < len(b); i++ {
		b[i] = byte(seed + uint64(i))
	}
	return b
}

// helper returns a command running the test binary as a helper.
func helper(t *testing.T, mode, dir string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode, helperDir + "=" + dir}, env...)...)
	cmd.Stderr = &bytes.Buffer{}
	return cmd
}

// TestCrossProcessSaves: several processes save the same artifact at once;
// the versions are exactly 1..N, each claimed by one save, each holding
// that save's content.
func TestCrossProcessSaves(t *testing.T) {
	procs, each := 6, 25
	if testing.Short() {
		procs, each = 3, 10
	}
	dir := t.TempDir()
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   bytes.Buffer
	}
	ps := make([]*proc, procs)
	for i := range ps {
		p := &proc{cmd: helper(t, "save", dir, helperID+"="+strconv.Itoa(i), helperSave+"="+strconv.Itoa(each))}
		p.cmd.Stdout = &p.out
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	for _, p := range ps {
		p.stdin.Close() // go
	}
	content := map[int64]string{}
	for i, p := range ps {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, p.cmd.Stderr)
		}
		for line := range strings.Lines(p.out.String()) {
			vs, body, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
			v, err := strconv.ParseInt(vs, 10, 64)
			if err != nil {
				t.Fatalf("helper %d printed %q", i, line)
			}
			if prev, dup := content[v]; dup {
				t.Errorf("version %d claimed by %q and %q", v, prev, body)
			}
			content[v] = body
		}
	}
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	assertVersions(t, s, "user:shared", content, procs*each)
	assertNoLeftovers(t, s)
}

// TestCrashLeavesNoHalfVersion kills a process in the middle of saving
// large parts, again and again, and checks that every version visible
// afterwards is complete and that saving goes on normally.
func TestCrashLeavesNoHalfVersion(t *testing.T) {
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	dir := t.TempDir()
	reported := 0
	for round := range rounds {
		cmd := helper(t, "crash", dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it save a little, then kill it at a moment that varies by round.
		lines := bufio.NewScanner(stdout)
		for range 1 + round%2 {
			if !lines.Scan() {
				t.Fatalf("helper stopped: %v\n%s", cmd.Wait(), cmd.Stderr)
			}
			reported++
		}
		time.Sleep(time.Duration(round) * 3 * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			reported++
		}
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("helper ended with %v, want killed\n%s", err, cmd.Stderr)
		}
	}
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Versions(t.Context(), &artifact.VersionsRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Versions) < reported {
		t.Errorf("%d versions visible, but helpers reported %d saves", len(r.Versions), reported)
	}
	for _, v := range r.Versions {
		lr, err := s.Load(t.Context(), &artifact.LoadRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "big", Version: v})
		if err != nil {
			t.Fatalf("Load(%d) after crashes: %v", v, err)
		}
		d := lr.Part.InlineData.Data
		if len(d) != crashSize || !bytes.Equal(d, crashBody(binary.BigEndian.Uint64(d))) {
			t.Fatalf("version %d is not complete after a crash: %d bytes", v, len(d))
		}
	}
	next := saveText(t, s, sess1, "big", "after")
	if next != r.Versions[0]+1 {
		t.Errorf("Save after crashes = version %d, want %d", next, r.Versions[0]+1)
	}
	if _, err := s.Path(app, user, sess1, "big", next); errors.Is(err, fs.ErrNotExist) {
		t.Error(err)
	}
}

// leftovers counts the saves' and deletes' directories under dir and the
// bytes in them.
func leftovers(t *testing.T, dir string) (n int, size int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && isLeftover(d.Name()) {
			n++
			return filepath.WalkDir(p, func(_ string, f fs.DirEntry, err error) error {
				if err == nil && f.Type().IsRegular() {
					fi, err := f.Info()
					if err == nil {
						size += fi.Size()
					}
				}
				return err
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, size
}

// startHold starts the hold helper and waits until it holds its save.
func startHold(t *testing.T, dir string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	cmd := helper(t, "hold", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "staged" {
		t.Fatalf("hold helper: %q, %v\n%s", lines.Text(), cmd.Wait(), cmd.Stderr)
	}
	return cmd, stdin, lines
}

// TestKilledSavesAreSweptOnOpen kills processes with SIGKILL in the middle
// of saving, again and again: some while they write a large version, some
// once it is written and not yet claimed. Each leaves its version's
// directory behind; opening the store removes them all, and the store goes
// on as before.
func TestKilledSavesAreSweptOnOpen(t *testing.T) {
	held, crashes := 10, 10
	if testing.Short() {
		held, crashes = 3, 3
	}
	dir := t.TempDir()
	var total int64
	for range held {
		cmd, _, _ := startHold(t, dir)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		// The killed save is left; the ones before it were swept when
		// this helper opened the store.
		n, size := leftovers(t, dir)
		if n != 1 || size < crashSize {
			t.Fatalf("after a kill: %d leftovers of %d bytes, want 1 of %d", n, size, crashSize)
		}
		total += size
	}
	reported := 0
	for round := range crashes {
		cmd := helper(t, "crash", dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() {
			t.Fatalf("helper stopped: %v\n%s", cmd.Wait(), cmd.Stderr)
		}
		reported++
		time.Sleep(time.Duration(round%4) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			reported++
		}
		_ = cmd.Wait()
		n, size := leftovers(t, dir)
		if n > 1 {
			t.Fatalf("after a kill: %d leftovers, want at most the killed save's", n)
		}
		total += size
	}
	t.Logf("%d kills left %.1f MiB in all, each swept by the next open", held+crashes, float64(total)/(1<<20))

	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, size := leftovers(t, dir); n != 0 {
		t.Fatalf("after New: %d leftovers, %d bytes", n, size)
	}
	if _, err := s.Versions(t.Context(), &artifact.VersionsRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "held"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a killed save left a version: %v", err)
	}
	r, err := s.Versions(t.Context(), &artifact.VersionsRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "big"})
	if err != nil || len(r.Versions) < reported {
		t.Fatalf("Versions = %v, %v; the helpers reported %d saves", r, err, reported)
	}
	if got := saveText(t, s, sess1, "big", "after"); got != r.Versions[0]+1 {
		t.Errorf("Save after the sweep = version %d, want %d", got, r.Versions[0]+1)
	}
}

// TestSweepSparesLiveSaves: while another process holds a save between
// writing and claiming its version, opening the store and saving the same
// artifact (both sweep) leave its directory alone, and its save completes
// with its own bytes.
func TestSweepSparesLiveSaves(t *testing.T) {
	dir := t.TempDir()
	cmd, stdin, lines := startHold(t, dir)
	before, size := leftovers(t, dir)
	if before != 1 || size < crashSize {
		t.Fatalf("the live save shows %d directories, %d bytes", before, size)
	}
	for range 3 {
		s, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		saveText(t, s, sess1, "held", "beside it")
	}
	if n, sz := leftovers(t, dir); n != 1 || sz != size {
		t.Fatalf("after sweeps the live save has %d directories, %d bytes; want 1, %d", n, sz, size)
	}
	stdin.Close() // claim: the versions saved meanwhile make it retry
	var last string
	for lines.Scan() {
		last = lines.Text()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hold helper: %v\n%s", err, cmd.Stderr)
	}
	v, err := strconv.ParseInt(last, 10, 64)
	if err != nil || v != 4 {
		t.Fatalf("hold helper printed %q last, want version 4", last)
	}
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := s.Load(t.Context(), &artifact.LoadRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "held", Version: v})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(lr.Part.InlineData.Data, crashBody(holdSeed)) {
		t.Fatalf("the live save's version %d holds %d other bytes", v, len(lr.Part.InlineData.Data))
	}
	assertNoLeftovers(t, s)
}
