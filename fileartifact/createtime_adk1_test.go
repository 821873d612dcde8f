package fileartifact

import (
	"time"

	"google.golang.org/adk/artifact"
)

// createdAt reads ADK v1's CreateTime, seconds since the Unix epoch.
func createdAt(av *artifact.ArtifactVersion) time.Time {
	return time.Unix(0, int64(av.CreateTime*1e9))
}
