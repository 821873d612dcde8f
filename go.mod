module github.com/adkskills/adkskills

go 1.25.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	google.golang.org/adk v1.7.0 // indirect
)
