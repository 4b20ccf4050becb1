# shellcheck shell=bash
# The stream benchmark tests, sourced by throughput.sh and cpu_per_request.sh.
#
# stream_args TEST KEYSPACE -> the redis-benchmark arguments of XADD (to one
# stream capped with MAXLEN ~ 100000), XRANGE_10, XREAD_10 or XREAD_100 (10
# or 100 entries of the stream stream_fill_args fills), one per line; nothing
# for other tests. stream_fill_args ENTRIES KEYSPACE -> the arguments that
# fill that stream (run once, pipelined).
stream_args() {
	case $1 in
	XADD) printf '%s\n' -r "$2" xadd kh:bench:xadd MAXLEN '~' 100000 '*' f '__rand_int__' g v ;;
	XRANGE_10) printf '%s\n' xrange kh:bench:xrange - + COUNT 10 ;;
	XREAD_10) printf '%s\n' xread COUNT 10 STREAMS kh:bench:xrange 0 ;;
	XREAD_100) printf '%s\n' xread COUNT 100 STREAMS kh:bench:xrange 0 ;;
	esac
}
stream_fill_args() {
	printf '%s\n' -n "$1" -r "$2" xadd kh:bench:xrange '*' f '__rand_int__' g v
}
