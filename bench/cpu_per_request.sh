#!/usr/bin/env bash
# Server CPU time per request, Keyhive vs redis-server, measured alternately in
# one run. When redis-benchmark's single client thread is the bottleneck (it is
# unpipelined on small machines), throughput ties and this is what differs.
#
#   bench/cpu_per_request.sh                 # GET and SET, -P 1 and 16, 3 rounds
#   TESTS="get set incr" PIPELINES="1" ROUNDS=5 bench/cpu_per_request.sh
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
tmp=$(mktemp -d)
trap 'kill $rpid $kpid 2>/dev/null || true; rm -rf "$tmp"' EXIT

keyhive=${KEYHIVE_BIN:-}
if [ -z "$keyhive" ]; then
  (cd "$root" && go build -o "$tmp/keyhive" ./cmd/keyhive)
  keyhive=$tmp/keyhive
fi
rport=$((20000 + RANDOM % 5000)); kport=$((rport + 1))
"${REDIS_BIN:-redis-server}" --port "$rport" --save '' --appendonly no >/dev/null & rpid=$!
"$keyhive" --port "$kport" --save '' >/dev/null 2>&1 & kpid=$!
# shellcheck source=bench/evalsha.sh
source "$root/bench/evalsha.sh"
# shellcheck source=bench/streams.sh
source "$root/bench/streams.sh"
for port in $rport $kport; do
  until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
  for t in $TESTS; do
    script=$(evalsha_script "$t")
    [ -z "$script" ] || redis-cli -p "$port" -x SCRIPT LOAD <"$script" >/dev/null
    case $t in XRANGE_* | XREAD_*)
      mapfile -t fill < <(stream_fill_args 10000 1000000)
      [ "$(redis-cli -p "$port" XLEN kh:bench:xrange)" -gt 0 ] ||
        redis-benchmark -p "$port" -c 50 -P 16 -q "${fill[@]}" >/dev/null 2>&1 ;;
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
  awk -v d=$((t1 - t0)) -v n="$5" -v hz="$hz" -v ops="$ops" 'BEGIN {printf "%s %.2f\n", ops, d * 1e6 / hz / n}'
}

echo "| test | pipeline | round | redis ops/s | redis us/req | keyhive ops/s | keyhive us/req | CPU ratio (keyhive/redis) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for round in $(seq "$ROUNDS"); do
  for t in $TESTS; do
    for p in $PIPELINES; do
      n=300000; [ "$p" -gt 1 ] && n=2000000
      n=${N:-$n}
      read -r rops rus <<<"$(measure $rpid $rport "$t" "$p" $n)"
      read -r kops kus <<<"$(measure $kpid $kport "$t" "$p" $n)"
      ratio=$(awk -v a="$kus" -v b="$rus" 'BEGIN {printf "%.2f", a / b}')
      echo "| $t | $p | $round | $rops | $rus | $kops | $kus | $ratio |"
    done
  done
done
