//go:build ignore

package fileartifact

import (
	"time"

	"google.golang.org/adk/v2/artifact"
)

// createdAt reads ADK v2's CreateTime, a time.Time.
func createdAt(av *artifact.ArtifactVersion) time.Time {
	return av.CreateTime
}
