#!/usr/bin/env bash
# Keyhive under maxmemory ($EVICT_MAXMEM, default 32mb) with maxmemory-policy
# $EVICT_POLICY (default allkeys-lrfu), in place of a server binary, to
# measure what an eviction policy costs per request against allkeys-lru
# (bench/keyhive-evicting-lru.sh) in the same rounds:
#
#   go build -o /tmp/kh ./cmd/keyhive
#   KEYHIVE_PLAIN=/tmp/kh KEYHIVE_BIN=bench/keyhive-evicting.sh REDIS_BIN=bench/keyhive-evicting-lru.sh \
#     TESTS="set get" PIPELINES="1 16" ROUNDS=5 bench/cpu_per_request.sh
#
# redis-benchmark's -r 1000000 keys do not fit in 32mb, so every SET of a
# new key evicts one.
set -euo pipefail
exec "${KEYHIVE_PLAIN:?the keyhive binary}" "$@" --maxmemory "${EVICT_MAXMEM:-32mb}" --maxmemory-policy "${EVICT_POLICY:-allkeys-lrfu}"
