#!/usr/bin/env bash
# Latency and memory cost of BGSAVE under load: Keyhive vs redis-server (which
# forks), measured in rounds with a second redis-server as the noise floor.
#
# Usage (from any directory):
#   bench/bgsave_latency.sh
#
# Environment knobs (all optional):
#   KEYS=5000000     string keys filled on each server (SET key:%012d, 16-byte value),
#                    also the -r of redis-benchmark, so its GETs hit
#   N=500000         requests per redis-benchmark test (-n)
#   CLIENTS=50       redis-benchmark -c
#   REPEAT=0         0: one BGSAVE at the start of the run; 1: BGSAVE again whenever
#                    one finishes, so the whole run is measured during a snapshot
#   ROUNDS=1         measurement rounds on the same filled servers (each: the
#                    three servers without, then the three with BGSAVE, in
#                    bench/rounds.sh's order); ratios per round and their
#                    median, since one round on a shared machine is noise
#   KEYHIVE_BIN=path use this binary instead of building ./cmd/keyhive
#
# Each round, each server runs `redis-benchmark -t set,get -c CLIENTS -r KEYS -d 16 -n N
# --precision 3 --csv` twice: once idle, once with BGSAVE started at the
# beginning of the run (REPEAT=1: and again whenever one finishes, looked for
# every 0.5 s). The servers: keyhive, redis-server and a second redis-server
# (redis2, the noise floor), each filled with the same keys.
# Memory: "before" is the server's RSS just before the BGSAVE run, "peak"
# its peak RSS during it (VmHWM, reset through /proc/PID/clear_refs) plus,
# for redis-server, the largest copy-on-write of its forked child
# (rdb_last_cow_size: the child's pages that are not shared with the server).
# Reported: per server the medians over the rounds of each p99 and of its
# with/without ratio (the acceptance bounds: p99 with/without <= 2x, peak
# memory/before <= 1.3x), and the median of the per-round ratios
# keyhive/redis beside redis2/redis. Read the ratios: the machine is shared
# and noisy.
set -euo pipefail

KEYS=${KEYS:-5000000}
N=${N:-500000}
CLIENTS=${CLIENTS:-50}
REPEAT=${REPEAT:-0}
ROUNDS=${ROUNDS:-1}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" bgsave
# shellcheck source=bench/rounds.sh
source "$root/bench/rounds.sh"

# Memory is read without sampling: a reader of /proc/PID/smaps_rollup walks
# the page tables under the process's mmap lock, and sampling it every 20 ms
# alone tripled redis-benchmark's p99 (as did spawning redis-cli every 50 ms
# to poll INFO). kb FIELD PID: a field of /proc/PID/status in kB.
kb() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$2/status"; }

awk -v n="$KEYS" 'BEGIN { for (i = 0; i < n; i++) { k = sprintf("key:%012d", i); printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$16\r\nvalue-0123456789\r\n", length(k), k } }' >"$tmp/fill.resp"

declare -A port pid result
for name in redis keyhive redis2; do
	bin=redis-server
	[ "$name" = keyhive ] && bin=$KEYHIVE_BIN
	port[$name]=$(free_port)
	mkdir -p "$tmp/$name"
	"$bin" --port "${port[$name]}" --save '' --appendonly no --dir "$tmp/$name" >"$tmp/$name.log" 2>&1 &
	pids+=($!)
	pid[$name]=$!
	wait_up "${port[$name]}"
	redis-cli -p "${port[$name]}" --pipe <"$tmp/fill.resp" >/dev/null
	got=$(redis-cli -p "${port[$name]}" DBSIZE)
	[ "$got" = "$KEYS" ] || { echo "$name: DBSIZE $got, want $KEYS" >&2; exit 1; }
	echo "$name filled with $KEYS keys" >&2
done
rm -f "$tmp/fill.resp"

bench() { # NAME PHASE ROUND: runs redis-benchmark, stores the p99 of SET and GET
	redis-benchmark -p "${port[$1]}" -t set,get -c "$CLIENTS" -r "$KEYS" -d 16 -n "$N" --precision 3 --csv >"$tmp/$1.$2.csv"
	result[$1,$2,set,$3]=$(awk -F'"' '$2 == "SET" { print $14 }' "$tmp/$1.$2.csv")
	result[$1,$2,get,$3]=$(awk -F'"' '$2 == "GET" { print $14 }' "$tmp/$1.$2.csv")
	echo "round $3: $1 $2: p99 SET ${result[$1,$2,set,$3]} ms, GET ${result[$1,$2,get,$3]} ms" >&2
}
bgsave_loop() { # NAME: BGSAVE (REPEAT=1: again whenever one finishes, until $tmp/stop exists);
	# prints the count and the largest rdb_last_cow_size in kB
	local n=0 cow=0 p=${port[$1]} info
	redis-cli -p "$p" BGSAVE >/dev/null && n=1
	while sleep 0.5; do
		# one save: look for its end only once the benchmark has ended
		[ "$REPEAT" = 1 ] || [ -e "$tmp/stop" ] || continue
		info=$(redis-cli -p "$p" INFO persistence)
		grep -q '^rdb_bgsave_in_progress:0' <<<"$info" || continue
		cow=$(awk -F: -v c="$cow" '$1 == "rdb_last_cow_size" { v = int($2 / 1024); print (v > c ? v : c) }' <<<"$info")
		[ "$REPEAT" = 1 ] && [ ! -e "$tmp/stop" ] || break
		redis-cli -p "$p" BGSAVE >/dev/null && n=$((n + 1))
	done
	echo "$n $cow"
}

for round in $(seq "$ROUNDS"); do
	order=$(round_order "$round")
	for name in $order; do bench "$name" without "$round"; done
	for name in $order; do
		rm -f "$tmp/stop"
		result[$name,before,$round]=$(kb VmRSS "${pid[$name]}")
		echo 5 >"/proc/${pid[$name]}/clear_refs"
		bgsave_loop "$name" >"$tmp/$name.bgsaves" &
		loop=$!
		bench "$name" with "$round"
		touch "$tmp/stop"
		wait "$loop"
		read -r result[$name,bgsaves,$round] cow <"$tmp/$name.bgsaves"
		result[$name,peak,$round]=$(kb VmHWM "${pid[$name]}")
		# redis-server's child is a process of its own; keyhive's copies are in its RSS
		[ "$name" = keyhive ] || result[$name,peak,$round]=$((result[$name,peak,$round] + cow))
		echo "round $round: $name: ${result[$name,bgsaves,$round]} BGSAVEs during the run; RSS before ${result[$name,before,$round]} kB, peak ${result[$name,peak,$round]} kB (rdb_last_cow_size $cow kB)" >&2
	done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.4f", b / a; else print "NA" }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
raw=$tmp/raw.tsv
printf 'measure\tround\tserver\t\n' >"$raw"
for round in $(seq "$ROUNDS"); do
	for name in redis keyhive redis2; do
		row() { printf '%s\t%s\t%s\t%s\n' "$1" "$round" "$name" "$2" >>"$raw"; }
		for t in set get; do
			T=${t^^}
			row "$T p99 ms without BGSAVE" "${result[$name,without,$t,$round]}"
			row "$T p99 ms with BGSAVE" "${result[$name,with,$t,$round]}"
			row "$T p99 with/without" "$(ratio "${result[$name,without,$t,$round]}" "${result[$name,with,$t,$round]}")"
		done
		row "memory MiB before" "$(mib "${result[$name,before,$round]}")"
		row "memory MiB peak" "$(mib "${result[$name,peak,$round]}")"
		row "memory peak/before" "$(ratio "${result[$name,before,$round]}" "${result[$name,peak,$round]}")"
		row "BGSAVEs during the run" "${result[$name,bgsaves,$round]}"
	done
done
echo "BGSAVE (REPEAT=$REPEAT) of $KEYS keys during redis-benchmark -t set,get -c $CLIENTS -r $KEYS -d 16 -n $N, $ROUNDS round(s) (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
ratio_table <"$raw"
echo
echo "memory: RSS before the run, peak RSS during it (VmHWM) plus redis-server's largest rdb_last_cow_size"
