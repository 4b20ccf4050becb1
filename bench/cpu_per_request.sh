#!/usr/bin/env bash
# Server CPU time per request, Keyhive vs redis-server, measured alternately in
# one run. When redis-benchmark's single client thread is the bottleneck (it is
# unpipelined on small machines), throughput ties and this is what differs.
# Each round measures keyhive, redis-server and a second redis-server (the
# noise floor) in turn; the table gives the median of the per-round ratios.
#
#   bench/cpu_per_request.sh                 # GET and SET, -P 1 and 16, 3 rounds
#   TESTS="get set incr" PIPELINES="1" ROUNDS=5 bench/cpu_per_request.sh
#   AGAINST=discovery-off TESTS="set get" PIPELINES=16 ROUNDS=9 bench/cpu_per_request.sh
#   TESTS="EVALSHA_ENQUEUE EVALSHA_RATELIMIT" bench/cpu_per_request.sh  # see throughput.sh
#   TESTS="XADD XRANGE_10 XREAD_10 XREAD_100" bench/cpu_per_request.sh   # see bench/streams.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
TESTS=${TESTS:-"get set"}
PIPELINES=${PIPELINES:-"1 16"}
ROUNDS=${ROUNDS:-3}
# N: requests per run (default 300000 unpipelined, 2000000 pipelined)
# KEYHIVE_BIN: a keyhive binary (or wrapper that execs one) instead of a build
# of ./cmd/keyhive; REDIS_BIN: the server in redis-server's place. Keyhive
# against itself with 20 namespaces (bench/keyhive-namespaces.sh):
#   go build -o /tmp/kh ./cmd/keyhive
#   REDIS_BIN=/tmp/kh KEYHIVE_PLAIN=/tmp/kh KEYHIVE_BIN=bench/keyhive-namespaces.sh \
#     TESTS="set get" PIPELINES=16 ROUNDS=5 bench/cpu_per_request.sh
# AGAINST=discovery-off: the same keyhive with prefix discovery off
# (bench/keyhive-discovery-off.sh) in both redis-server places, so the
# keyhive/redis ratios are discovery's cost and redis2/redis is discovery
# off against itself, the noise floor.
AGAINST=${AGAINST:-}
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp"' EXIT

keyhive=${KEYHIVE_BIN:-}
if [ -z "$keyhive" ]; then
  (cd "$root" && go build -o "$tmp/keyhive" ./cmd/keyhive)
  keyhive=$tmp/keyhive
fi
case $AGAINST in
  '') ;;
  discovery-off) export KEYHIVE_PLAIN=$keyhive REDIS_BIN=$root/bench/keyhive-discovery-off.sh ;;
  *) echo "AGAINST=$AGAINST: only discovery-off is known" >&2; exit 2 ;;
esac
# shellcheck source=bench/rounds.sh
source "$root/bench/rounds.sh"
# shellcheck source=bench/evalsha.sh
source "$root/bench/evalsha.sh"
# shellcheck source=bench/streams.sh
source "$root/bench/streams.sh"
declare -A port pid bin
bin=([redis]=${REDIS_BIN:-redis-server} [keyhive]=$keyhive [redis2]=${REDIS_BIN:-redis-server})
base=$((20000 + RANDOM % 5000))
i=0
for name in redis keyhive redis2; do
  port[$name]=$((base + i)); i=$((i + 1))
  "${bin[$name]}" --port "${port[$name]}" --save '' --appendonly no >/dev/null 2>&1 &
  pid[$name]=$!; pids+=($!)
done
for name in redis keyhive redis2; do
  p=${port[$name]}
  until redis-cli -p "$p" ping >/dev/null 2>&1; do sleep 0.05; done
  for t in $TESTS; do
    script=$(evalsha_script "$t")
    [ -z "$script" ] || redis-cli -p "$p" -x SCRIPT LOAD <"$script" >/dev/null
    case $t in XRANGE_* | XREAD_*)
      mapfile -t fill < <(stream_fill_args 10000 1000000)
      [ "$(redis-cli -p "$p" XLEN kh:bench:xrange)" -gt 0 ] ||
        redis-benchmark -p "$p" -c 50 -P 16 -q "${fill[@]}" >/dev/null 2>&1 ;;
    esac
  done
done

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # utime + stime, clock ticks
hz=$(getconf CLK_TCK)

# measure PID PORT TEST PIPELINE N -> "ops/s us_per_request"
measure() {
  local t0 t1 ops
  local -a targs
  mapfile -t targs < <(evalsha_args "$3" 1000000; stream_args "$3" 1000000)
  [ ${#targs[@]} -gt 0 ] || targs=(-t "$3" -r 1000000)
  t0=$(ticks "$1")
  ops=$(redis-benchmark -p "$2" -d 16 -c 50 -n "$5" -P "$4" -q "${targs[@]}" 2>/dev/null |
    tr '\r' '\n' | awk '/requests per second/ {for (i = 2; i <= NF; i++) if ($i == "requests") print $(i - 1)}' | tail -1)
  t1=$(ticks "$1")
  awk -v d=$((t1 - t0)) -v n="$5" -v hz="$hz" -v ops="${ops:-NA}" 'BEGIN {printf "%s\t%.3f\n", ops, d * 1e6 / hz / n}'
}

raw=$tmp/raw.tsv
printf 'test\tpipeline\tround\tserver\tops/s\tCPU us/request\n' >"$raw"
start=$SECONDS
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(loadavg)
for round in $(seq "$ROUNDS"); do
  order=$(round_order "$round")
  echo "round $round/$ROUNDS: load average $(loadavg)" >&2
  for t in $TESTS; do
    for p in $PIPELINES; do
      n=300000; [ "$p" -gt 1 ] && n=2000000
      n=${N:-$n}
      for name in $order; do
        m=$(measure "${pid[$name]}" "${port[$name]}" "$t" "$p" "$n")
        printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$p" "$round" "$name" "$m" >>"$raw"
        echo "round $round/$ROUNDS $t -P $p $name: ops/s, us/request: $m" | tr '\t' ' ' >&2
      done
    done
  done
done
echo "done in $((SECONDS - start)) s" >&2
echo "Server CPU per request (utime + stime of the server process over the run), redis-benchmark -c 50 -d 16; $ROUNDS alternating rounds"
[ -z "$AGAINST" ] || echo "redis and redis2: keyhive with $AGAINST; keyhive: the same binary as it is by default"
echo "Load average (1, 5, 15 min) at the start: $load_start; at the end: $(loadavg); $(nproc) CPUs"
echo
ratio_table <"$raw"
