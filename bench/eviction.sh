#!/bin/bash
# SET throughput while evicting: redis-server and keyhive alternately, each
# with maxmemory $MAXMEM and allkeys-lru, loaded past the limit first, then
# redis-benchmark SET over a key range far larger than fits. Prints the
# ratio keyhive/redis per round and the median.
set -e
cd "$(dirname "$0")/.."
MAXMEM=${MAXMEM:-64mb} ROUNDS=${ROUNDS:-3} N=${N:-300000} D=${D:-100} P=${P:-16}
go build -o /tmp/keyhive-evict-bench ./cmd/keyhive
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
run() { # bin -> "ops/s evicted_keys:N"
	local port pid
	port=$((20000 + RANDOM % 10000))
	while port_in_use "$port"; do port=$((20000 + RANDOM % 10000)); done
	"$1" --port "$port" --save "" --maxmemory "$MAXMEM" --maxmemory-policy allkeys-lru >/dev/null 2>&1 &
	pid=$!
	until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
	redis-benchmark -p "$port" -t set -n "$N" -r 10000000 -d "$D" -P "$P" -q >/dev/null 2>&1 # fill past the limit
	ops=$(redis-benchmark -p "$port" -t set -n "$N" -r 10000000 -d "$D" -P "$P" -q 2>/dev/null | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
	evicted=$(redis-cli -p "$port" info stats | grep evicted_keys | tr -d '\r')
	kill "$pid"; wait "$pid" 2>/dev/null || true
	echo "$ops $evicted"
}
ratios=""
for r in $(seq "$ROUNDS"); do
	set -- $(run redis-server); rops=$1 rev=$2
	set -- $(run /tmp/keyhive-evict-bench); kops=$1 kev=$2
	ratio=$(echo "$kops $rops" | awk '{printf "%.2f", $1/$2}')
	echo "round $r: redis $rops ops/s ($rev), keyhive $kops ops/s ($kev), ratio $ratio"
	ratios="$ratios $ratio"
done
echo "$ratios" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print "median keyhive/redis:", a[int((NR+1)/2)]}'
