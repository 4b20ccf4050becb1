#!/usr/bin/env bash
# Stand-in for the keyhive binary when testing the benchmark tooling itself:
# KEYHIVE_BIN=bench/redis-as-keyhive.sh bench/throughput.sh
# go run ./bench/memory -keyhive bench/redis-as-keyhive.sh
# exec keeps the PID, so RSS measurements read the real redis-server process.
set -euo pipefail
exec "${REDIS_BIN:-redis-server}" "$@"
