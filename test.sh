#!/usr/bin/env bash
# Runs every Keyhive test on a fresh machine: installs Debian's redis-server (the
# oracle of the differential tests) when missing, builds redis-server 7.4.1 (the
# oracle for Redis 7.2/7.4 behaviour) once into a cache directory, then vets and
# tests all packages.
set -euo pipefail
cd "$(dirname "$0")"

# Debian packages the tests run (each binary is named as its package), when
# missing: redis-server, redis-sentinel for the failover tests, and Prometheus
# and redis_exporter for the metrics tests.
missing=""
for pkg in redis-server redis-sentinel prometheus prometheus-redis-exporter; do
  command -v "$pkg" >/dev/null || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

# The 7.4.1 oracle is built from ../shared/oracles (about two minutes, once).
oracles=../shared/oracles
if [ -z "${KEYHIVE_ORACLE_74:-}" ]; then
  if [ ! -x "$oracles/build-redis.sh" ]; then
    echo "test.sh: $oracles/build-redis.sh not found (it builds the redis-server 7.4.1 oracle)"; exit 1
  fi
  KEYHIVE_ORACLE_74=$("$oracles/build-redis.sh" 7.4.1)
  export KEYHIVE_ORACLE_74
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi
# ioredis for workloads' TestIORedisCluster, pinned by its package-lock.json
# (the test skips without Node.js).
if command -v node >/dev/null; then
  (cd workloads/ioredis && npm ci --no-audit --no-fund --silent)
fi

go vet ./...
# Fuzz targets run their seed corpora as ordinary tests here.
go test -race -count=1 -timeout 15m ./...
