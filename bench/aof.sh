#!/usr/bin/env bash
# Append-only file: Keyhive vs redis-server on the same data, in rounds.
#
# Usage (from any directory):
#   bench/aof.sh
#
# Environment knobs (all optional):
#   KEYS=1000000     string keys written (SET key:<i> with a 16-byte value)
#   FSYNC=everysec   appendfsync
#   ROUNDS=3         rounds; each runs the phases below on keyhive,
#                    redis-server and a second redis-server (the noise
#                    floor) in turn
#   KEYHIVE_BIN=path use this binary instead of building ./cmd/keyhive
#
# Each server starts with appendonly yes in an empty directory of its own and
# gets the same KEYS writes through redis-cli --pipe (timed: write throughput
# with the AOF on), then is restarted on its AOF of incremental commands, then
# rewrites it (BGREWRITEAOF, an RDB-preamble base) and is restarted on that.
# Reported: the median of the per-round ratios keyhive/redis of each phase's
# seconds (> 1: Keyhive takes longer) and of the AOF's bytes, with their
# range, beside the second redis-server's against the first.
set -euo pipefail

KEYS=${KEYS:-1000000}
FSYNC=${FSYNC:-everysec}
ROUNDS=${ROUNDS:-3}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" aof
# shellcheck source=bench/rounds.sh
source "$root/bench/rounds.sh"
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

# measure NAME BIN -> "write<TAB>AOF bytes<TAB>load_incr<TAB>rewrite<TAB>load_base" seconds
measure() {
	local name=$1 bin=$2 port t0 write size load_incr rewrite load_base
	rm -rf "${tmp:?}/$name"
	port=$(free_port)
	start "$name" "$bin" "$port"
	t0=$(now)
	redis-cli -p "$port" --pipe <"$tmp/writes.resp" >/dev/null
	write=$(elapsed "$t0" "$(now)")
	redis-cli -p "$port" SHUTDOWN >/dev/null 2>&1 || true
	wait "${pids[-1]}" 2>/dev/null || true
	size=$(du -sb "$tmp/$name/appendonlydir" | cut -f1)

	t0=$(now)
	start "$name" "$bin" "$port" "$KEYS"
	load_incr=$(elapsed "$t0" "$(now)")

	t0=$(now)
	redis-cli -p "$port" BGREWRITEAOF >/dev/null
	until redis-cli -p "$port" INFO persistence | grep -q '^aof_rewrite_in_progress:0'; do sleep 0.01; done
	rewrite=$(elapsed "$t0" "$(now)")
	redis-cli -p "$port" SHUTDOWN >/dev/null 2>&1 || true
	wait "${pids[-1]}" 2>/dev/null || true

	t0=$(now)
	start "$name" "$bin" "$port" "$KEYS"
	load_base=$(elapsed "$t0" "$(now)")
	redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
	wait "${pids[-1]}" 2>/dev/null || true
	printf '%s\t%s\t%s\t%s\t%s\n' "$write" "$size" "$load_incr" "$rewrite" "$load_base"
}

declare -A bin=([redis]=redis-server [keyhive]=$KEYHIVE_BIN [redis2]=redis-server)
raw=$tmp/raw.tsv
printf 'phase\tround\tserver\t\n' >"$raw"
for round in $(seq "$ROUNDS"); do
	for name in $(round_order "$round"); do
		measure "$name" "${bin[$name]}" >"$tmp/m" # not in a subshell: cleanup must see its pids
		IFS=$'\t' read -r write size load_incr rewrite load_base <"$tmp/m"
		{
			printf 'write %s SETs (--pipe) s\t%s\t%s\t%s\n' "$KEYS" "$round" "$name" "$write"
			printf 'AOF bytes after the writes\t%s\t%s\t%s\n' "$round" "$name" "$size"
			printf 'start-up from the AOF as written s\t%s\t%s\t%s\n' "$round" "$name" "$load_incr"
			printf 'BGREWRITEAOF s\t%s\t%s\t%s\n' "$round" "$name" "$rewrite"
			printf 'start-up from the rewritten AOF s\t%s\t%s\t%s\n' "$round" "$name" "$load_base"
		} >>"$raw"
		echo "round $round/$ROUNDS $name: write ${write}s ($size bytes), load ${load_incr}s, rewrite ${rewrite}s, load ${load_base}s" >&2
	done
done

echo "AOF (appendfsync $FSYNC), $KEYS keys, $ROUNDS rounds; < 1: Keyhive faster (bytes: smaller)"
echo
ratio_table <"$raw"
