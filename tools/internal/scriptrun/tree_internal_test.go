package scriptrun

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/internal/adkglue"
)

// slowRecord takes its time to load the record, as a remote store does, so
// that updates started together overlap.
type slowRecord struct{ artifact.Service }

func (s slowRecord) Load(ctx context.Context, req *artifact.LoadRequest) (*artifact.LoadResponse, error) {
	resp, err := s.Service.Load(ctx, req)
	if req.FileName == DeletedArtifact {
		time.Sleep(20 * time.Millisecond) // the answer is on its way
	}
	return resp, err
}

// TestUpdateDeletedSerialized: updates of one session's record made at the
// same time each load the record the previous one saved, so none is lost.
func TestUpdateDeletedSerialized(t *testing.T) {
	const updates = 8
	arts := adkglue.SessionArtifacts(slowRecord{artifact.InMemoryService()}, "app", "user", "s")
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range updates {
		wg.Go(func() {
			if err := updateDeleted(ctx, arts, []string{fmt.Sprintf("f%d", i)}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := loadDeleted(ctx, arts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != updates {
		t.Errorf("the record holds %v, want all %d paths", slices.Sorted(maps.Keys(got)), updates)
	}
}

// TestUpdateDeletedSavesOnlyChanges: an update that changes nothing saves
// no version; one that removes a path the record does not hold does not
// even take the lock's path.
func TestUpdateDeletedSavesOnlyChanges(t *testing.T) {
	svc := artifact.InMemoryService()
	arts := adkglue.SessionArtifacts(svc, "app", "user", "s")
	ctx := context.Background()
	versions := func() int {
		vs, err := svc.Versions(ctx, &artifact.VersionsRequest{AppName: "app", UserID: "user", SessionID: "s", FileName: DeletedArtifact})
		if err != nil {
			return 0
		}
		return len(vs.Versions)
	}
	steps := []struct {
		add, remove []string
		versions    int
	}{
		{nil, []string{"a"}, 0},
		{[]string{"a", "b"}, nil, 1},
		{[]string{"a"}, nil, 1},
		{nil, []string{"c"}, 1},
		{[]string{"c"}, []string{"c"}, 1},
		{nil, []string{"a"}, 2},
		{[]string{"a"}, []string{"b"}, 3},
	}
	for i, s := range steps {
		if err := updateDeleted(ctx, arts, s.add, s.remove); err != nil {
			t.Fatal(err)
		}
		if got := versions(); got != s.versions {
			t.Errorf("step %d: %d versions of the record, want %d", i, got, s.versions)
		}
	}
	got, _ := loadDeleted(ctx, arts)
	if want := map[string]bool{"a": true}; !maps.Equal(got, want) {
		t.Errorf("record %v, want %v", got, want)
	}
}
