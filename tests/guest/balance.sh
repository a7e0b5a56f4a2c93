# SPDX-License-Identifier: GPL-2.0-only
# suite: balance 1:4:2 newest 300
# balance.sh: the periodic balance of busy CPUs. With a hog pinned to every CPU (none
# idles, so no newidle pull or nohz kick can act), three movable hogs started on CPU 0
# leave its queue for the other busy CPUs, as under EEVDF in the same guest.
. /tests/lib.sh
plan 4
N=$(nproc)
# spread: the number of 30 samples (10 reads, 0.5 s apart, of three tasks) that found a
# movable hog on CPU 0, 2 s after the three were let go
spread() {
	pinned="" extra=""
	for c in $(seq 0 $((N - 1))); do sis-probe spin "$c" & pinned="$pinned $!"; done
	for i in 1 2 3; do sis-probe spin 0 & extra="$extra $!"; done
	sleep 1
	for p in $extra; do taskset -pc 0-$((N - 1)) "$p" >/dev/null; done
	sleep 2
	on0=0
	for i in $(seq 10); do
		for p in $extra; do [ "$(cut -d' ' -f39 /proc/"$p"/stat)" = 0 ] && on0=$((on0 + 1)); done
		sleep 0.5
	done
	kill $pinned $extra; wait $pinned $extra 2>/dev/null
	echo $on0
}
k=$(spread)
start_sis /tmp/b1.log || { cat /tmp/b1.log; fail start "scx_sis did not start"; }
s=$(spread)
stop_sis
moved=$(($(total lb_smt /tmp/b1.log) + $(total lb_llc /tmp/b1.log)))
echo "# of 30 samples, a movable hog on CPU 0: EEVDF $k, scx_sis $s ($(totals /tmp/b1.log lb_runs lb_smt lb_llc lb_node lb_sys lb_hot pulls tick_kicks))"
check spread-kernel "EEVDF left a movable hog on CPU 0 in $k of 30 samples (the premise)" [ "$k" -le 15 ]
check spread-sis "scx_sis left a movable hog on CPU 0 in $s of 30 samples" [ "$s" -le 15 ]
check spread-counted "the busy balance moved $moved tasks within the LLC" [ "$moved" -ge 3 ]
check exit-clean "scx_sis exited $SIS_RC" [ "$SIS_RC" = 0 ]
