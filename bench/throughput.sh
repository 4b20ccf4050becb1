#!/usr/bin/env bash
# Throughput comparison: Keyhive vs redis-server, measured ALTERNATELY in one run.
#
# Usage (from any directory):
#   bench/throughput.sh
#
# Environment knobs (all optional):
#   ROUNDS=3              rounds; each round runs every (pipeline, test) on
#                         keyhive, redis-server and a second redis-server
#                         (the noise floor), back to back, in the order
#                         bench/rounds.sh gives (it alternates)
#   N=200000              requests per redis-benchmark run (-n)
#   CLIENTS=50            parallel connections (-c)
#   KEYSPACE=1000000      random keyspace (-r)
#   DATASIZE=16           value size in bytes (-d)
#   PIPELINES="1 16"      pipeline depths (-P) to measure
#   TESTS="PING_MBULK SET GET INCR MSET"
#                         tests to run, in order. Known names: PING_INLINE
#                         PING_MBULK SET GET INCR MSET LPUSH RPUSH LPOP RPOP
#                         SADD SPOP HSET ZADD ZPOPMIN LRANGE_100 LRANGE_300
#                         LRANGE_500 LRANGE_600 (redis-benchmark -t names) and
#                         ZRANK (custom command on a pre-filled sorted set),
#                         EVALSHA_ENQUEUE (seed 002's enqueue script) and
#                         EVALSHA_RATELIMIT (a sliding-window rate limiter),
#                         both from server/testdata. XADD (to one stream
#                         capped with MAXLEN ~ 100000), XRANGE_10 and
#                         XREAD_10 (10 entries from a stream of
#                         STREAM_ENTRIES, filled once).
#                         XREAD_100: 100 entries from that stream.
#                         PFADD (random elements into one HLL), PFCOUNT (the
#                         union of two dense HLLs: the full estimate every
#                         time) and GEOSEARCH (1 km around a random member of
#                         a set of GEO_MEMBERS points) are custom commands too.
#                         GEOADD adds random members at random points
#                         (longitude and latitude 0-85 degrees) to one set.
#                         Put LPUSH before LPOP so there is something to pop.
#   ZRANK_MEMBERS=100000  members in the ZRANK sorted set
#   STREAM_ENTRIES=10000  entries in the XRANGE_10/XREAD_10 stream
#   GEO_MEMBERS=100000    points in the GEOSEARCH set (1 x 1 degree)
#   ACL_RULES="rules"     run the benchmark as user "bench" (password "bench")
#                         with these ACL rules instead of the default user,
#                         e.g. ACL_RULES='~key:* ~counter:* +@all -@dangerous'
#                         (the cost of key and command checks)
#   KEYHIVE_BIN=path      use this binary instead of building ./cmd/keyhive
#                         (e.g. a wrapper that execs redis-server, for testing)
#   REDIS_BIN=redis-server
#   BENCH_BIN=redis-benchmark
#   CLI_BIN=redis-cli
#   PIN=0                 PIN=1: servers on CPU 1, redis-benchmark on CPU 0
#   RUN_TIMEOUT=180       seconds before one redis-benchmark run is abandoned
#   RAW_OUT=path          also write every raw sample (TSV, bench/ratio's input) to this file
#   TLS=0                 TLS=1: both servers listen with TLS only (a throwaway
#                         CA and certificate made with openssl), and
#                         redis-benchmark/redis-cli connect with --tls
#
# Output: a markdown table on stdout (progress goes to stderr): per row the
# median of the per-round ratios keyhive/redis with their range, and the
# same for the second redis-server against the first (the noise floor); a
# last row with the geometric mean, taken per round. Read the ratios, never
# the absolute numbers: the machine is shared and noisy.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
N=${N:-200000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-1000000}
DATASIZE=${DATASIZE:-16}
PIPELINES=${PIPELINES:-"1 16"}
TESTS=${TESTS:-"PING_MBULK SET GET INCR MSET"}
ZRANK_MEMBERS=${ZRANK_MEMBERS:-100000}
STREAM_ENTRIES=${STREAM_ENTRIES:-10000}
GEO_MEMBERS=${GEO_MEMBERS:-100000}
REDIS_BIN=${REDIS_BIN:-redis-server}
BENCH_BIN=${BENCH_BIN:-redis-benchmark}
CLI_BIN=${CLI_BIN:-redis-cli}
PIN=${PIN:-0}
RUN_TIMEOUT=${RUN_TIMEOUT:-180}
RAW_OUT=${RAW_OUT:-}
TLS=${TLS:-0}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keyhive-bench.XXXXXX")
pids=()

cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log() { printf '%s\n' "$*" >&2; }
die() {
	log "throughput.sh: $*"
	exit 1
}

for b in "$REDIS_BIN" "$BENCH_BIN" "$CLI_BIN"; do
	command -v "$b" >/dev/null || die "$b not found"
done

server_pin=()
bench_pin=()
if [[ $PIN == 1 ]]; then
	server_pin=(taskset -c 1)
	bench_pin=(taskset -c 0)
fi

# --- TLS ---------------------------------------------------------------------
tls_server=()
tls_client=()
if [[ $TLS == 1 ]]; then
	command -v openssl >/dev/null || die "TLS=1 needs openssl"
	d=$tmp/tls
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench-ca \
		-keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null || die "openssl: CA"
	openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null || die "openssl: key"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 1 -copy_extensions copy -out "$d/server.crt" 2>/dev/null || die "openssl: certificate"
	tls_server=(--tls-cert-file "$d/server.crt" --tls-key-file "$d/server.key" --tls-auth-clients no)
	tls_client=(--tls --cacert "$d/ca.crt")
fi

# --- keyhive binary ---------------------------------------------------------
if [[ -n ${KEYHIVE_BIN:-} ]]; then
	keyhive_bin=$KEYHIVE_BIN
	[[ -x $keyhive_bin ]] || keyhive_bin=$(command -v "$keyhive_bin") || die "KEYHIVE_BIN=$KEYHIVE_BIN not executable"
else
	log "building keyhive..."
	(cd "$root" && go build -o "$tmp/keyhive" ./cmd/keyhive) || die "go build ./cmd/keyhive failed"
	keyhive_bin=$tmp/keyhive
fi

# --- servers ----------------------------------------------------------------
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Ports below the ephemeral range (see /proc/sys/net/ipv4/ip_local_port_range)
# so that client connections cannot hold them.
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((10000 + RANDOM % 22000))
		if ! port_in_use "$p"; then
			echo "$p"
			return 0
		fi
	done
	die "no free port found"
}

# start_server NAME BINARY -> sets global started_port; retries on another port
# if the server exits during start-up (e.g. the port was taken meanwhile).
start_server() {
	local name=$1 bin=$2 port pid attempt
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		if [[ $TLS == 1 ]]; then
			"${server_pin[@]}" "$bin" --port 0 --tls-port "$port" "${tls_server[@]}" --save '' --appendonly no >"$tmp/$name.log" 2>&1 &
		else
			"${server_pin[@]}" "$bin" --port "$port" --save '' --appendonly no >"$tmp/$name.log" 2>&1 &
		fi
		pid=$!
		pids+=("$pid")
		for _ in $(seq 100); do
			if [[ $("$CLI_BIN" "${tls_client[@]}" -p "$port" PING 2>/dev/null || true) == PONG ]]; then
				started_port=$port
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		log "$name did not start on port $port (attempt $attempt); log:"
		tail -n 5 "$tmp/$name.log" >&2 || true
	done
	die "$name ($bin) did not answer PING"
}

# shellcheck source=bench/rounds.sh
source "$root/bench/rounds.sh"
declare -A port
start_server redis "$REDIS_BIN"
port[redis]=$started_port
start_server keyhive "$keyhive_bin"
port[keyhive]=$started_port
start_server redis2 "$REDIS_BIN"
port[redis2]=$started_port
log "redis-server on :${port[redis]} and :${port[redis2]}, keyhive ($keyhive_bin) on :${port[keyhive]}"
log "version strings: redis: $("$CLI_BIN" "${tls_client[@]}" -p "${port[redis]}" INFO server 2>/dev/null | tr -d '\r' | grep -E '^(redis|keyhive)_version' | tr '\n' ' ')" \
	"| keyhive: $("$CLI_BIN" "${tls_client[@]}" -p "${port[keyhive]}" INFO server 2>/dev/null | tr -d '\r' | grep -E '^(redis|keyhive)_version' | tr '\n' ' ' || true)"

# --- tests ------------------------------------------------------------------
# test_args TEST -> prints the redis-benchmark arguments selecting TEST, one per
# line; test_row TEST -> the CSV "test" field prefix identifying its result row.
# shellcheck source=bench/evalsha.sh
source "$root/bench/evalsha.sh"
# shellcheck source=bench/streams.sh
source "$root/bench/streams.sh"
test_args() {
	case $1 in
	ZRANK) printf '%s\n' -r "$ZRANK_MEMBERS" zrank kh:bench:zrank 'm:__rand_int__' ;;
	XADD | XRANGE_10 | XREAD_10 | XREAD_100) stream_args "$1" "$KEYSPACE" ;;
	PFADD) printf '%s\n' -r "$KEYSPACE" pfadd kh:bench:hll 'e:__rand_int__' ;;
	PFCOUNT) printf '%s\n' pfcount kh:bench:hll1 kh:bench:hll2 ;;
	GEOADD) printf '%s\n' -r 850000 geoadd kh:bench:geoadd '__rand_int__e-4' '__rand_int__e-4' 'm:__rand_int__' ;;
	GEOSEARCH) printf '%s\n' -r "$GEO_MEMBERS" geosearch kh:bench:geo FROMMEMBER 'm:__rand_int__' BYRADIUS 1 km ;;
	EVALSHA_*) evalsha_args "$1" "$KEYSPACE" ;;
	*) printf '%s\n' -r "$KEYSPACE" -t "${1,,}" ;;
	esac
}
test_row() {
	case $1 in
	ZRANK) echo "zrank " ;;
	XADD) echo "xadd " ;;
	XRANGE_10) echo "xrange " ;;
	XREAD_10) echo "xread " ;;
	XREAD_100) echo "xread " ;;
	PFADD | PFCOUNT | GEOADD | GEOSEARCH) echo "${1,,} " ;;
	EVALSHA_*) echo "evalsha " ;;
	*) echo "$1" ;;
	esac
}

# prepare PORT: one-time data set-up needed by custom tests.
prepare() {
	local port=$1 t fill
	for t in $TESTS; do
		case $t in
		ZRANK)
			"${bench_pin[@]}" "$BENCH_BIN" "${tls_client[@]}" -p "$port" -c "$CLIENTS" -P 16 -q \
				-n $((ZRANK_MEMBERS * 4)) -r "$ZRANK_MEMBERS" \
				zadd kh:bench:zrank __rand_int__ 'm:__rand_int__' >/dev/null 2>&1 ||
				log "warning: ZRANK set-up failed on :$port"
			;;
		XRANGE_10 | XREAD_10 | XREAD_100)
			mapfile -t fill < <(stream_fill_args "$STREAM_ENTRIES" "$KEYSPACE")
			[[ $("$CLI_BIN" "${tls_client[@]}" -p "$port" XLEN kh:bench:xrange) -gt 0 ]] ||
				"${bench_pin[@]}" "$BENCH_BIN" "${tls_client[@]}" -p "$port" -c "$CLIENTS" -P 16 -q \
					"${fill[@]}" >/dev/null 2>&1 ||
				log "warning: stream set-up failed on :$port"
			;;
		PFCOUNT)
			for k in kh:bench:hll1 kh:bench:hll2; do
				"${bench_pin[@]}" "$BENCH_BIN" "${tls_client[@]}" -p "$port" -c "$CLIENTS" -P 16 -q -n 100000 -r 1000000 \
					pfadd "$k" 'e:__rand_int__' >/dev/null 2>&1 || log "warning: PFCOUNT set-up failed on :$port"
			done
			;;
		GEOSEARCH)
			awk -v n="$GEO_MEMBERS" 'BEGIN { srand(1); for (i = 0; i < n; i++) printf "GEOADD kh:bench:geo %.6f %.6f m:%012d\r\n", 13 + rand(), 38 + rand(), i }' |
				"$CLI_BIN" "${tls_client[@]}" -p "$port" --pipe >/dev/null 2>&1 || log "warning: GEOSEARCH set-up failed on :$port"
			;;
			EVALSHA_*) "$CLI_BIN" "${tls_client[@]}" -p "$port" -x SCRIPT LOAD <"$(evalsha_script "$t")" >/dev/null ;;
		esac
	done
}
for name in redis keyhive redis2; do prepare "${port[$name]}"; done

auth_args=()
if [[ -n ${ACL_RULES:-} ]]; then
	for name in redis keyhive redis2; do
		# shellcheck disable=SC2086 # the rules are separate words
		"$CLI_BIN" -p "${port[$name]}" ACL SETUSER bench reset on '>bench' $ACL_RULES >/dev/null
	done
	auth_args=(--user bench -a bench)
fi

raw=$tmp/raw.tsv
printf 'test\tpipeline\tround\tserver\tops/s\n' >"$raw"

# run_one SERVER PORT TEST PIPE ROUND -> appends "test pipe round server rps" to $raw
run_one() {
	local server=$1 port=$2 t=$3 pipe=$4 round=$5 out rps prefix
	local -a targs
	mapfile -t targs < <(test_args "$t")
	prefix=$(test_row "$t")
	if out=$(timeout "$RUN_TIMEOUT" "${bench_pin[@]}" "$BENCH_BIN" "${tls_client[@]}" -p "$port" "${auth_args[@]}" \
		-c "$CLIENTS" -n "$N" -d "$DATASIZE" -P "$pipe" --csv "${targs[@]}" 2>"$tmp/bench.err"); then
		# Rows look like "NAME","rps",...; pick the one for this test
		# (LRANGE_* also emits an "LPUSH (needed ...)" row).
		rps=$(awk -F'","' -v p="$prefix" '
			{ name = substr($1, 2) }
			name != "test" && index(name, p) == 1 { r = $2 }
			END { if (r != "") print r }' <<<"$out")
	else
		rps=""
	fi
	if [[ -z $rps ]]; then
		log "  $server $t -P $pipe round $round: FAILED: $(head -c 300 "$tmp/bench.err" | tr '\n' ' ')"
		rps=NA
	fi
	printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$pipe" "$round" "$server" "$rps" >>"$raw"
	printf '%s' "$rps"
}

start=$SECONDS
for ((round = 1; round <= ROUNDS; round++)); do
	order=$(round_order "$round")
	for pipe in $PIPELINES; do
		for t in $TESTS; do
			line=""
			for name in $order; do
				line+=" $name $(run_one "$name" "${port[$name]}" "$t" "$pipe" "$round")"
			done
			log "round $round/$ROUNDS  $t -P $pipe:$line"
		done
	done
done
log "done in $((SECONDS - start)) s"

[[ -z $RAW_OUT ]] || cp "$raw" "$RAW_OUT"

printf 'Keyhive vs redis-server, redis-benchmark -c %d -n %d -r %d -d %d; %d alternating rounds, ops/s\n\n' \
	"$CLIENTS" "$N" "$KEYSPACE" "$DATASIZE" "$ROUNDS"
ratio_table -geomean <"$raw"

