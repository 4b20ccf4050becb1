#!/bin/sh
# Builds the keyhive binary that ships: static (no cgo, so no libc to match),
# paths trimmed, symbols stripped, with cmd/keyhive/default.pgo's
# profile-guided optimization (go build's default), and the commit stamped
# from git (go build records none in a git worktree). The Dockerfile,
# release.sh and packaging's tests build with it, so all build the same
# binary. GOOS and GOARCH choose the target as for go build.
#
#   packaging/build.sh <output path>
set -eu
out=${1:?usage: packaging/build.sh <output path>}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")/.."
ldflags='-s -w'
if commit=$(git rev-parse HEAD 2>/dev/null); then
  modified=false
  [ -z "$(git status --porcelain 2>/dev/null)" ] || modified=true
  pkg=github.com/keyhive/keyhive/internal/version
  ldflags="$ldflags -X $pkg.commit=$commit -X $pkg.modified=$modified"
fi
CGO_ENABLED=0 exec go build -trimpath -ldflags="$ldflags" -o "$out" ./cmd/keyhive
