package execenv

import (
	"slices"
	"testing"
)

func TestBuild(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		layers []map[string]string
		want   []string
	}{
		{"Allowlist", "/bin", nil, []string{
			"HOME=/w/.home", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PATH=/bin", "PYTHONDONTWRITEBYTECODE=1",
			"PYTHONIOENCODING=utf-8", "PYTHONPATH=/w/s", "SKILL_DIR=/w/s", "TMPDIR=/w/.tmp"}},
		{"DefaultPATH", "", nil, []string{
			"HOME=/w/.home", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PATH=" + DefaultPATH, "PYTHONDONTWRITEBYTECODE=1",
			"PYTHONIOENCODING=utf-8", "PYTHONPATH=/w/s", "SKILL_DIR=/w/s", "TMPDIR=/w/.tmp"}},
		{"LaterLayersWin", "/bin", []map[string]string{{"A": "1", "LANG": "x"}, {"A": "2"}}, []string{
			"A=2", "HOME=/w/.home", "LANG=x", "LC_ALL=C.UTF-8", "PATH=/bin", "PYTHONDONTWRITEBYTECODE=1",
			"PYTHONIOENCODING=utf-8", "PYTHONPATH=/w/s", "SKILL_DIR=/w/s", "TMPDIR=/w/.tmp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SECRET_FROM_HOST", "leak")
			got := Build("/w/s", "/w/.home", "/w/.tmp", tt.path, tt.layers...)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Build = %q\nwant  %q", got, tt.want)
			}
		})
	}
}
