#!/bin/sh
# Builds Keyhive's release archives: for each target a static binary (built
# by build.sh) with LICENSE, README.md, CHANGELOG.md and the sample
# keyhive.conf, as keyhive-<version>-<os>-<arch>.tar.gz (.zip for windows),
# and SHA256SUMS over them. The version is internal/version's Keyhive
# constant, the one place it is kept. Prints the output directory.
#
#   packaging/release.sh [output directory]     (default dist/<version>)
#   TARGETS="linux/amd64 linux/arm64" packaging/release.sh
#
# Needs GNU tar, zip (for windows) and sha256sum.
set -eu
cd "$(dirname "$0")/.."
version=$(sed -n 's/^[[:space:]]*Keyhive = "\([^"]*\)".*/\1/p' internal/version/version.go)
[ -n "$version" ] || { echo "release.sh: no Keyhive version in internal/version/version.go" >&2; exit 1; }
grep -q "^## \[$version\]" CHANGELOG.md || { echo "release.sh: CHANGELOG.md has no entry for $version" >&2; exit 1; }
targets=${TARGETS-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
[ -n "$targets" ] || { echo "release.sh: TARGETS is empty" >&2; exit 1; }
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "release.sh: the work tree has changes: the binaries will report it (keyhive --version: sha=...:1)" >&2
fi
out=${1:-dist/$version}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# Archive entries carry the commit's time and no local user, so the same
# commit gives the same archives.
mtime=@$(git log -1 --format=%ct 2>/dev/null || date +%s)

for target in $targets; do
  goos=${target%/*} goarch=${target#*/}
  name=keyhive-$version-$goos-$goarch
  exe=keyhive
  [ "$goos" != windows ] || exe=keyhive.exe
  dir=$stage/$name
  mkdir -p "$dir"
  GOOS=$goos GOARCH=$goarch packaging/build.sh "$dir/$exe"
  cp LICENSE README.md CHANGELOG.md packaging/keyhive.conf "$dir/"
  touch -d "$mtime" "$dir" "$dir"/*
  if [ "$goos" = windows ]; then
    rm -f "$out/$name.zip"
    (cd "$stage" && zip -qX "$out/$name.zip" "$name" "$name"/*)
  else
    tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner -cf "$stage/$name.tar" "$name"
    gzip -9nc "$stage/$name.tar" > "$out/$name.tar.gz"
  fi
done

cd "$out"
# SHA256SUMS covers every archive in the directory, also of earlier runs.
sha256sum $(ls keyhive-"$version"-*.tar.gz keyhive-"$version"-*.zip 2>/dev/null) > SHA256SUMS
echo "$out"
