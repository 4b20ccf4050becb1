#!/usr/bin/env bash
# RDB snapshot speed: Keyhive vs redis-server on the same data, measured
# alternately in one run.
#
# Usage (from any directory):
#   bench/rdb.sh
#
# Environment knobs (all optional):
#   KEYS=1000000     string keys (DEBUG POPULATE on redis-server, value 16 bytes)
#   ROUNDS=3         alternating rounds of SAVE and BGSAVE on each server
#   KEYHIVE_BIN=path use this binary instead of building ./cmd/keyhive
#
# redis-server fills the data set and saves it; Keyhive starts on that file,
# so both hold the same keys. Reported: start-up load time (one run each),
# SAVE and BGSAVE wall time (median over the rounds), file sizes, and the
# keyhive/redis ratio (> 1: Keyhive takes longer). Read the ratios, not the
# absolute numbers: the machine is shared and noisy.
set -euo pipefail

KEYS=${KEYS:-1000000}
ROUNDS=${ROUNDS:-3}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rdb
# redis-server answers while it loads (LOADING errors): wait for every key.
wait_loaded() { until [ "$(redis-cli -p "$1" DBSIZE 2>/dev/null)" = "$KEYS" ]; do sleep 0.01; done; }

mkdir -p "$tmp/redis" "$tmp/keyhive"
rport=$(free_port)
redis-server --port "$rport" --save '' --appendonly no --dir "$tmp/redis" --enable-debug-command yes >"$tmp/redis.log" 2>&1 &
pids+=($!)
wait_up "$rport"
redis-cli -p "$rport" DEBUG POPULATE "$KEYS" key 16 >/dev/null
redis-cli -p "$rport" SAVE >/dev/null
redis-cli -p "$rport" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "${pids[0]}" 2>/dev/null || true
pids=()
cp "$tmp/redis/dump.rdb" "$tmp/keyhive/dump.rdb"

echo "loading $KEYS keys ($(stat -c %s "$tmp/redis/dump.rdb") bytes)" >&2
t0=$(now)
redis-server --port "$rport" --save '' --appendonly no --dir "$tmp/redis" >>"$tmp/redis.log" 2>&1 &
pids+=($!)
wait_loaded "$rport"
redis_load=$(elapsed "$t0" "$(now)")
kport=$(free_port)
t0=$(now)
"$KEYHIVE_BIN" --port "$kport" --save '' --appendonly no --dir "$tmp/keyhive" >"$tmp/keyhive.log" 2>&1 &
pids+=($!)
wait_loaded "$kport"
keyhive_load=$(elapsed "$t0" "$(now)")

timed_save() { # port -> seconds of a SAVE
	local t0; t0=$(now)
	redis-cli -p "$1" SAVE >/dev/null
	elapsed "$t0" "$(now)"
}
timed_bgsave() { # port -> seconds until the BGSAVE finished
	local t0; t0=$(now)
	redis-cli -p "$1" BGSAVE >/dev/null
	until redis-cli -p "$1" INFO persistence | grep -q 'rdb_bgsave_in_progress:0'; do sleep 0.005; done
	elapsed "$t0" "$(now)"
}
rs=() ks=() rb=() kb=()
for r in $(seq "$ROUNDS"); do
	rs+=("$(timed_save "$rport")"); ks+=("$(timed_save "$kport")")
	rb+=("$(timed_bgsave "$rport")"); kb+=("$(timed_bgsave "$kport")")
	echo "round $r: SAVE redis ${rs[-1]}s keyhive ${ks[-1]}s; BGSAVE redis ${rb[-1]}s keyhive ${kb[-1]}s" >&2
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
row() { python3 -c "print(f'| $1 | $2 | $3 | {$3/$2:.2f} |')"; }
echo "| $KEYS keys | redis s | keyhive s | ratio (keyhive/redis) |"
echo "|---|---|---|---|"
row "start-up load" "$redis_load" "$keyhive_load"
row "SAVE (median of $ROUNDS)" "$(median "${rs[@]}")" "$(median "${ks[@]}")"
row "BGSAVE (median of $ROUNDS)" "$(median "${rb[@]}")" "$(median "${kb[@]}")"
echo "file bytes: redis $(stat -c %s "$tmp/redis/dump.rdb"), keyhive $(stat -c %s "$tmp/keyhive/dump.rdb")"
