package scriptrun

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/internal/encoding"
)

// maxWarnings bounds how many problems one warning names; the rest are
// counted.
const maxWarnings = 10

// saveScriptOutputs saves each output file as an artifact of s (raw bytes
// with a MIME type, never entering the response) and returns the manifest
// and the warnings. Without an artifact service nothing is saved: the files
// are listed and a warning says so. A failed save does not stop the others;
// the warning names it and the reason goes to the log only.
//
// Saves are issued one at a time: ADK v1.7.0 records each save in the tool's
// EventActions.ArtifactDelta map without a lock (agent/callback_context.go,
// trackedArtifacts.Save), so concurrent saves through one ToolContext race.
func (r *Runner) saveScriptOutputs(ctx context.Context, s Session, files []codeexec.File) ([]OutputFile, []string) {
	manifest := make([]OutputFile, 0, len(files))
	if len(files) == 0 {
		return manifest, nil
	}
	arts := s.ArtifactStore()
	var failed []string
	for _, f := range files {
		entry := OutputFile{Name: DisplayPath(f.Path)}
		data, err := encoding.Decode(f.Path, f.Data, f.Encoding)
		if err != nil {
			r.logger().Error("adkskills: decoding output file", "path", f.Path, "error", err)
			failed = append(failed, DisplayPath(f.Path))
			continue
		}
		mimeType := encoding.MIMEType(f.Path, data)
		entry.MIMEType = mimeType
		entry.SizeBytes = int64(len(data))
		if arts == nil {
			manifest = append(manifest, entry)
			continue
		}
		name := ArtifactName(f.Path)
		resp, err := arts.Save(ctx, name, &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: mimeType}})
		if err != nil {
			r.logger().Error("adkskills: saving output file as artifact", "path", f.Path, "artifact", name, "error", err)
			failed = append(failed, DisplayPath(f.Path))
			continue
		}
		entry.Artifact = name
		entry.Version = resp.Version
		manifest = append(manifest, entry)
	}
	var warnings []string
	if arts == nil {
		r.noArtifact.Do(func() {
			r.logger().Warn("adkskills: no artifact service is configured; files scripts write are listed but not saved (set runner.Config.ArtifactService)")
		})
		warnings = append(warnings, fmt.Sprintf("no artifact service is configured: %d output file(s) were listed but not saved", len(manifest)))
	}
	if len(failed) > 0 {
		warnings = append(warnings, fmt.Sprintf("%d of %d output file(s) could not be saved: %s", len(failed), len(files), joinNames(failed)))
	}
	return manifest, warnings
}

// joinNames lists at most maxWarnings names and counts the rest.
func joinNames(names []string) string {
	if len(names) <= maxWarnings {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxWarnings], ", "), len(names)-maxWarnings)
}

// joinWarnings joins warnings into one sentence list, at most maxWarnings of
// them, counting the rest ("" for none).
func joinWarnings(ws []string) string {
	if len(ws) <= maxWarnings {
		return strings.Join(ws, "; ")
	}
	return fmt.Sprintf("%s; and %d more problem(s)", strings.Join(ws[:maxWarnings], "; "), len(ws)-maxWarnings)
}
