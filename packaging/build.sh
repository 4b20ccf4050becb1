#!/bin/sh
# Builds the keyhive binary that ships: static (no cgo, so no libc to match),
# paths trimmed, symbols stripped, with cmd/keyhive/default.pgo's
# profile-guided optimization (go build's default). The Dockerfile runs this
# script and packaging's tests build with it, so both build the same binary.
#
#   packaging/build.sh <output path>
set -eu
out=${1:?usage: packaging/build.sh <output path>}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")/.."
CGO_ENABLED=0 exec go build -trimpath -ldflags='-s -w' -o "$out" ./cmd/keyhive
