module github.com/adkskills/adkskills/internal/valid

go 1.25.0
