# shellcheck shell=bash
# Per-round measurement helpers, sourced by the bench scripts after they set
# $root (the repository) and $tmp (their temporary directory). Every script
# measures three servers in each round: redis-server, Keyhive and a second
# redis-server (redis2, the noise floor), in the order round_order gives, and
# hands its measurements to ratio_table (bench/ratio, package
# internal/benchstat), which prints the median of the per-round ratios.
(cd "$root" && go build -o "$tmp/ratio" ./bench/ratio)

# round_order ROUND: the servers in the order they run in round ROUND (from 1).
round_order() { "$tmp/ratio" -order "$1"; }

# ratio_table [-geomean] [-values=false] < TSV: the markdown table.
ratio_table() { "$tmp/ratio" "$@"; }
