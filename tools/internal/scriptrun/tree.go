package scriptrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"

	"google.golang.org/adk/agent"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
)

// DeletedArtifact is the artifact that records which files of a session's
// tree runs deleted: a JSON object {"deleted": [...]} listing, sorted, the
// artifact name (ArtifactName) of each deleted path. Its latest version is
// the record; each change of it is a new version.
//
// A deletion is recorded there, not by artifact.Service.Delete (which a
// tool cannot call, and which would drop the file's versions) nor by a
// marker version of the file itself (telling it from a file would take one
// load per artifact for every listing), nor in session state (the command
// line's runs share a store, not a session). The record is one Load per
// listing, and the file's versions stay as they were: Load of its name
// still gives its last content. No name ArtifactName makes has a "~"
// followed by a lower-case letter, so no file's name is this one.
const DeletedArtifact = "~adkskills-deleted.json"

// deletedRecord is DeletedArtifact's content.
type deletedRecord struct {
	Deleted []string `json:"deleted"`
}

// deletedMIMEType is DeletedArtifact's MIME type.
const deletedMIMEType = "application/json"

// recordMu serializes the updates of DeletedArtifact in this process: each
// loads the latest version and saves the next.
var recordMu sync.Mutex

// loadDeleted returns the paths the session's record says are deleted. A
// session without a record has none; a record that does not parse (no
// release of this module writes one) is taken as none, so that whatever
// stands under its name cannot hide the session's files.
func loadDeleted(ctx context.Context, arts agent.Artifacts) (map[string]bool, error) {
	resp, err := arts.Load(ctx, DeletedArtifact)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	var data []byte
	if p := resp.Part; p != nil && p.InlineData != nil {
		data = p.InlineData.Data
	} else if p != nil {
		data = []byte(p.Text)
	}
	var rec deletedRecord
	out := map[string]bool{}
	if json.Unmarshal(data, &rec) != nil {
		return out, nil
	}
	for _, name := range rec.Deleted {
		if p, ok := ArtifactPath(name); ok {
			out[p] = true
		}
	}
	return out, nil
}

// updateDeleted records that the paths of add were deleted and that those
// of remove are files of the session again (saved, or passed in and left
// in place). The record is saved only when it changes, and loaded under the
// lock only when it may: a run that deletes nothing and saves no path the
// record holds costs one Load.
func updateDeleted(ctx context.Context, arts agent.Artifacts, add, remove []string) error {
	if len(add) == 0 && len(remove) == 0 {
		return nil
	}
	if len(add) == 0 {
		cur, err := loadDeleted(ctx, arts)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(remove, func(p string) bool { return cur[p] }) {
			return nil
		}
	}
	recordMu.Lock()
	defer recordMu.Unlock()
	cur, err := loadDeleted(ctx, arts)
	if err != nil {
		return err
	}
	next := maps.Clone(cur)
	for _, p := range add {
		next[p] = true
	}
	for _, p := range remove {
		delete(next, p)
	}
	if maps.Equal(cur, next) {
		return nil
	}
	rec := deletedRecord{Deleted: make([]string, 0, len(next))}
	for p := range next {
		rec.Deleted = append(rec.Deleted, ArtifactName(p))
	}
	slices.Sort(rec.Deleted)
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := arts.Save(ctx, DeletedArtifact, &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: deletedMIMEType}}); err != nil {
		return fmt.Errorf("saving %s: %w", DeletedArtifact, err)
	}
	return nil
}

// Restore puts paths (relative to the skill root, as output_files[].name
// reports them before escaping) back into the session's tree: a host that
// saves a file into the session outside the script tools (the command
// line's --input does) calls it after the save, so that a path an earlier
// run deleted is offered again. A path that is not deleted is left alone.
func Restore(ctx context.Context, arts agent.Artifacts, paths ...string) error {
	if arts == nil {
		return nil
	}
	if err := updateDeleted(ctx, arts, nil, paths); err != nil {
		return fmt.Errorf("runscript: %w", err)
	}
	return nil
}

// DeletedFiles lists, sorted by path, the files runs deleted from the
// session's tree: each path and the artifact that held it, whose versions
// are all still there. SessionFiles leaves them out.
func DeletedFiles(ctx context.Context, arts agent.Artifacts) ([]SessionFile, error) {
	cat, err := sessionCatalogue(ctx, arts)
	if err != nil || cat == nil {
		return nil, err
	}
	out := make([]SessionFile, 0, len(cat.deleted))
	for _, p := range slices.Sorted(maps.Keys(cat.deleted)) {
		out = append(out, SessionFile{Path: p, Artifact: cat.deleted[p]})
	}
	return out, nil
}

// recordDeletions returns the deleted_files of a run, sorted by path: the
// inputs of ins whose paths res.Deleted lists (any other path there, the
// inline script's say, is no file of the session). It records the run's
// changes to the session's tree: those paths deleted, and back in it the
// paths of saved (the files saved) and of deleted artifacts named in
// input_files that the run left in place. A record that cannot be saved is
// the warning; the files are still listed.
func (r *Runner) recordDeletions(ctx context.Context, s Session, res *codeexec.Result, saved []OutputFile, ins []InputFile) ([]DeletedFile, string) {
	arts := s.ArtifactStore()
	if arts == nil {
		return nil, ""
	}
	var remove []string
	written := map[string]bool{}
	for _, f := range saved {
		if p, ok := ArtifactPath(f.Artifact); ok && f.Artifact != "" {
			written[p] = true
			remove = append(remove, p)
		}
	}
	staged := make(map[string]InputFile, len(ins))
	for _, in := range ins {
		staged[in.path] = in
	}
	gone := map[string]bool{}
	var add []string
	for _, p := range res.Deleted {
		if _, ok := staged[p]; ok && !written[p] && !gone[p] {
			gone[p] = true
			add = append(add, p)
		}
	}
	slices.Sort(add)
	for _, in := range ins {
		if in.deleted && !gone[in.path] {
			remove = append(remove, in.path)
		}
	}
	out := make([]DeletedFile, 0, len(add))
	for _, p := range add {
		out = append(out, DeletedFile{Name: DisplayPath(p), Artifact: staged[p].artifact})
	}
	if err := updateDeleted(ctx, arts, add, remove); err != nil {
		r.logger().Error("adkskills: recording the files a run deleted", "deleted", len(add), "error", err)
		return out, "the session's record of deleted files could not be updated, so it may still offer the files listed in deleted_files (details in the agent's log)"
	}
	return out, ""
}
