#!/usr/bin/env bash
# Runs every Keyhive test on a fresh machine: installs Debian's redis-server (the
# oracle of the differential tests) when missing, builds redis-server 7.4.1 (the
# oracle for Redis 7.2/7.4 behaviour) once into a cache directory when its
# source can be had (else the tests that need it skip, listed here), then vets
# and tests all packages. It prints a line per package, the output of failed
# tests only, and a summary at the end; the whole output goes to the file the
# summary names.
#
# Arguments go to go test: ./test.sh -short is the fast subset for the
# edit-test loop (see README), ./test.sh -run TestX one test.
set -euo pipefail
cd "$(dirname "$0")"
short=false
for arg in "$@"; do
  [ "$arg" = -short ] && short=true
done

# Debian packages the tests run (each binary is named as its package), when
# missing: redis-server, redis-sentinel for the failover tests, Prometheus
# and redis_exporter for the metrics tests, and Chromium for the console's
# browser test (workloads' TestConsoleInBrowser).
missing=""
for pkg in redis-server redis-sentinel prometheus prometheus-redis-exporter chromium; do
  command -v "$pkg" >/dev/null || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

# go-redis's own spec files run against Keyhive (server/goredis_*_test.go)
# need its Ginkgo fork in the module cache; without the module proxy they skip.
go mod download github.com/redis/go-redis/v9 github.com/bsm/ginkgo/v2@v2.12.0 github.com/bsm/gomega@v1.27.10 2>/dev/null ||
  echo "test.sh: go-redis's test dependencies could not be downloaded: its specs will skip"

# The 7.4.1 oracle, redis-server 7.4.1 built once into a cache from a source
# tarball found beside the checkout, in the cache or downloaded (see
# internal/difftest/build-oracle.sh). Without one the tests that need it skip.
if [ -z "${KEYHIVE_ORACLE_74:-}" ]; then
  if oracle=$(internal/difftest/build-oracle.sh); then
    export KEYHIVE_ORACLE_74=$oracle
  else
    status=$?
    [ "$status" = 2 ] || exit "$status"
    echo "test.sh: no redis-server 7.4.1 oracle (reason above); these tests will skip:"
    # Each test function that calls for the oracle, or calls a helper of
    # its package that does, by file. The first pass finds those helpers.
    tests=$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go')
    awk 'FNR == 1 { dir = FILENAME; sub(/[^\/]*$/, "", dir) }
      /^func / { fn = ($2 ~ /^\(/) ? $4 : $2; sub(/[(\[].*/, "", fn); next }
      pass == 1 && fn !~ /^(Test|Fuzz|Benchmark)/ && /(Start74|StartIsolated74|Oracle74|Need74)\(/ { helper[dir, fn] = 1 }
      pass == 2 && fn ~ /^(Test|Fuzz)/ && !seen[FILENAME, fn] {
        needs = /(Start74|StartIsolated74|Oracle74|Need74)\(/
        for (k in helper) {
          split(k, hk, SUBSEP)
          if (hk[1] == dir && index($0, hk[2] "(")) needs = 1
        }
        if (needs) { seen[FILENAME, fn] = 1; printf "  %s %s\n", FILENAME, fn }
      }' pass=1 $tests pass=2 $tests
  fi
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi
# ioredis for workloads' TestIORedisCluster, pinned by its package-lock.json
# (the test skips without Node.js, and in -short mode).
if command -v node >/dev/null && ! $short; then
  (cd workloads/ioredis && npm ci --no-audit --no-fund --silent)
fi

go vet ./...
# Fuzz targets run their seed corpora as ordinary tests here. testreport
# runs go test -json and keeps the run readable (internal/testreport).
# -short leaves out the race detector, which makes the server's tests about
# three times slower.
race=-race
if $short; then race=""; fi
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
go build -o "$tools/testreport" ./internal/testreport
# The timeout only catches a hang: beside a CPU hog the server's tests take
# longer than 15 minutes under -race.
"$tools/testreport" $race -count=1 -timeout 45m "$@" ./...
if $short; then exit 0; fi
# Vector sets' recall at its full size, which the race detector makes take
# two minutes (it runs a smaller set under it).
"$tools/testreport" -count=1 -run '^TestRecall$' "$@" ./internal/vset/

# Other systems (README, Platforms): macOS, Windows and arm64 build and vet,
# and the portable I/O path they serve clients on passes the server's tests
# here, selected on Linux by KEYHIVE_PORTABLE_IO.
for target in darwin/arm64 windows/amd64 windows/arm64 linux/arm64; do
  GOOS=${target%/*} GOARCH=${target#*/} go build ./...
  GOOS=${target%/*} GOARCH=${target#*/} go vet ./...
done
# Left out there, to keep the suite within its time: go-redis's own spec
# suites (a build of go-redis's tests) and the Sentinel failover
# trials, whose client traffic the other tests already cover.
echo "test.sh: the server's tests again, on the portable I/O path (KEYHIVE_PORTABLE_IO=yes)"
KEYHIVE_PORTABLE_IO=yes "$tools/testreport" -count=1 -timeout 30m -skip '^(TestGoRedis.*Specs|TestReplSentinelFailover)$' "$@" ./server/ ./keyhivetest/
