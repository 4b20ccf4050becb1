#!/usr/bin/env bash
# RDB snapshot speed: Keyhive vs redis-server on the same data, measured
# alternately in one run.
#
# Usage (from any directory):
#   bench/rdb.sh
#
# Environment knobs (all optional):
#   KEYS=1000000     string keys (DEBUG POPULATE on redis-server, value 16 bytes)
#   ROUNDS=3         rounds; each starts keyhive, redis-server and a second
#                    redis-server (the noise floor) in turn on the same file
#                    and times its load, a SAVE and a BGSAVE
#   KEYHIVE_BIN=path use this binary instead of building ./cmd/keyhive
#
# redis-server fills the data set and saves it; every server of every round
# starts on a copy of that file, so all hold the same keys. Reported: the
# median of the per-round ratios keyhive/redis (> 1: Keyhive takes longer)
# with their range, beside the second redis-server's against the first.
set -euo pipefail

KEYS=${KEYS:-1000000}
ROUNDS=${ROUNDS:-3}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rdb
# shellcheck source=bench/rounds.sh
source "$root/bench/rounds.sh"
# redis-server answers while it loads (LOADING errors): wait for every key.
wait_loaded() { until [ "$(redis-cli -p "$1" DBSIZE 2>/dev/null)" = "$KEYS" ]; do sleep 0.01; done; }

mkdir -p "$tmp/populate"
port=$(free_port)
redis-server --port "$port" --save '' --appendonly no --dir "$tmp/populate" --enable-debug-command yes >"$tmp/populate.log" 2>&1 &
pids+=($!)
wait_up "$port"
redis-cli -p "$port" DEBUG POPULATE "$KEYS" key 16 >/dev/null
redis-cli -p "$port" SAVE >/dev/null
redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "${pids[0]}" 2>/dev/null || true
pids=()
echo "$KEYS keys: $(stat -c %s "$tmp/populate/dump.rdb") bytes" >&2

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
# measure BIN DIR -> "load<TAB>SAVE<TAB>BGSAVE<TAB>file bytes" of a server
# started on DIR's copy of the file.
measure() {
	local t0 load save bgsave pid port
	mkdir -p "$2"
	cp "$tmp/populate/dump.rdb" "$2/dump.rdb"
	port=$(free_port)
	t0=$(now)
	"$1" --port "$port" --save '' --appendonly no --dir "$2" >>"$2.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	wait_loaded "$port"
	load=$(elapsed "$t0" "$(now)")
	save=$(timed_save "$port")
	bgsave=$(timed_bgsave "$port")
	redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
	wait "$pid" 2>/dev/null || true
	printf '%s\t%s\t%s\t%s\n' "$load" "$save" "$bgsave" "$(stat -c %s "$2/dump.rdb")"
	rm -rf "$2"
}
declare -A bin=([redis]=redis-server [keyhive]=$KEYHIVE_BIN [redis2]=redis-server)
raw=$tmp/raw.tsv
printf 'measure\tround\tserver\t\n' >"$raw"
for round in $(seq "$ROUNDS"); do
	for name in $(round_order "$round"); do
		measure "${bin[$name]}" "$tmp/$name" >"$tmp/m" # not in a subshell: cleanup must see its pids
		IFS=$'\t' read -r load save bgsave bytes <"$tmp/m"
		printf 'start-up load s\t%s\t%s\t%s\nSAVE s\t%s\t%s\t%s\nBGSAVE s\t%s\t%s\t%s\nfile bytes\t%s\t%s\t%s\n' \
			"$round" "$name" "$load" "$round" "$name" "$save" "$round" "$name" "$bgsave" "$round" "$name" "$bytes" >>"$raw"
		echo "round $round/$ROUNDS $name: load ${load}s, SAVE ${save}s, BGSAVE ${bgsave}s, $bytes bytes" >&2
	done
done
echo "RDB: $KEYS keys (DEBUG POPULATE, 16-byte values), $ROUNDS rounds; < 1: Keyhive faster (file bytes: smaller)"
echo
ratio_table <"$raw"
