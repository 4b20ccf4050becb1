#!/usr/bin/env bash
# Append-only file: Keyhive vs redis-server on the same data, one after the
# other in one run.
#
# Usage (from any directory):
#   bench/aof.sh
#
# Environment knobs (all optional):
#   KEYS=1000000     string keys written (SET key:<i> with a 16-byte value)
#   FSYNC=everysec   appendfsync
#   KEYHIVE_BIN=path use this binary instead of building ./cmd/keyhive
#
# Each server starts with appendonly yes in a directory of its own and gets
# the same KEYS writes through redis-cli --pipe (timed: write throughput with
# the AOF on), then is restarted on its AOF of incremental commands, then
# rewrites it (BGREWRITEAOF, an RDB-preamble base) and is restarted on that.
# Reported: each phase's seconds and the keyhive/redis ratio (> 1: Keyhive
# takes longer). Read the ratios: the machine is shared and noisy.
set -euo pipefail

KEYS=${KEYS:-1000000}
FSYNC=${FSYNC:-everysec}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" aof

# The writes, once, as the RESP redis-cli --pipe sends.
awk -v n="$KEYS" 'BEGIN { for (i = 0; i < n; i++) printf "*3\r\n$3\r\nSET\r\n$%d\r\nkey:%d\r\n$16\r\nvalue-0123456789\r\n", length("key:" i), i }' >"$tmp/writes.resp"

# start NAME BIN PORT: a server on its AOF directory; returns once every key
# is loaded (redis-server answers LOADING meanwhile).
start() {
	local name=$1 bin=$2 port=$3 want=${4:-0}
	mkdir -p "$tmp/$name"
	"$bin" --port "$port" --dir "$tmp/$name" --save '' --appendonly yes --appendfsync "$FSYNC" >>"$tmp/$name.log" 2>&1 &
	pids+=($!)
	until [ "$(redis-cli -p "$port" DBSIZE 2>/dev/null)" = "$want" ]; do sleep 0.01; done
}

declare -A result
for name in redis keyhive; do
	bin=redis-server
	[ "$name" = keyhive ] && bin=$KEYHIVE_BIN
	port=$(free_port)
	start "$name" "$bin" "$port"
	t0=$(now)
	redis-cli -p "$port" --pipe <"$tmp/writes.resp" >/dev/null
	result[$name,write]=$(elapsed "$t0" "$(now)")
	redis-cli -p "$port" SHUTDOWN >/dev/null 2>&1 || true
	wait "${pids[-1]}" 2>/dev/null || true
	result[$name,aofsize]=$(du -sb "$tmp/$name/appendonlydir" | cut -f1)

	t0=$(now)
	start "$name" "$bin" "$port" "$KEYS"
	result[$name,load_incr]=$(elapsed "$t0" "$(now)")

	t0=$(now)
	redis-cli -p "$port" BGREWRITEAOF >/dev/null
	until redis-cli -p "$port" INFO persistence | grep -q '^aof_rewrite_in_progress:0'; do sleep 0.01; done
	result[$name,rewrite]=$(elapsed "$t0" "$(now)")
	redis-cli -p "$port" SHUTDOWN >/dev/null 2>&1 || true
	wait "${pids[-1]}" 2>/dev/null || true

	t0=$(now)
	start "$name" "$bin" "$port" "$KEYS"
	result[$name,load_base]=$(elapsed "$t0" "$(now)")
	redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
	wait "${pids[-1]}" 2>/dev/null || true
done

echo "AOF (appendfsync $FSYNC), $KEYS keys, Keyhive vs redis-server"
echo
echo "| phase | redis-server s | keyhive s | ratio (keyhive/redis) |"
echo "|---|---:|---:|---:|"
for phase in write load_incr rewrite load_base; do
	r=${result[redis,$phase]} k=${result[keyhive,$phase]}
	printf '| %s | %s | %s | %s |\n' "$phase" "$r" "$k" "$(awk -v a="$r" -v b="$k" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "n/a" }')"
done
echo
echo "AOF bytes after the writes: redis-server ${result[redis,aofsize]}, keyhive ${result[keyhive,aofsize]}"
