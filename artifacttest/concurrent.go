package artifacttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// saveAttempts bounds how often a Save racing other saves is tried:
// artifact.Service lets a service that claims versions optimistically fail
// such a Save, and the caller retry it.
const saveAttempts = 10

// dupsShown is how many versions given twice a failure of ConcurrentSaves
// names.
const dupsShown = 3

// saveRetrying saves part as name in session and returns its version,
// retrying a failed Save.
func saveRetrying(svc artifact.Service, session, name string, part *genai.Part) (int64, error) {
	var err error
	for range saveAttempts {
		var r *artifact.SaveResponse
		r, err = svc.Save(context.Background(), &artifact.SaveRequest{AppName: app, UserID: user, SessionID: session, FileName: name, Part: part})
		if err == nil && r != nil {
			return r.Version, nil
		}
	}
	return 0, fmt.Errorf("Save(%q) in session %q failed %d times: %w", name, session, saveAttempts, orNoResponse(err))
}

// testConcurrentSaves: goroutines in two sessions saving one "user:"
// artifact at once each get their own version; together the versions are
// 1..N and each holds what its save saved.
func testConcurrentSaves(t *testing.T, svc artifact.Service) {
	const writers, each = 8, 10
	var mu sync.Mutex
	content := map[int64]string{}
	dups := 0
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			session := fmt.Sprint("s", w%2+1)
			for i := range each {
				body := fmt.Sprintf("writer %d save %d", w, i)
				v, err := saveRetrying(svc, session, "user:shared", csv(body))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if prev, dup := content[v]; dup {
					if dups++; dups <= dupsShown {
						t.Errorf("Save gave version %d to %q and to %q", v, prev, body)
					}
				}
				content[v] = body
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if dups > 0 {
		t.Fatalf("%d of %d saves got a version another save had", dups, writers*each)
	}
	if t.Failed() {
		return
	}
	n := int64(writers * each)
	want := make([]int64, n)
	for i := range want {
		want[i] = n - int64(i)
	}
	if got := do(t.Context(), svc, versions("user:shared")); !cmp.Equal(vers(want...), got) {
		t.Fatalf("after %d concurrent saves, Versions = %+v, want %d..1", n, got, n)
	}
	for v, body := range content {
		if got := do(t.Context(), svc, load("user:shared", v)); !cmp.Equal(part(csv(body)), got) {
			t.Errorf("version %d: Load = %+v, want what %q saved", v, got, body)
		}
	}
}

// testLoadDuringSaves: while one goroutine saves large parts, a Load of the
// latest version sees a whole version, never part of one.
func testLoadDuringSaves(t *testing.T, svc artifact.Service) {
	const size = 1 << 20
	const mime = "application/octet-stream"
	saves := 20
	if testing.Short() {
		saves = 5
	}
	if got := do(t.Context(), svc, load("big", 0)); !cmp.Equal(notExist, got) {
		t.Fatalf("Load before any save: (-want +got)\n%s", cmp.Diff(notExist, got))
	}
	done := make(chan struct{})
	defer func() { <-done }() // the saver reports to t: wait for it, even after a failure
	go func() {
		defer close(done)
		for i := range saves {
			body := bytes.Repeat([]byte{byte('a' + i%26)}, size)
			if _, err := saveRetrying(svc, sess1, "big", genai.NewPartFromBytes(body, mime)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		r, err := svc.Load(context.Background(), &artifact.LoadRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "big"})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatalf("Load during saves: %v", err)
		}
		d := r.Part.InlineData
		if d == nil || d.MIMEType != mime || len(d.Data) != size || bytes.Count(d.Data, d.Data[:1]) != size {
			t.Fatalf("Load during saves returned part of a version: %+v", r.Part)
		}
	}
}

// testDeleteDuringSaves: deletes of every version racing saves of the same
// artifact make no call fail; whatever survives is listed and loads, and
// the artifact goes on working: a save after them gets the next version,
// and a delete after that leaves nothing.
func testDeleteDuringSaves(t *testing.T, svc artifact.Service) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 15 {
				if w%2 == 0 {
					if _, err := saveRetrying(svc, sess1, "churn", csv(fmt.Sprint(w, "-", i))); err != nil {
						t.Error(err)
					}
					continue
				}
				if err := svc.Delete(context.Background(), &artifact.DeleteRequest{AppName: app, UserID: user, SessionID: sess1, FileName: "churn"}); err != nil {
					t.Errorf("Delete during saves: %v", err)
				}
			}
		})
	}
	wg.Wait()
	var survivors []int64
	switch got := do(t.Context(), svc, versions("churn")); {
	case got.Err == errNotExist:
	case got.Err == errNone && newestFirst(got.Versions):
		survivors = got.Versions
	default:
		t.Fatalf("Versions after deletes and saves = %+v, want versions newest first or not exist", got)
	}
	if listed := slices.Contains(do(t.Context(), svc, list()).Names, "churn"); listed != (survivors != nil) {
		t.Errorf("versions %v survive, but List names churn: %v", survivors, listed)
	}
	for _, v := range survivors {
		if got := do(t.Context(), svc, load("churn", v)); got.Err != errNone || got.Part == nil {
			t.Errorf("version %d survives, but Load = %+v", v, got)
		}
	}
	next := int64(1)
	if survivors != nil {
		next = survivors[0] + 1
	}
	steps := []step{
		{save("churn", csv("after")), ver(next)},
		{load("churn", 0), part(csv("after"))},
		{del("churn", 0), success},
		{versions("churn"), notExist},
		{list(), success},
	}
	runScenario(t, svc, steps)
}

// newestFirst reports whether vs are versions (1 or more), each older than
// the one before.
func newestFirst(vs []int64) bool {
	for i, v := range vs {
		if v < 1 || i > 0 && v >= vs[i-1] {
			return false
		}
	}
	return len(vs) > 0
}
