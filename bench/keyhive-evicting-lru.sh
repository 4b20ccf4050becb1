#!/usr/bin/env bash
# bench/keyhive-evicting.sh under allkeys-lru: the baseline column.
EVICT_POLICY=allkeys-lru exec "$(dirname "$0")/keyhive-evicting.sh" "$@"
