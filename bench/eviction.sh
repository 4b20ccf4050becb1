#!/bin/bash
# SET throughput while evicting: in each round keyhive, redis-server and a
# second redis-server (the noise floor) in turn, each started fresh with
# maxmemory $MAXMEM and allkeys-lru, loaded past the limit first ($FILL
# SETs), then redis-benchmark SET over a key range far larger than fits.
# Measured: ops/s, SETs per second of the server's own CPU time
# (utime+stime; steadier than ops/s on a loaded machine) and the keys it
# evicted while measured; the table gives the median of the per-round ratios.
#
#   bench/eviction.sh
#   ROUNDS=5 MAXMEM=64mb N=300000 D=100 P=16 FILL=1000000 bench/eviction.sh
#   KEYHIVE_BIN=path  use this binary instead of building ./cmd/keyhive
set -euo pipefail
MAXMEM=${MAXMEM:-64mb} ROUNDS=${ROUNDS:-3} N=${N:-300000} D=${D:-100} P=${P:-16} FILL=${FILL:-1000000}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" eviction
# shellcheck source=bench/rounds.sh
source "$root/bench/rounds.sh"
evicted() { redis-cli -p "$1" info stats | grep evicted_keys | tr -d '\r' | cut -d: -f2; }
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # bin -> "ops/s<TAB>SETs-per-cpu-second<TAB>evicted-while-measured"
	local port pid before ticks ops after
	port=$(free_port)
	"$1" --port "$port" --save "" --appendonly no --maxmemory "$MAXMEM" --maxmemory-policy allkeys-lru >/dev/null 2>&1 &
	pid=$!
	pids+=("$pid")
	wait_up "$port"
	redis-benchmark -p "$port" -t set -n "$FILL" -r 10000000 -d "$D" -P "$P" -q >/dev/null 2>&1 # fill past the limit
	before=$(evicted "$port") ticks=$(cputicks "$pid")
	ops=$(redis-benchmark -p "$port" -t set -n "$N" -r 10000000 -d "$D" -P "$P" -q 2>/dev/null | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
	after=$(evicted "$port") ticks=$(($(cputicks "$pid") - ticks))
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	printf '%s\t%s\t%s\n' "${ops:-NA}" "$((N * $(getconf CLK_TCK) / (ticks > 0 ? ticks : 1)))" "$((after - before))"
}
declare -A bin=([redis]=redis-server [keyhive]=$KEYHIVE_BIN [redis2]=redis-server)
raw=$tmp/raw.tsv
printf 'measure\tround\tserver\t\n' >"$raw"
start=$SECONDS
for round in $(seq "$ROUNDS"); do
	for name in $(round_order "$round"); do
		run "${bin[$name]}" >"$tmp/m" # not in a subshell: cleanup must see its pids
		IFS=$'\t' read -r ops percpu ev <"$tmp/m"
		printf 'ops/s\t%s\t%s\t%s\nSETs per CPU-second\t%s\t%s\t%s\nkeys evicted while measured\t%s\t%s\t%s\n' \
			"$round" "$name" "$ops" "$round" "$name" "$percpu" "$round" "$name" "$ev" >>"$raw"
		echo "round $round/$ROUNDS $name: $ops ops/s, $percpu SETs per CPU-second, $ev evicted" >&2
	done
done
echo "done in $((SECONDS - start)) s" >&2
echo "SET while evicting under maxmemory $MAXMEM (allkeys-lru, $FILL SETs before), redis-benchmark -t set -n $N -r 10000000 -d $D -P $P; $ROUNDS rounds"
echo
ratio_table <"$raw"
