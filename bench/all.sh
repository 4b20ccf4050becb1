#!/usr/bin/env bash
# Regenerates every figure README.md (## Benchmarks), docs/performance.md and
# docs/benchmarks.md quote: runs each benchmark tool with the settings those
# pages name, one after the other, on one keyhive binary, and writes each
# tool's table to $OUT/<name>.md (its progress to $OUT/<name>.log) and the
# time each took to $OUT/times.md. Run it on a quiet machine: the tables are
# medians of per-round ratios beside their noise floor, but a busy machine
# widens both.
#
#   bench/all.sh                        # everything, about 80 minutes on 2 cores
#   bench/all.sh throughput cpu         # only these (names below)
#   QUICK=1 bench/all.sh                # every tool with tiny settings (checks the tools, not figures)
#   OUT=/tmp/results bench/all.sh       # default: a new directory under $TMPDIR, printed at the end
#
# docs/benchmarks.md is keyhive-bench's own output: copy $OUT/benchmarks.md
# over it. The other pages quote $OUT/<name>.md by hand where they say
# "not yet measured".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/keyhive-bench-results.XXXXXX")}
QUICK=${QUICK:-0}
mkdir -p "$OUT"

go build -o "$OUT/keyhive" ./cmd/keyhive
export KEYHIVE_BIN=$OUT/keyhive
# The memory matrix's hashes with field TTLs need Redis 7.4 (HEXPIRE).
REDIS_74=${REDIS_74:-$(command -v redis-server)}

extended="LPUSH LPOP SADD HSET LRANGE_100 ZADD ZRANK EVALSHA_ENQUEUE EVALSHA_RATELIMIT XADD XREAD_100 PFADD PFCOUNT GEOADD GEOSEARCH"

# tool NAME: the command (an env(1) line) of benchmark NAME, full or QUICK.
tool() {
	local q=$QUICK
	case $1 in
	throughput) [ "$q" = 1 ] && echo "env ROUNDS=2 N=20000 TESTS='SET GET' bench/throughput.sh" ||
		echo "env ROUNDS=5 bench/throughput.sh" ;;
	throughput-more) [ "$q" = 1 ] && echo "env ROUNDS=2 N=5000 TESTS='ZRANK EVALSHA_RATELIMIT' bench/throughput.sh" ||
		echo "env ROUNDS=3 TESTS='$extended' bench/throughput.sh" ;;
	cpu) [ "$q" = 1 ] && echo "env ROUNDS=2 N=30000 bench/cpu_per_request.sh" ||
		echo "env ROUNDS=5 bench/cpu_per_request.sh" ;;
	memory) [ "$q" = 1 ] && echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -keys 100000 -duration 2s -slice 1s -settle 500ms" ||
		echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -keys 1000000,10000000" ;;
	collections) [ "$q" = 1 ] && echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -collections 50000 -settle 500ms" ||
		echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -collections 1000000" ;;
	matrix) [ "$q" = 1 ] && echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -redis $REDIS_74 -matrix -matrix-scale 0.01 -seed-ops 2000 -settle 500ms" ||
		echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -redis $REDIS_74 -matrix" ;;
	json) [ "$q" = 1 ] && echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -json 5000 -rounds 2 -settle 500ms" ||
		echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -json 100000 -rounds 5" ;;
	vset) [ "$q" = 1 ] && echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -vset 2000 -vset-queries 200 -settle 500ms" ||
		echo "go run ./bench/memory -keyhive $KEYHIVE_BIN -vset 100000" ;;
	pubsub) [ "$q" = 1 ] && echo "go run ./bench/pubsub -keyhive $KEYHIVE_BIN -rounds 2 -n 20000" ||
		echo "go run ./bench/pubsub -keyhive $KEYHIVE_BIN -rounds 5" ;;
	eviction) [ "$q" = 1 ] && echo "env ROUNDS=2 N=50000 FILL=700000 bench/eviction.sh" ||
		echo "env ROUNDS=5 bench/eviction.sh" ;;
	hitratio) [ "$q" = 1 ] && echo "go run ./bench/hitratio -keyhive $KEYHIVE_BIN -keys 5000 -length 20000 -traces zipf-1.0,ipx -fracs 0.25" ||
		echo "go run ./bench/hitratio -keyhive $KEYHIVE_BIN" ;;
	lrfu-cpu) [ "$q" = 1 ] && echo "env KEYHIVE_PLAIN=$KEYHIVE_BIN KEYHIVE_BIN=bench/keyhive-evicting.sh REDIS_BIN=bench/keyhive-evicting-lru.sh ROUNDS=2 N=30000 TESTS='set get' bench/cpu_per_request.sh" ||
		echo "env KEYHIVE_PLAIN=$KEYHIVE_BIN KEYHIVE_BIN=bench/keyhive-evicting.sh REDIS_BIN=bench/keyhive-evicting-lru.sh ROUNDS=5 TESTS='set get' bench/cpu_per_request.sh" ;;
	rdb) [ "$q" = 1 ] && echo "env ROUNDS=2 KEYS=200000 bench/rdb.sh" ||
		echo "env KEYS=10000000 ROUNDS=3 bench/rdb.sh" ;;
	aof) [ "$q" = 1 ] && echo "env ROUNDS=2 KEYS=100000 bench/aof.sh" ||
		echo "env KEYS=10000000 ROUNDS=3 bench/aof.sh" ;;
	bgsave) [ "$q" = 1 ] && echo "env ROUNDS=2 KEYS=300000 N=50000 bench/bgsave_latency.sh" ||
		echo "env KEYS=5000000 ROUNDS=3 bench/bgsave_latency.sh" ;;
	workloads) [ "$q" = 1 ] && echo "go run ./cmd/keyhive-bench -keyhive $KEYHIVE_BIN -workloads dns,cms -duration 1s -warmup 300ms -rounds 2 -rate-rounds 2 -stalls 500ms -out $OUT/benchmarks.md" ||
		echo "go run ./cmd/keyhive-bench -keyhive $KEYHIVE_BIN -clients 50 -duration 5s -rounds 5 -rate-rounds 5 -out $OUT/benchmarks.md" ;;
	*) return 1 ;;
	esac
}
all="throughput throughput-more cpu memory collections matrix json vset pubsub eviction hitratio lrfu-cpu rdb aof bgsave workloads"
names=${*:-$all}
for name in $names; do tool "$name" >/dev/null || { echo "all.sh: unknown benchmark $name (known: $all)" >&2; exit 2; }; done

printf '| benchmark | command | minutes |\n|---|---|---:|\n' >"$OUT/times.md"
total=$SECONDS
failed=""
for name in $names; do
	cmd=$(tool "$name")
	echo "== $name: $cmd" >&2
	start=$SECONDS
	if ! eval "$cmd" >"$OUT/$name.md" 2>"$OUT/$name.log"; then
		failed+=" $name"
		echo "   FAILED, see $OUT/$name.log" >&2
	fi
	minutes=$(awk -v s=$((SECONDS - start)) 'BEGIN { printf "%.1f", s / 60 }')
	printf '| %s | `%s` | %s |\n' "$name" "${cmd//$OUT/\$OUT}" "$minutes" >>"$OUT/times.md"
	echo "   $minutes min" >&2
done
printf '| all | | %s |\n' "$(awk -v s=$((SECONDS - total)) 'BEGIN { printf "%.1f", s / 60 }')" >>"$OUT/times.md"
cat "$OUT/times.md" >&2
echo "results in $OUT" >&2
[ -z "$failed" ] || { echo "failed:$failed" >&2; exit 1; }
