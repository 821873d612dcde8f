module github.com/adkskills/adkskills/codeexec

go 1.25.0

require (
	github.com/adkskills/adkskills/internal/encoding v0.0.0-00010101000000-000000000000
	github.com/adkskills/adkskills/internal/truncate v0.0.0-00010101000000-000000000000
	github.com/adkskills/adkskills/internal/valid v0.0.0-00010101000000-000000000000
	github.com/elastic/go-seccomp-bpf v1.6.0
	golang.org/x/net v0.57.0
	golang.org/x/sys v0.47.0
)

require golang.org/x/text v0.40.0 // indirect

replace (
	github.com/adkskills/adkskills/internal/encoding => ../internal/encoding
	github.com/adkskills/adkskills/internal/truncate => ../internal/truncate
	github.com/adkskills/adkskills/internal/valid => ../internal/valid
)
