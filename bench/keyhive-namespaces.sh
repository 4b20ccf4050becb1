#!/usr/bin/env bash
# Keyhive with 20 namespaces declared, in place of the keyhive binary, to
# measure what the key schema costs. redis-benchmark's keys (key:*,
# counter:*, mylist ...) fall in two of them, so every write and hit is
# attributed; the other 18 (seed prefixes and patterns) make the trie real.
#
#   go build -o /tmp/kh ./cmd/keyhive
#   REDIS_BIN=/tmp/kh KEYHIVE_PLAIN=/tmp/kh KEYHIVE_BIN=bench/keyhive-namespaces.sh \
#     TESTS="SET GET" PIPELINES=16 ROUNDS=5 bench/throughput.sh
#
# The "redis" column (and the second server, the noise floor) is then
# Keyhive without namespaces, so the ratio is the schema's cost, measured in
# the same rounds.
set -euo pipefail
ns=(
	--namespace bench-keys PREFIX key:
	--namespace bench-counter PREFIX counter:
	--namespace dns PREFIX dns: MAX-KEYS 10000 EVICT lowest-hits-then-oldest
	--namespace dnsmeta PREFIX dnsmeta:
	--namespace dnsmeta-cluster PREFIX '{dnsmeta}:'
	--namespace sess PREFIX sess:
	--namespace ql-link PREFIX ql:v1:link:
	--namespace ql-404 PREFIX ql:v1:404:
	--namespace ql-meta PREFIX ql:v1:meta: PROTECTED
	--namespace waiting PATTERN 'queue:*:waiting:*'
	--namespace queue PREFIX queue:
	--namespace cache-project PREFIX cache:project:
	--namespace cache-apikey PREFIX cache:apikey:
	--namespace ratelimit PREFIX ratelimit:ipx: DEFAULT-TTL 86400
	--namespace usage PREFIX usage:
	--namespace ucg-entity PREFIX ucg:entity: PROTECTED
	--namespace search-word PREFIX search:word: PROTECTED
	--namespace cache-page PREFIX cache:page:
	--namespace session PREFIX session:
	--namespace lock PREFIX lock:
)
exec "${KEYHIVE_PLAIN:?KEYHIVE_PLAIN names the keyhive binary}" "$@" "${ns[@]}"
