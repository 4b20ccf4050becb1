# The EVALSHA benchmark tests, sourced by throughput.sh and cpu_per_request.sh
# (which set $root to the repository root).
#
# evalsha_script TEST -> the script file of EVALSHA_ENQUEUE (seed 002's enqueue
# script) or EVALSHA_RATELIMIT (a sliding-window rate limiter); nothing for
# other tests. evalsha_args TEST KEYSPACE -> the redis-benchmark arguments that
# run it, one per line.
evalsha_script() {
	case $1 in
	EVALSHA_ENQUEUE) echo "$root/workloads/seed002/enqueue.lua" ;;
	EVALSHA_RATELIMIT) echo "$root/server/testdata/scripts/sliding_window.lua" ;;
	esac
}
evalsha_args() {
	local script sha
	script=$(evalsha_script "$1")
	[ -n "$script" ] || return 0
	sha=$(sha1sum "$script" | cut -d' ' -f1)
	case $1 in
	EVALSHA_ENQUEUE)
		printf '%s\n' -r "$2" evalsha "$sha" 5 'queue:{b}:waiting:0' \
			'queue:{b}:positions' 'position:__rand_int__' 'ipmap:{b}:__rand_int__' heartbeat:active \
			'pos:__rand_int__' 1704067200000000 ip 1800 '{"ua":"bench"}'
		;;
	EVALSHA_RATELIMIT)
		printf '%s\n' -r 10000 evalsha "$sha" 2 'rl:{__rand_int__}:1' 'rl:{__rand_int__}:0' \
			100 1704067230000 60000 1
		;;
	esac
}
