# SPDX-License-Identifier: GPL-2.0-only
# suite: placement-1:4:2 1:4:2 newest 400 -- 400
# placement.sh: 1:4:2 guest, busy loops on CPUs 0 and 2, a task whose prev is CPU 0
# sleeps and wakes. IDLE_CORE: whole idle cores (4-7). NO_IDLE_CORE: an idle sibling
# of a busy CPU (1 or 3), through select_idle_smt.
. /tests/lib.sh
plan 11
N=${1:-400}
# run NAME FEATURES [ARGS]: the busy loops start after the load (under TCG a loader
# beside busy vCPUs waits behind each of them)
run() {
	start_sis /tmp/p-$1.log -f "$2" ${3:---quality-comm sis-wake} || { fail "$1-start" "$(tail -3 /tmp/p-$1.log)"; return; }
	sis-probe spin 0 & S0=$!
	sis-probe spin 2 & S2=$!
	sleep 1
	sis-probe trace start 4096
	sis-probe wake $N 2000 0 >/tmp/w-$1.txt
	sis-probe trace stop sis-wake >/tmp/t-$1.txt
	kill $S0 $S2; wait $S0 $S2 2>/dev/null
	stop_sis
	sed 's/^/# '"$1"' /' /tmp/t-$1.txt
	sed -n 's/^# wake histogram/# '"$1"' wake histogram/p' /tmp/w-$1.txt
	c=""; for f in select_cpu target prev recent idle_core idle_smt idle_cpu fallback wake_affine lost_claims q_wakeups missed_idle_core_per_1k missed_idle_cpu_per_1k stacked_per_1k idle_cpus_mean; do c="$c $f=$(total $f /tmp/p-$1.log)"; done
	echo "# $1 counters:$c"
}
run idle_core ""
core=$(count /tmp/w-idle_core.txt 4 5 6 7)
check idle-core-placement "$core/$N wakeups on a whole idle core (4-7), want >= 95%" [ $((core * 100)) -ge $((N * 95)) ]
run no_idle_core NO_IDLE_CORE
smt=$(count /tmp/w-no_idle_core.txt 1 3)
check no-idle-core-placement "$smt/$N wakeups on an idle sibling of a busy CPU (1,3), want > 50%" [ $((smt * 2)) -gt $N ]
check no-idle-core-counter "idle_core=$(total idle_core /tmp/p-no_idle_core.log) with NO_IDLE_CORE" [ "$(total idle_core /tmp/p-no_idle_core.log)" = 0 ]
check idle-smt-counter "idle_smt=$(total idle_smt /tmp/p-no_idle_core.log)" [ "$(total idle_smt /tmp/p-no_idle_core.log)" -gt 0 ]
# tfield NAME FIELD: a field of the tracer's line; agree A B: within 50 per 1000
tfield() { tr ' ' '\n' </tmp/t-$1.txt | grep "^$2=" | cut -d= -f2; }
agree() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= 50 && d >= -50) }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
mc=$(total missed_idle_core_per_1k /tmp/p-idle_core.log); tc=$(tfield idle_core missed_idle_core_per_1k)
# the target, prev and recent steps take an idle CPU without testing its core, as fair.c
# does (q_missed_core_early): the core search's own misses are what IDLE_CORE answers for
qm=$(total q_missed_core /tmp/p-idle_core.log) qe=$(total q_missed_core_early /tmp/p-idle_core.log) qw=$(total q_wakeups /tmp/p-idle_core.log)
ms=$(awk -v m="$qm" -v e="$qe" -v w="$qw" 'BEGIN { printf "%.1f", w ? (m - e) * 1000 / w : 1000 }')
echo "# missed_idle_core $mc/1000 with IDLE_CORE: $qm of $qw wakeups, $qe of them by target, prev or recent"
check quality-idle-core "the core search missed $ms/1000 ($qm missed, $qe by target/prev/recent, of $qw), want < 5" below "$ms" 5
check tracer-agrees-idle-core "tracer $tc/1000 vs scx_sis $mc/1000" agree "$tc" "$mc"
mn=$(total missed_idle_core_per_1k /tmp/p-no_idle_core.log); tn=$(tfield no_idle_core missed_idle_core_per_1k)
check quality-no-idle-core "missed_idle_core $mn/1000 with NO_IDLE_CORE, want > 500" below 500 "$mn"
check tracer-agrees-no-idle-core "tracer $tn/1000 vs scx_sis $mn/1000" agree "$tn" "$mn"
# every wakeup accounted: judged, or made no decision (the timer fired while the task
# was still on its CPU: ttwu_runnable() or the on-CPU wakelist; 0 or 1 of 400 seen), for
# each sleep that switched the task out (one in about 20 runs a sleep of 400 does not)
bl=$(awk '$1 == "blocked" {print $2}' /tmp/w-idle_core.txt)
echo "# idle_core: $bl of $N sleeps switched the task out; the tracer saw $(tfield idle_core wakings) wakings"
check tracer-complete "blocked ${bl:-?} of $N sleeps; $(cat /tmp/t-idle_core.txt)" [ "$(tfield idle_core lost_events)" = 0 -a "${bl:-0}" -ge $((N - 5)) -a $(($(tfield idle_core q_wakeups) + $(tfield idle_core no_decision))) -ge "${bl:-$N}" -a "$(tfield idle_core no_decision)" -le 5 ]
# the same placement with the classification compiled out of the path
run no_quality "" --no-quality
nq=$(count /tmp/w-no_quality.txt 4 5 6 7)
check quality-off-same-placement "$nq/$N on a whole idle core without classification ($core/$N with)" [ $((nq * 100)) -ge $((N * 95)) ]
check quality-off-counts-nothing "q_wakeups=$(total q_wakeups /tmp/p-no_quality.log)" [ "$(total q_wakeups /tmp/p-no_quality.log)" = 0 ]
