# Set-up shared by the bench scripts that start their own servers (sourced,
# with the bench's name): a temporary directory removed on exit together with
# the servers listed in pids, the keyhive binary (KEYHIVE_BIN or a fresh
# build), free ports and timing helpers.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rdb

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keyhive-$1-bench.XXXXXX")
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

KEYHIVE_BIN=${KEYHIVE_BIN:-}
if [ -z "$KEYHIVE_BIN" ]; then
	(cd "$root" && go build -o "$tmp/keyhive-server" ./cmd/keyhive)
	KEYHIVE_BIN=$tmp/keyhive-server
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
# elapsed T0 T1: seconds from T0 to T1 (both from now).
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
wait_up() { until redis-cli -p "$1" PING >/dev/null 2>&1; do sleep 0.01; done; }
