#!/usr/bin/env bash
# Prints the path of redis-server 7.4.1, the differential tests' oracle for
# Redis 7.2/7.4 behaviour (difftest.Start74), building it from source once
# into a cache: ${XDG_CACHE_HOME:-$HOME/.cache}/keyhive-oracles, where
# difftest.Oracle74 looks for it. The source tarball is the first of:
#
#   $KEYHIVE_REDIS_TARBALL            a path given by hand
#   ../shared/oracles beside the checkout
#   the cache                         a tarball downloaded before
#   $KEYHIVE_REDIS_URL                download.redis.io's release by default;
#                                     set it empty to never download
#
# Every tarball must match the pinned sha256. Exits 2, saying why on stderr,
# when no source or no compiler can be had (the tests that need the oracle
# then skip), 1 when a build fails. The build takes about two minutes.
set -euo pipefail

version=7.4.1
sha256=ca0093e53f93507da9e539a36af5a68e1bb19a921a18a72a8c077b8741d658e8
tarname=redis-$version.tar.gz
url=${KEYHIVE_REDIS_URL-https://download.redis.io/releases/$tarname}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/keyhive-oracles
dest=$cache/redis-$version
bin=$dest/src/redis-server
checkout=$(cd "$(dirname "$0")/../.." && pwd)

unavailable() { echo "build-oracle.sh: $*" >&2; exit 2; }

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

verified() { echo "$sha256  $1" | sha256sum --check --status; }

tarball=""
for candidate in "${KEYHIVE_REDIS_TARBALL:-}" "$checkout/../shared/oracles/$tarname" "$cache/$tarname"; do
  if [ -n "$candidate" ] && [ -f "$candidate" ]; then
    verified "$candidate" || { echo "build-oracle.sh: $candidate does not match the pinned sha256" >&2; exit 1; }
    tarball=$candidate
    break
  fi
done

mkdir -p "$cache"
if [ -z "$tarball" ]; then
  [ -n "$url" ] || unavailable "no $tarname beside the checkout or in $cache, and KEYHIVE_REDIS_URL is empty (no download)"
  part=$(mktemp "$cache/$tarname.XXXXXX")
  trap 'rm -f "$part"' EXIT
  if command -v curl >/dev/null; then
    fetch=(curl -fsSL --connect-timeout 10 --max-time 300 -o "$part" "$url")
  else
    fetch=(wget -q --timeout=10 -O "$part" "$url")
  fi
  "${fetch[@]}" 2>/dev/null || unavailable "no $tarname beside the checkout or in $cache, and $url could not be downloaded"
  verified "$part" || { echo "build-oracle.sh: $url does not match the pinned sha256" >&2; exit 1; }
  mv "$part" "$cache/$tarname"
  tarball=$cache/$tarname
fi

if ! command -v make >/dev/null || ! command -v gcc >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq gcc make; } >&2 ||
    unavailable "gcc and make are needed to build redis-server $version and could not be installed"
fi

echo "build-oracle.sh: building redis-server $version from $tarball (about two minutes, once)" >&2
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
if ! make -C "$work/redis-$version" -j"$(nproc)" BUILD_TLS=no >"$work/make.log" 2>&1; then
  tail -n 30 "$work/make.log" >&2
  echo "build-oracle.sh: building redis-server $version failed" >&2
  exit 1
fi
rm -rf "$dest"
mv "$work/redis-$version" "$dest"
echo "$bin"
