# SPDX-License-Identifier: GPL-2.0-only
# suite: eevdf 1:4:2 newest 500
# eevdf.sh: the rules around the search, each against what fair.c does. Weights hold on
# a CPU beside a switching load (ratio against EEVDF's in this guest); a request ends
# before the tick (HRTICK) and at the tick without it; a SCHED_IDLE curr is preempted
# by any other wakee, a BATCH or IDLE wakee preempts nothing else and waits, a shorter
# request preempts (PREEMPT_SHORT), a sleeper beside a hog wakes as fast as under EEVDF,
# and WAKEUP_PREEMPTION off preempts nothing; a CPU running only SCHED_IDLE work is
# taken as idle, by a fork only after every idle CPU; a fork preempts a SCHED_IDLE curr
# and no normal one.
# One scx_sis runs every phase (a feature a phase turns off is turned
# off live); a phase's counts are a monitor's over it. CPU 3 is the test CPU.
. /tests/lib.sh
plan 18
C=3
OTHERS=0-2,4-7
sst() { cut -d' ' -f"$2" /proc/"$1"/schedstat; }
# ratio NICE_A NICE_B: ms on CPU for each over 12 s, both pinned to CPU C, hackbench elsewhere
ratio() {
	taskset -c $OTHERS hackbench -g 2 -l 1000000 >/dev/null 2>&1 & HB=$!
	sis-probe spin $C $1 & A=$!
	sis-probe spin $C $2 & B=$!
	sleep 2
	a0=$(sst $A 1) b0=$(sst $B 1)
	sleep 12
	a=$((($(sst $A 1) - a0) / 1000000)) b=$((($(sst $B 1) - b0) / 1000000))
	kill $A $B $HB; wait $A $B $HB 2>/dev/null
	echo "$a $b"
}
# slice: mean us per timeslice of two nice-0 hogs on CPU C over 5 s, then both hogs'
# timeslices over their whole lives
slice() {
	sis-probe spin $C & A=$!
	sis-probe spin $C & B=$!
	sleep 1
	t0=$(sst $A 1) n0=$(sst $A 3)
	sleep 5
	t=$(($(sst $A 1) - t0)) n=$(($(sst $A 3) - n0)) all=$(($(sst $A 3) + $(sst $B 3)))
	kill $A $B; wait $A $B 2>/dev/null
	echo $((t / (n > 0 ? n : 1) / 1000)) $all
}
# napwith HOG_POL NAP_POL NAP_SLICE_US [N]: a hog and a napper on CPU C; prints nap's line
napwith() {
	sis-probe hog $C $1 0 & H=$!
	sleep 0.5
	sis-probe nap $C $2 $3 ${4:-200} 2000
	kill $H; wait $H 2>/dev/null
}
p50() { echo "$1" | sed -n 's/.* p50=\([0-9-]*\) .*/\1/p'; }
# hogs_on POL CPU...: a POL hog pinned to each CPU, their PIDs in H
hogs_on() {
	local pol=$1 c
	shift
	H=
	for c in "$@"; do sis-probe hog $c $pol 0 & H="$H $!"; done
}
# forkside: SCHED_IDLE hogs on CPUs 0-6, CPU 7 idle; 10 forks from CPU 0: how many
# children first ran on CPU 6, the idle CPU's sibling (sched_balance_find_dst_group_cpu()
# takes an idle CPU of the group before one running only SCHED_IDLE work)
forkside() {
	hogs_on idle $(seq 0 6)
	sleep 1
	n6=0
	for i in $(seq 1 10); do
		sis-probe forkburst 1 0 | grep -q '^cpu 6 ' && n6=$((n6 + 1))
	done
	kill $H; wait $H 2>/dev/null
	echo $n6
}
# forksbeside POL: a POL hog on every CPU, 200 threads created one after another
forksbeside() {
	hogs_on $1 $(seq 0 7)
	sleep 1
	sis-probe forks 200 >/dev/null
	kill $H; wait $H 2>/dev/null
}

# EEVDF's own figures first, in this guest
set -- $(ratio -20 0); ke_a=$1 ke_b=$2
set -- $(slice); ke_slice=$1
echo "# EEVDF: nice -20 vs 0 on CPU $C beside hackbench: $ke_a vs $ke_b ms; two hogs: $ke_slice us per timeslice"
k_nn=$(napwith normal normal 0)
k_nb=$(napwith normal batch 0)
echo "# EEVDF: SCHED_IDLE hog + normal napper: $(napwith idle normal 0)"
echo "# EEVDF: normal hog + normal napper: $k_nn; + BATCH napper: $k_nb"
k_fs=$(forkside)
echo "# EEVDF: forks beside an idle CPU 7 whose sibling 6 runs SCHED_IDLE: $k_fs of 10 children first ran on CPU 6"

start_sis /tmp/e.log || fail start "$(tail -3 /tmp/e.log)"
set -- $(ratio -20 0); a=$1 b=$2
# ratios as integers x100; EEVDF's (weights 88761:1024) is about 87
r_sis=$((a * 100 / (b > 0 ? b : 1))) r_k=$((ke_a * 100 / (ke_b > 0 ? ke_b : 1)))
echo "# scx_sis: nice -20 vs 0: $a vs $b ms, ratio $((r_sis / 100)) against EEVDF's $((r_k / 100))"
# The nice-0 task gets about 1 % of the CPU, a hundred ms in slices of ~3 ms, so the
# ratio is noisy: scx_sis's was 0.97x and 1.63x EEVDF's in two CI runs. Weights that
# do not hold (1:1, or nice ignored on a CPU that is not the vtime frontier) fall far
# outside 0.5x-2x.
check nice-ratio-as-eevdf "ratio $r_sis/100 against EEVDF's $r_k/100 (want within 0.5x-2x)" \
	[ $((r_sis * 10)) -ge $((r_k * 5)) -a $((r_sis * 10)) -le $((r_k * 20)) ]

set -- $(counted /tmp/e2.log slice); s_on=$1 n_on=$2
scx_sis --set NO_HRTICK >/dev/null
set -- $(counted /tmp/e3.log slice); s_off=$1
scx_sis --set $KHRTICK >/dev/null
h_on=$(total hrtick /tmp/e2.log) h_off=$(total hrtick /tmp/e3.log) a_on=$(total hrtick_armed /tmp/e2.log)
echo "# two hogs on CPU $C: $s_on us per timeslice with HRTICK ($h_on timer ends of $n_on timeslices), $s_off us without ($h_off); EEVDF $ke_slice us"
# The timer ends the run: a run the tick or a wakeup ended first does not count. The
# figures in us are printed, not checked: a stalled TCG host stretches every timeslice,
# EEVDF's too (4972 us with both host cores busy, against 2951 idle).
check slice-ends-before-tick "$h_on timer ends of $n_on timeslices (want >= 80 %)" \
	[ $((${h_on:-0} * 100)) -ge $((n_on * 80)) ]
# one arming per run: at the switch when the run ends before the next tick, else at it.
# The count is every CPU's: the monitor, the loader and kworkers arm too (1665 armings
# for the hogs' 1470 timeslices in one run), where arming twice a run would double it.
check hrtick-armed-once-per-run "$a_on armings, $h_on timer ends, $n_on timeslices (want ends <= armings <= 1.3 x timeslices + 50)" \
	[ "${a_on:-0}" -ge "${h_on:-1}" -a "${a_on:-0}" -le $((n_on * 13 / 10 + 50)) ]
check slice-at-tick-without-hrtick "NO_HRTICK $s_off us, $h_off timer ends (want >= 3400 us: the 4 ms tick, and 0)" \
	[ "$s_off" -ge 3400 -a "${h_off:-1}" -eq 0 ]

n=$(counted /tmp/e4.log napwith idle normal 0)
p=$(total preempt_idle /tmp/e4.log)
echo "# SCHED_IDLE hog + normal napper: $n; preempt_idle $p"
check sched-idle-curr-preempted "preempt_idle=$p of 200 wakeups (want >= 150)" [ "${p:-0}" -ge 150 ]

# an IDLE napper waits about 130 ms a wakeup (weight 3 against 1024): 10 of them
n=$(counted /tmp/e5a.log napwith normal idle 0 10)
n2=$(counted /tmp/e5b.log napwith normal batch 0)
p=$(($(total wakeup_preempt /tmp/e5a.log) + $(total wakeup_preempt /tmp/e5b.log))) b=$(p50 "$n2") kb=$(p50 "$k_nb")
echo "# normal hog + IDLE napper: $n; + BATCH napper: $n2 (EEVDF p50 $kb us); wakeup_preempt $p"
check idle-batch-wakee-no-preempt "wakeup_preempt=$p over 210 IDLE and BATCH wakeups (want < 60: each would preempt without the rule; the rest are other tasks' wakeups)" [ "${p:-99}" -lt 60 ]
check batch-wakee-waits "BATCH napper p50 $b us (EEVDF $kb us; want >= 600: it waits for curr's request)" [ "${b:-0}" -ge 600 ]

n=$(counted /tmp/e6.log napwith idle batch 0)
p=$(total preempt_idle /tmp/e6.log)
echo "# SCHED_IDLE hog + BATCH napper: $n; preempt_idle $p"
check batch-wakee-preempts-idle "preempt_idle=$p of 200 (want >= 150)" [ "${p:-0}" -ge 150 ]

n=$(counted /tmp/e7.log napwith normal normal 100)
p=$(total preempt_short /tmp/e7.log)
echo "# normal hog + napper with a 100 us request: $n; preempt_short $p"
check preempt-short "preempt_short=$p of 200 (want >= 100)" [ "${p:-0}" -ge 100 ]

n=$(counted /tmp/e8.log napwith normal normal 0)
p=$(total wakeup_preempt /tmp/e8.log) s=$(p50 "$n") k=$(p50 "$k_nn")
echo "# normal hog + normal napper: $n (EEVDF p50 $k us); wakeup_preempt $p"
check napper-latency-as-eevdf "p50 $s us against EEVDF's $k us (want <= max(3x, +500 us))" \
	[ "${s:-99999}" -le $((k * 3 > k + 500 ? k * 3 : k + 500)) ]

scx_sis --set NO_WAKEUP_PREEMPTION >/dev/null
n=$(counted /tmp/e9.log napwith idle normal 0)
scx_sis --set WAKEUP_PREEMPTION >/dev/null
p=$(total wakeup_preempt /tmp/e9.log)
echo "# NO_WAKEUP_PREEMPTION, SCHED_IDLE hog + normal napper: $n; wakeup_preempt $p"
check no-wakeup-preemption-off "wakeup_preempt=$p (want 0)" [ "${p:-99}" = 0 ]

# a SCHED_IDLE hog on every CPU: free wakeups find those CPUs idle (choose_idle_cpu)
idlehogs() {
	hogs_on idle $(seq 0 7)
	sleep 1
	sis-probe wake 200 2000 0 >/dev/null
	kill $H; wait $H 2>/dev/null
}
counted /tmp/e10.log idlehogs
fs=$(counted /tmp/e11.log forkside)
counted /tmp/e12.log forksbeside idle
counted /tmp/e13.log forksbeside normal
stop_sis
si=$(total sched_idle /tmp/e10.log) fb=$(total fallback /tmp/e10.log)
echo "# SCHED_IDLE hogs on all CPUs: sched_idle=$si fallback=$fb of $(total select_cpu /tmp/e10.log) select_cpu"
check sched-idle-cpu-is-idle "sched_idle=$si (want >= 150 of 200 wakeups)" [ "${si:-0}" -ge 150 ]
echo "# forks beside an idle CPU 7 whose sibling 6 runs SCHED_IDLE: $fs of 10 children first ran on CPU 6 (EEVDF $k_fs)"
check fork-idle-before-sched-idle "$fs of 10 on CPU 6, not the idle CPU 7 (want <= 2; EEVDF $k_fs)" [ "${fs:-10}" -le 2 ]
f1=$(total fork_preempt /tmp/e12.log) f2=$(total fork_preempt /tmp/e13.log)
echo "# 200 forks beside SCHED_IDLE hogs: fork_preempt=$f1; beside normal hogs: fork_preempt=$f2"
check fork-preempts-sched-idle "fork_preempt=$f1 of 200 forks (want >= 150)" [ "${f1:-0}" -ge 150 ]
check fork-no-preempt-normal "fork_preempt=$f2 (want 0: WF_FORK preempts a normal task by PREEMPT_SHORT only)" [ "${f2:-1}" = 0 ]
check no-ejection "$(grep -hi 'stall\|EXIT: .*error' /tmp/e*.log | head -2)" sh -c '! grep -qi "stall\|EXIT: .*error" /tmp/e*.log'
check counter-identity "$(grep totals /tmp/e10.log)" identity /tmp/e10.log
check left-default "state=$(state)" [ "$(state)" = disabled ]
