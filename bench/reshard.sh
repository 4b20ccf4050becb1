#!/usr/bin/env bash
# Cluster resharding speed: `redis-cli --cluster reshard` between Keyhive
# nodes against the same between redis-server nodes, alternated round by
# round in one run, and the cluster commands it is made of.
#
# Usage (from any directory):
#   bench/reshard.sh
#
# Environment knobs (all optional):
#   ROUNDS=5         alternating rounds (each: one reshard per server)
#   SLOTS=1000       slots each reshard moves
#   KEYS=10000       string keys loaded into each cluster before the rounds
#   MICRO=1          also time single commands (0: skip)
#   MICRO_N=5000     requests per command in the micro measurements
#   KEYHIVE_BIN=path use this binary instead of building ./cmd/keyhive
#
# Each server gets a cluster of 3 masters, no replicas, made by
# `redis-cli --cluster create` (cluster-node-timeout 5000, no RDB or AOF;
# each node keeps its nodes.conf in the temporary directory). Round r
# moves SLOTS slots from the first master to the second (odd r) or back
# (even r), timed from start to end of
#   redis-cli --cluster reshard --cluster-from A --cluster-to B --cluster-slots SLOTS --cluster-yes
# then waits, untimed, until `--cluster check` is clean on both clusters. The
# server that goes first alternates too. Reported: each round's times and
# ratio keyhive/redis (> 1: Keyhive slower), their median with min-max, and
# the noise floor: the ratios of consecutive redis-server rounds (what a
# ratio moves when nothing changes but the machine's load). Also the CPU
# time the three servers of each cluster used during the reshard, which
# the load of other processes moves less than the wall time.
#
# The micro measurements run redis-benchmark with one client (redis-cli's
# reshard sends one command at a time, so latency is what counts) on one
# master of each cluster: CLUSTER SETSLOT (NODE to its owner, and STABLE),
# GETKEYSINSLOT, COUNTKEYSINSLOT, and MIGRATE COPY REPLACE of 10 keys to
# another master importing their slot.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
SLOTS=${SLOTS:-1000}
KEYS=${KEYS:-10000}
MICRO=${MICRO:-1}
MICRO_N=${MICRO_N:-5000}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" reshard

# start_cluster NAME BINARY: three masters in $tmp/NAME, their ports in
# ports_NAME, created and checked.
start_cluster() {
	local name=$1 bin=$2 ports=() i p
	for i in 1 2 3; do
		p=$(free_port)
		# Both servers listen on the bus at port + 10000: the port must be free too.
		while [ $((p + 10000)) -gt 65535 ] || ! python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1',$((p + 10000))))" 2>/dev/null; do p=$(free_port); done
		mkdir -p "$tmp/$name/$p"
		"$bin" --port "$p" --bind 127.0.0.1 --dir "$tmp/$name/$p" --save '' --appendonly no \
			--cluster-enabled yes --cluster-node-timeout 5000 >"$tmp/$name/$p.log" 2>&1 &
		pids+=($!)
		ports+=("$p")
		eval "pids_$name+=($!)"
	done
	for p in "${ports[@]}"; do wait_up "$p"; done
	redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >"$tmp/$name/create.log" 2>&1
	eval "ports_$name=(${ports[*]})"
	wait_clean "${ports[0]}"
}

# wait_clean PORT: until `--cluster check` reports no open slot, no
# disagreement and full coverage.
wait_clean() {
	local out
	for _ in $(seq 600); do
		out=$(redis-cli --cluster check "127.0.0.1:$1" 2>&1 || true)
		if ! grep -q '\[ERR\]\|\[WARNING\]' <<<"$out" && grep -q 'All 16384 slots covered' <<<"$out"; then
			return 0
		fi
		sleep 0.1
	done
	echo "cluster on port $1 never checked clean:" >&2
	echo "$out" >&2
	return 1
}

myid() { redis-cli -p "$1" CLUSTER MYID; }

# cpu_ticks NAME: the CPU time (user + system, clock ticks) the cluster's
# servers used so far.
cpu_ticks() {
	local -n of=pids_$1
	local pid total=0
	for pid in "${of[@]}"; do
		total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
	done
	echo "$total"
}

# load PORT...: KEYS string keys key:0..KEYS-1, each sent to the master that
# serves its slot (read from CLUSTER NODES), through redis-cli --pipe.
load() {
	local p ranges
	for p in "$@"; do
		ranges=$(redis-cli -p "$p" CLUSTER NODES | awk '/myself/ { for (i = 9; i <= NF; i++) printf "%s ", $i }')
		python3 - "$KEYS" "$ranges" <<-'EOF' | redis-cli -p "$p" --pipe >/dev/null
			import sys
			def crc16(data):
			    crc = 0
			    for b in data:
			        crc ^= b << 8
			        for _ in range(8):
			            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
			    return crc
			mine = set()
			for r in sys.argv[2].split():
			    lo, _, hi = r.partition("-")
			    mine.update(range(int(lo), int(hi or lo) + 1))
			out = sys.stdout.buffer
			for i in range(int(sys.argv[1])):
			    key = b"key:%d" % i
			    if crc16(key) % 16384 in mine:
			        value = b"value:%d" % i
			        out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(value), value))
		EOF
	done
	local total=0
	for p in "$@"; do total=$((total + $(redis-cli -p "$p" DBSIZE))); done
	if [ "$total" != "$KEYS" ]; then
		echo "loaded $total keys, want $KEYS" >&2
		return 1
	fi
}

echo "starting the clusters (3 masters each)" >&2
start_cluster redis redis-server
start_cluster keyhive "$KEYHIVE_BIN"
load "${ports_redis[@]}"
load "${ports_keyhive[@]}"
wait_clean "${ports_redis[0]}"
wait_clean "${ports_keyhive[0]}"

# reshard NAME ROUND: seconds of one reshard of SLOTS slots, first master to
# second on odd rounds, back on even ones.
reshard() {
	local -n ports=ports_$1
	local from=${ports[0]} to=${ports[1]} t0 t1 c0
	if [ $(($2 % 2)) = 0 ]; then from=${ports[1]} to=${ports[0]}; fi
	local from_id to_id
	from_id=$(myid "$from") to_id=$(myid "$to")
	c0=$(cpu_ticks "$1")
	t0=$(now)
	redis-cli --cluster reshard "127.0.0.1:$from" --cluster-from "$from_id" --cluster-to "$to_id" \
		--cluster-slots "$SLOTS" --cluster-yes >"$tmp/$1.reshard.$2.log" 2>&1 || {
		echo "$1: reshard failed, see below" >&2
		tail -20 "$tmp/$1.reshard.$2.log" >&2
		return 1
	}
	t1=$(now)
	echo "$(elapsed "$t0" "$t1") $(($(cpu_ticks "$1") - c0))"
}

redis_s=() keyhive_s=() redis_cpu=() keyhive_cpu=()
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		kout=$(reshard keyhive "$r")
		rout=$(reshard redis "$r")
	else
		rout=$(reshard redis "$r")
		kout=$(reshard keyhive "$r")
	fi
	read -r k kc <<<"$kout"
	read -r s sc <<<"$rout"
	redis_s+=("$s") keyhive_s+=("$k") redis_cpu+=("$sc") keyhive_cpu+=("$kc")
	# redis-cli prints a dot per key moved after each "Moving slot ...: ".
	moved=$(awk '/^Moving slot/ { slots++; sub(/.*: /, ""); keys += gsub(/\./, "") } END { print slots + 0 " slots, " keys + 0 " keys" }' "$tmp/keyhive.reshard.$r.log")
	echo "round $r: redis ${s}s keyhive ${k}s, server CPU ticks redis $sc keyhive $kc ($moved moved)" >&2
	wait_clean "${ports_redis[0]}"
	wait_clean "${ports_keyhive[0]}"
done

python3 - "${redis_s[*]}" "${keyhive_s[*]}" "${redis_cpu[*]}" "${keyhive_cpu[*]}" "$SLOTS" "$KEYS" "$(getconf CLK_TCK)" <<-'EOF'
	import statistics, sys
	redis, keyhive, redis_cpu, keyhive_cpu = ([float(v) for v in a.split()] for a in sys.argv[1:5])
	tick = 1 / float(sys.argv[7])
	def summary(name, ratios):
	    return f"{name}: median {statistics.median(ratios):.2f} (per round {min(ratios):.2f}-{max(ratios):.2f})"
	ratios = [k / r for k, r in zip(keyhive, redis)]
	cpu_ratios = [k / r for k, r in zip(keyhive_cpu, redis_cpu) if r > 0]
	floor = [b / a for a, b in zip(redis, redis[1:])]
	print(f"reshard of {sys.argv[5]} slots, {sys.argv[6]} keys in the cluster, 3 masters each")
	print("| round | redis s | keyhive s | ratio (keyhive/redis) | redis servers' CPU s | keyhive servers' CPU s |")
	print("|---:|---:|---:|---:|---:|---:|")
	for i, (r, k, q, rc, kc) in enumerate(zip(redis, keyhive, ratios, redis_cpu, keyhive_cpu), 1):
	    print(f"| {i} | {r:.3f} | {k:.3f} | {q:.2f} | {rc * tick:.2f} | {kc * tick:.2f} |")
	print(summary("time keyhive/redis", ratios))
	if floor:
	    print(summary("noise floor, redis round n+1 / round n", floor))
	if cpu_ratios:
	    print(summary("servers' CPU time keyhive/redis", cpu_ratios))
EOF

[ "$MICRO" = 1 ] || exit 0

# bench_one PORT ARGS...: requests/s of one command, one client, unpipelined.
bench_one() {
	local port=$1
	shift
	redis-benchmark -p "$port" -c 1 -n "$MICRO_N" --csv "$@" 2>/dev/null |
		awk -F'","' 'NR == 2 { print $2 + 0 }'
}

# micro NAME: the command rates on the cluster's first master.
micro() {
	local -n ports=ports_$1
	local a=${ports[0]} b=${ports[1]} a_id slot keyed tag mig_slot keys=() i
	a_id=$(myid "$a")
	# A slot of a's with keys, for GETKEYSINSLOT and COUNTKEYSINSLOT.
	slot=$(redis-cli -p "$a" RANDOMKEY | xargs redis-cli -p "$a" CLUSTER KEYSLOT)
	# 10 keys of one slot of a's, copied to b while b imports that slot.
	for tag in $(seq 1000); do
		mig_slot=$(redis-cli -p "$a" CLUSTER KEYSLOT "{m$tag}")
		keyed=$(redis-cli -p "$a" CLUSTER NODES | awk -v s="$mig_slot" '/myself/ { for (i = 9; i <= NF; i++) { split($i, r, "-"); if (r[2] == "") r[2] = r[1]; if (s >= r[1] && s <= r[2]) print "yes" } }')
		[ "$keyed" = yes ] && break
	done
	for i in $(seq 0 9); do keys+=("{m$tag}:$i"); redis-cli -p "$a" SET "{m$tag}:$i" "value:$i" >/dev/null; done
	redis-cli -p "$b" CLUSTER SETSLOT "$mig_slot" IMPORTING "$a_id" >/dev/null
	redis-cli -p "$a" CLUSTER SETSLOT "$mig_slot" MIGRATING "$(myid "$b")" >/dev/null
	printf '%s\t%s\n' \
		"SETSLOT NODE (owner)" "$(bench_one "$a" CLUSTER SETSLOT "$slot" NODE "$a_id")" \
		"SETSLOT STABLE" "$(bench_one "$a" CLUSTER SETSLOT "$slot" STABLE)" \
		"GETKEYSINSLOT 10" "$(bench_one "$a" CLUSTER GETKEYSINSLOT "$slot" 10)" \
		"COUNTKEYSINSLOT" "$(bench_one "$a" CLUSTER COUNTKEYSINSLOT "$slot")" \
		"MIGRATE COPY REPLACE 10 keys" "$(bench_one "$a" MIGRATE 127.0.0.1 "$b" "" 0 5000 COPY REPLACE KEYS "${keys[@]}")"
	printf 'ASKING\nDEL %s\n' "${keys[*]}" | redis-cli -p "$b" >/dev/null
	redis-cli -p "$a" DEL "${keys[@]}" >/dev/null
	redis-cli -p "$a" CLUSTER SETSLOT "$mig_slot" STABLE >/dev/null
	redis-cli -p "$b" CLUSTER SETSLOT "$mig_slot" STABLE >/dev/null
}

echo "micro measurements ($MICRO_N requests each, one client)" >&2
declare -A rate
for r in 1 2; do
	for name in redis keyhive; do
		while IFS=$'\t' read -r cmd rps; do rate[$name,$cmd]+=" $rps"; done < <(micro "$name")
	done
done
echo "| command (one client) | redis req/s | keyhive req/s | ratio (keyhive/redis rate) |"
echo "|---|---:|---:|---:|"
for cmd in "SETSLOT NODE (owner)" "SETSLOT STABLE" "GETKEYSINSLOT 10" "COUNTKEYSINSLOT" "MIGRATE COPY REPLACE 10 keys"; do
	python3 - "$cmd" "${rate[redis,$cmd]}" "${rate[keyhive,$cmd]}" <<-'EOF'
		import statistics, sys
		r = statistics.median(float(v) for v in sys.argv[2].split())
		k = statistics.median(float(v) for v in sys.argv[3].split())
		print(f"| {sys.argv[1]} | {r:.0f} | {k:.0f} | {k / r:.2f} |")
	EOF
done
