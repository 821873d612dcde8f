//go:build ignore

package fileartifact

import (
	"math"
	"time"
)

// versionTime is a version's creation time, stored in seconds since the
// Unix epoch, as ADK v2's artifact.ArtifactVersion.CreateTime holds it: a
// time.Time (createtime_adk1.go gives ADK v1 its float64 seconds). The
// stored format is the same for both majors, so either reads a store the
// other wrote.
func versionTime(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(frac*1e9))
}
