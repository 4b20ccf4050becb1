#!/usr/bin/env bash
# Runs every Keyhive test on a fresh machine: installs Debian's redis-server (the
# oracle of the differential tests) when missing, then vets and tests all packages.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v redis-server >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi
go vet ./...
# Fuzz targets run their seed corpora as ordinary tests here.
go test -race -count=1 -timeout 15m ./...
