#!/usr/bin/env bash
# Keyhive with prefix discovery off, in place of redis-server, to measure
# what discovery (on by default) costs. The keyhive column is the same
# binary with discovery on, so the ratio is discovery's cost, measured in
# the same rounds, and the noise floor is Keyhive-off against itself:
#
#   go build -o /tmp/kh ./cmd/keyhive
#   REDIS_BIN=bench/keyhive-discovery-off.sh KEYHIVE_PLAIN=/tmp/kh KEYHIVE_BIN=/tmp/kh \
#     TESTS="SET GET" PIPELINES=16 ROUNDS=5 bench/throughput.sh
#   AGAINST=discovery-off KEYHIVE_BIN=/tmp/kh TESTS="set get" PIPELINES=16 ROUNDS=7 \
#     bench/cpu_per_request.sh    # sets REDIS_BIN and KEYHIVE_PLAIN so
#
# redis-benchmark's keys (key:__rand_int__, -r 1000000) share one prefix;
# one new key in 16 and one write or read in 64 update the sketch.
set -euo pipefail
exec "${KEYHIVE_PLAIN:?KEYHIVE_PLAIN names the keyhive binary}" "$@" --namespace-discovery no
