# SPDX-License-Identifier: GPL-2.0-only
# suite: kthread 1:4:2 every 300
# kthread.sh: select_idle_sibling()'s per-CPU kthread stacking. A writer moved to CPU 0
# before each of 300 writes of /proc/sys/vm/stat_refresh, and allowed CPUs 0-1 for it:
# its schedule_on_each_cpu() flushes CPU 0's work first, so kworker/0 wakes the writer
# with prev == the kworker's CPU, and the wakee stacks there (step `kthread`, queued,
# not handed over) instead of moving to its idle sibling. A rule that never fires
# gives 0. Before that, hackbench's user-space wakers, often on
# the wakee's prev, must not stack by this rule.
# Then select_task_rq_fair()'s WF_CURRENT_CPU: a seccomp supervisor, allowed on CPUs 2
# and 5 and back on 5 before each of 200 notifications, is woken from poll() by a
# target pinned to CPU 2 (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP): it runs on CPU 2 under
# EEVDF and under scx_sis (step `current_cpu`); without the rule, on its idle prev, 5.
. /tests/lib.sh
plan 13
start_sis /tmp/h.log || fail start "$(tail -3 /tmp/h.log)"
hackbench -g 1 -l 100 >/dev/null 2>&1
stop_sis
rch=$SIS_RC
echo "# hackbench: $(totals /tmp/h.log select_cpu target prev kthread recent fallback)"
h=$(total kthread /tmp/h.log)
check not-for-user-wakers "kthread=$h of $(total select_cpu /tmp/h.log) hackbench wakeups, want <= 5" [ "${h:-99}" -le 5 ]
start_sis /tmp/k.log || fail start "$(tail -3 /tmp/k.log)"
sis-probe kwake 300
stop_sis
echo "# $(totals /tmp/k.log select_cpu target prev kthread recent idle_core idle_smt idle_cpu fallback direct)"
a=$(total kthread /tmp/k.log)
check stacked-on-kworker-cpu "kthread=$a of 300 writes, want >= 15" [ "${a:-0}" -ge 15 ]
check identity "steps do not sum to select_cpu" identity /tmp/k.log
# a kthread-stacked wakeup is queued, not handed to a claimed CPU's local DSQ
s=$(total select_cpu /tmp/k.log) f=$(total fallback /tmp/k.log) d=$(total direct /tmp/k.log)
c0=$(total current_cpu /tmp/k.log)
check stacked-not-direct "direct=$d, select_cpu=$s - fallback=$f - kthread=$a - current_cpu=$c0" [ "$d" = $((s - f - a - c0)) ]
# ... and goes through ops.enqueue to its CPU's queue (IDLE_KICK is off)
q=$(total cpu_queued /tmp/k.log)
check stacked-queued-on-cpu "cpu_queued=$q, fallback + kthread = $((f + a))" [ "${q:-0}" -ge $((f + a)) ]
check exit-0 "exit $rch and $SIS_RC: $(tail -2 /tmp/k.log)" [ "$rch$SIS_RC" = 00 ]
# WF_CURRENT_CPU, first under EEVDF (the premise), then under scx_sis
N=200
on_w() { sed -n 's/.*where the wakee ran (cpu:count):.* 2:\([0-9]*\).*/\1/p' "$1"; }
sis-probe curwake $N 2 5 >/tmp/c-eevdf.txt 2>&1
cat /tmp/c-eevdf.txt
e=$(on_w /tmp/c-eevdf.txt)
check current-cpu-eevdf "EEVDF ran the supervisor on CPU 2 ${e:-0} of $N times, want >= 180" [ "${e:-0}" -ge 180 ]
start_sis /tmp/c.log || fail start "$(tail -3 /tmp/c.log)"
sis-probe curwake $N 2 5 >/tmp/c-sis.txt 2>&1
stop_sis
cat /tmp/c-sis.txt
echo "# $(totals /tmp/c.log select_cpu current_cpu target prev idle_core idle_smt idle_cpu fallback direct)"
w=$(on_w /tmp/c-sis.txt) c=$(total current_cpu /tmp/c.log)
check current-cpu-sis "scx_sis ran the supervisor on CPU 2 ${w:-0} of $N times, want >= 180" [ "${w:-0}" -ge 180 ]
check current-cpu-counted "current_cpu=$c, want >= 180" [ "${c:-0}" -ge 180 ]
check current-cpu-identity "steps do not sum to select_cpu" identity /tmp/c.log
# unclaimed: queued on the waker's CPU, not handed over
s=$(total select_cpu /tmp/c.log) f=$(total fallback /tmp/c.log) d=$(total direct /tmp/c.log)
a=$(total kthread /tmp/c.log) q=$(total cpu_queued /tmp/c.log)
check current-cpu-not-direct "direct=$d, select_cpu=$s - fallback=$f - kthread=$a - current_cpu=$c" [ "$d" = $((s - f - a - c)) ]
check current-cpu-queued "cpu_queued=$q, fallback + kthread + current_cpu = $((f + a + c))" [ "${q:-0}" -ge $((f + a + c)) ]
check current-cpu-exit-0 "exit $SIS_RC: $(tail -2 /tmp/c.log)" [ "$SIS_RC" = 0 ]
