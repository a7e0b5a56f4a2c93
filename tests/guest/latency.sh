# SPDX-License-Identifier: GPL-2.0-only
# suite: latency 1:4:2 newest 400
# latency.sh: scx_sis's own wakeup-latency percentiles. A light ping-pong on CPU 1:
# p50 < p99, both non-zero. The same ping-pong sharing CPU 1 with a pinned hog:
# p99 rises.
. /tests/lib.sh
plan 4
pp() { # pp NAME ROUNDS: ping-pong pinned to CPU 1 under a fresh scx_sis, percentiles from its totals
	start_sis /tmp/l-$1.log || { fail "$1-start" "$(tail -3 /tmp/l-$1.log)"; return; }
	taskset -c 1 sis-probe pingpong $2 >/dev/null
	stop_sis
	P50=$(total lat_p50_us /tmp/l-$1.log); P99=$(total lat_p99_us /tmp/l-$1.log)
	echo "# $1: wakeups $(total lat_wakeups /tmp/l-$1.log)" $(for f in p50 p90 p99 p999 max; do
		printf "%s %.1fus " $f "$(total lat_${f}_us /tmp/l-$1.log)"; done)
}
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
pp light 20000
L50=$P50 L99=$P99
check light-p50-nonzero "p50=$L50" gt "$L50" 0
check light-p99-nonzero "p99=$L99" gt "$L99" 0
check light-p50-below-p99 "p50=$L50 p99=$L99" gt "$L99" "$L50"
sis-probe spin 1 & HOG=$!
pp hog 300
kill $HOG
check hog-raises-p99 "p99 light ${L99}us, with hog ${P99}us" gt "$P99" "$L99"
