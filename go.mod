module github.com/keyhive/keyhive

go 1.26.8

require (
	github.com/redis/go-redis/v9 v9.22.0
	github.com/yuin/gopher-lua v1.1.2
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.30.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	go.uber.org/atomic v1.11.0 // indirect
)
