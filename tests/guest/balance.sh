# SPDX-License-Identifier: GPL-2.0-only
# suite: balance 1:4:2 every 300
# suite: balance-2:2:2:2-numa 2:2:2:2 newest 300 numa
# balance.sh: work moves between busy CPUs. With a hog pinned to every CPU (none idles,
# so no newidle pull or nohz kick can act), three movable hogs started on CPU 0 leave
# its queue for the other busy CPUs (the periodic balance), and a burst of forks from
# CPU 0 lands on the least loaded CPUs rather than the parent's, as under EEVDF in the
# same guest.
. /tests/lib.sh
plan 7
N=$(nproc)
hogs() { pinned=""; for c in $(seq 0 $((N - 1))); do sis-probe spin "$c" & pinned="$pinned $!"; done; }
# spread: the number of 30 samples (10 reads, 0.5 s apart, of three tasks) that found a
# movable hog on CPU 0, 2 s after the three were let go
spread() {
	hogs
	extra=""
	for i in 1 2 3; do sis-probe spin 0 & extra="$extra $!"; done
	sleep 1
	for p in $extra; do taskset -pc 0-$((N - 1)) "$p" >/dev/null; done
	sleep 2
	echo "# spread: sampling" >&2
	on0=0
	for i in $(seq 10); do
		for p in $extra; do [ "$(cut -d' ' -f39 /proc/"$p"/stat)" = 0 ] && on0=$((on0 + 1)); done
		# a line now and then: with every vCPU busy a slow guest is not a hung one
		[ $((i % 5)) = 0 ] && echo "# spread: $i of 10 reads" >&2
		sleep 0.5
	done
	kill $pinned $extra; wait $pinned $extra 2>/dev/null
	echo $on0
}
# burst TAG: the CPUs the N threads of a fork burst from CPU 0 first ran on (cpu C count)
burst() {
	hogs
	sleep 1
	sis-probe forkburst "$N" 0 >/tmp/burst-$1.txt
	kill $pinned; wait $pinned 2>/dev/null
	echo "# burst under $1 done"
}
ncpus() { grep -c '^cpu ' "$1"; }
k=$(spread)
echo "# spread under EEVDF done"
burst eevdf
start_sis /tmp/b1.log || { cat /tmp/b1.log; fail start "scx_sis did not start"; }
s=$(spread)
stop_sis
rc1=$SIS_RC
echo "# spread under scx_sis done"
# a log of its own, so that fork_loaded counts the burst (and the few forks around it)
start_sis /tmp/b2.log || { cat /tmp/b2.log; fail start "scx_sis did not start"; }
burst sis
stop_sis
moved=$(($(total lb_smt /tmp/b1.log) + $(total lb_llc /tmp/b1.log)))
echo "# of 30 samples, a movable hog on CPU 0: EEVDF $k, scx_sis $s ($(totals /tmp/b1.log lb_runs lb_smt lb_llc lb_node lb_sys lb_hot pulls tick_kicks))"
echo "# $N forks from CPU 0, CPUs first run on: EEVDF $(tr '\n' ' ' </tmp/burst-eevdf.txt); scx_sis $(tr '\n' ' ' </tmp/burst-sis.txt)"
check spread-kernel "EEVDF left a movable hog on CPU 0 in $k of 30 samples (the premise)" [ "$k" -le 15 ]
check spread-sis "scx_sis left a movable hog on CPU 0 in $s of 30 samples" [ "$s" -le 15 ]
check spread-counted "the busy balance moved $moved tasks within the LLC" [ "$moved" -ge 3 ]
kb=$(ncpus /tmp/burst-eevdf.txt) sb=$(ncpus /tmp/burst-sis.txt) fl=$(total fork_loaded /tmp/b2.log)
check fork-spread-kernel "EEVDF's $N forks first ran on $kb CPUs (the premise)" [ "$kb" -ge $((N / 2)) ]
check fork-spread-sis "scx_sis's $N forks first ran on $sb CPUs" [ "$sb" -ge $((N / 2)) ]
check fork-loaded-counted "fork_loaded $fl while the burst ran ($(totals /tmp/b2.log idlest fallback))" [ "${fl:-0}" -ge $((N / 2)) ]
check exit-clean "scx_sis exited $rc1 and $SIS_RC" [ "$rc1" = 0 -a "$SIS_RC" = 0 ]
