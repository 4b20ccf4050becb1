module github.com/keyhive/keyhive

go 1.26.8
