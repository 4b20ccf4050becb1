#!/bin/bash
# SET throughput while evicting: redis-server and keyhive alternately, each
# with maxmemory $MAXMEM and allkeys-lru, loaded past the limit first ($FILL
# SETs), then redis-benchmark SET over a key range far larger than fits.
# Prints per round each server's ops/s, its SETs per second of its own CPU
# time (utime+stime; steadier than ops/s on a loaded machine) and the keys it
# evicted while measured, then the median ratios keyhive/redis.
set -e
cd "$(dirname "$0")/.."
MAXMEM=${MAXMEM:-64mb} ROUNDS=${ROUNDS:-3} N=${N:-300000} D=${D:-100} P=${P:-16} FILL=${FILL:-1000000}
go build -o /tmp/keyhive-evict-bench ./cmd/keyhive
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
evicted() { redis-cli -p "$1" info stats | grep evicted_keys | tr -d '\r' | cut -d: -f2; }
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # bin -> "ops/s SETs-per-cpu-second evicted-while-measured"
	local port pid
	port=$((20000 + RANDOM % 10000))
	while port_in_use "$port"; do port=$((20000 + RANDOM % 10000)); done
	"$1" --port "$port" --save "" --maxmemory "$MAXMEM" --maxmemory-policy allkeys-lru >/dev/null 2>&1 &
	pid=$!
	until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
	redis-benchmark -p "$port" -t set -n "$FILL" -r 10000000 -d "$D" -P "$P" -q >/dev/null 2>&1 # fill past the limit
	before=$(evicted "$port") ticks=$(cputicks "$pid")
	ops=$(redis-benchmark -p "$port" -t set -n "$N" -r 10000000 -d "$D" -P "$P" -q 2>/dev/null | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
	after=$(evicted "$port") ticks=$(($(cputicks "$pid") - ticks))
	kill "$pid"; wait "$pid" 2>/dev/null || true
	echo "$ops $((N * $(getconf CLK_TCK) / ticks)) $((after - before))"
}
ratios="" cpuratios=""
for r in $(seq "$ROUNDS"); do
	set -- $(run redis-server); rops=$1 rcpu=$2 rev=$3
	set -- $(run /tmp/keyhive-evict-bench); kops=$1 kcpu=$2 kev=$3
	ratio=$(echo "$kops $rops" | awk '{printf "%.2f", $1/$2}')
	cpuratio=$(echo "$kcpu $rcpu" | awk '{printf "%.2f", $1/$2}')
	echo "round $r: redis $rops ops/s, $rcpu SET/cpu-s ($rev evicted); keyhive $kops ops/s, $kcpu SET/cpu-s ($kev evicted); ratio $ratio, per cpu-s $cpuratio"
	ratios="$ratios $ratio" cpuratios="$cpuratios $cpuratio"
done
median() { echo "$1" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median keyhive/redis: ops/s $(median "$ratios"), SETs per cpu-second $(median "$cpuratios")"
