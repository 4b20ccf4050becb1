// Package version is the one place that says which versions Keyhive reports:
// its own (keyhive --version, INFO's keyhive_version, the release archives'
// names: packaging/release.sh reads the Keyhive constant; the docs' sample
// output and CHANGELOG.md are checked against it), the commit it was built
// from (INFO's keyhive_git_sha1 and redis_git_sha1), and the Redis version it
// is compatible with: INFO's redis_version, HELLO's version, scripts'
// REDIS_VERSION, the RDB header's redis-ver and the config error banner all
// read Redis.
//
// Keyhive reports 7.4.1: clients gate features on redis_version, and 7.4 is the
// newest Redis whose whole command surface Keyhive implements and checks
// against a real redis-server 7.4.1. Keyhive also serves Redis 8.x commands
// (HGETEX, SET IFEQ, ...), but reporting 8.x would tell clients the bundled
// 8.x modules (JSON, search, time series) are there, and they are not.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
)

const (
	// Keyhive is Keyhive's own version.
	Keyhive = "0.9.0"
	// Redis is the Redis version Keyhive reports.
	Redis = "7.4.1"
	// RedisNum is Redis as 0x00MMmmpp, as scripts see it in REDIS_VERSION_NUM.
	RedisNum = 0x070401
)

// commit (the full hex) and modified ("true" or "false") are stamped by
// packaging/build.sh with -ldflags -X from git, so its binaries name their
// commit also where the go command records none (a git worktree).
var commit, modified string

// vcs is the stamped commit, else what the go command recorded of the git
// checkout the binary was built in: it stamps vcs.revision and vcs.modified
// when it builds a main package in a clone (not in a git worktree, whose .git
// is a file, as of Go 1.26), and nothing for tests, -buildvcs=false or go
// install from the module cache.
var vcs = sync.OnceValues(func() (sha string, dirty bool) {
	if len(commit) >= 8 {
		return commit[:8], modified == "true"
	}
	info, _ := debug.ReadBuildInfo()
	return fromBuildInfo(info)
})

func fromBuildInfo(info *debug.BuildInfo) (sha string, dirty bool) {
	sha = "00000000" // Redis's value when the commit is unknown
	if info == nil {
		return sha, false
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if len(s.Value) >= 8 {
				sha = s.Value[:8] // Redis's redis_git_sha1 is 8 hex digits
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return sha, dirty
}

// GitSHA1 is the first 8 hex digits of the commit the binary was built from,
// "00000000" when unknown.
func GitSHA1() string {
	sha, _ := vcs()
	return sha
}

// GitDirty reports whether the work tree had uncommitted changes when the
// binary was built.
func GitDirty() bool {
	_, dirty := vcs()
	return dirty
}

// Line is keyhive --version's output, in the shape of redis-server -v's.
func Line() string {
	dirty := 0
	if GitDirty() {
		dirty = 1
	}
	return fmt.Sprintf("Keyhive server v=%s sha=%s:%d redis=%s go=%s bits=%d",
		Keyhive, GitSHA1(), dirty, Redis, runtime.Version(), strconv.IntSize)
}
