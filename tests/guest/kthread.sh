# SPDX-License-Identifier: GPL-2.0-only
# suite: kthread 1:4:2 every 300
# kthread.sh: select_idle_sibling()'s per-CPU kthread stacking. A shell that starts on
# CPU 0, then may use CPUs 0-1, writes /proc/sys/vm/stat_refresh 300 times: its
# schedule_on_each_cpu() flushes CPU 0's work first, so kworker/0 wakes the shell with
# prev == the kworker's CPU, and the wakee stacks there (step `kthread`, queued, not
# handed over) instead of moving to its idle sibling. 43-241 of 300 in 10 runs here;
# a rule that never fires gives 0. Before that, hackbench's user-space wakers, often on
# the wakee's prev, must not stack by this rule.
. /tests/lib.sh
plan 6
start_sis /tmp/h.log || fail start "$(tail -3 /tmp/h.log)"
hackbench -g 1 -l 100 >/dev/null 2>&1
stop_sis
rch=$SIS_RC
echo "# hackbench: $(totals /tmp/h.log select_cpu target prev kthread recent fallback)"
h=$(total kthread /tmp/h.log)
check not-for-user-wakers "kthread=$h of $(total select_cpu /tmp/h.log) hackbench wakeups, want <= 5" [ "${h:-99}" -le 5 ]
start_sis /tmp/k.log || fail start "$(tail -3 /tmp/k.log)"
taskset -c 0 sh -c "taskset -p -c 0,1 \$\$ >/dev/null; for i in \$(seq 1 300); do echo 1 >/proc/sys/vm/stat_refresh; done"
stop_sis
echo "# $(totals /tmp/k.log select_cpu target prev kthread recent idle_core idle_smt idle_cpu fallback direct)"
a=$(total kthread /tmp/k.log)
check stacked-on-kworker-cpu "kthread=$a of 300 writes, want >= 15" [ "${a:-0}" -ge 15 ]
check identity "steps do not sum to select_cpu" identity /tmp/k.log
# a kthread-stacked wakeup is queued, not handed to a claimed CPU's local DSQ
s=$(total select_cpu /tmp/k.log) f=$(total fallback /tmp/k.log) d=$(total direct /tmp/k.log)
check stacked-not-direct "direct=$d, select_cpu=$s - fallback=$f - kthread=$a" [ "$d" = $((s - f - a)) ]
# ... and goes through ops.enqueue to its CPU's queue (IDLE_KICK is off)
q=$(total cpu_queued /tmp/k.log)
check stacked-queued-on-cpu "cpu_queued=$q, fallback + kthread = $((f + a))" [ "${q:-0}" -ge $((f + a)) ]
check exit-0 "exit $rch and $SIS_RC: $(tail -2 /tmp/k.log)" [ "$rch$SIS_RC" = 00 ]
