package fileartifact

// versionTime is a version's creation time, stored in seconds since the
// Unix epoch, as ADK v1's artifact.ArtifactVersion.CreateTime holds it: the
// same seconds (createtime_adk2.go gives ADK v2 its time.Time).
func versionTime(sec float64) float64 { return sec }
