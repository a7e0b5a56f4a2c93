# SPDX-License-Identifier: GPL-2.0-only
# suite: compat 1:4:2 lines 300
# compat.sh: the short check every supported kernel line gets. The guest's topology
# is checked first (a kernel may see a 1:4:2 guest differently); then load, the
# start-up line, hackbench and stress-ng, a wakeup on a whole idle core, --set live,
# one CPU hotplug handled in place, RT preemption, unload. The runner fails a log
# that names a deprecated interface or any sched_ext warning. With `refused` (a line on which no sched_ext
# scheduler loads, kernel.rs REFUSED) it asserts the one-line refusal instead.
. /tests/lib.sh
K=$(uname -r)
if [ "$1" = refused ]; then
	plan 3
	scx_sis >/tmp/c.log 2>&1
	rc=$?
	check refused-exit-1 "exit $rc on $K: $(tail -2 /tmp/c.log)" [ $rc = 1 ]
	check refused-one-line "$(grep -c 'error:' /tmp/c.log) error lines: $(tail -3 /tmp/c.log)" \
		sh -c '[ "$(grep -c "error:" /tmp/c.log)" = 1 ] && grep -q "error: this kernel.s BTF was generated with pahole older than 1.26" /tmp/c.log'
	check refused-left-default "state=$(state)" [ "$(state)" = disabled ]
	exit 0
fi
plan 15
sibs=$(cat /sys/devices/system/cpu/cpu4/topology/thread_siblings_list)
check guest-topology "cpu4's siblings on $K: $sibs (want 4-5)" [ "$sibs" = 4-5 ]
start_sis /tmp/c.log || fail start "$(tail -3 /tmp/c.log)"
PID0=$SIS_PID
check view "$(view) on $K" [ "$(view)" = "8 CPUs, 1 LLCs, 4 cores, 1 nodes" ]
check startup-line "$(grep "kernel $K" /tmp/c.log)" grep -q "kernel $K: " /tmp/c.log
hackbench -g 2 -l 100 >/tmp/hb.log 2>&1
check hackbench "$(tail -2 /tmp/hb.log)" grep -q Time /tmp/hb.log
stress-ng --cpu 8 --switch 2 --timeout 5s >/tmp/sn.log 2>&1
check stress-ng "exit $?: $(tail -2 /tmp/sn.log)" grep -q 'successful run completed' /tmp/sn.log
# CPUs 0 and 2 busy: a task whose prev is CPU 0 wakes onto a whole idle core (4-7)
sis-probe spin 0 & S0=$!
sis-probe spin 2 & S2=$!
sleep 1
sis-probe wake 100 2000 0 >/tmp/w.txt
n=$(count /tmp/w.txt 4 5 6 7)
check idle-core-placement "$n/100 wakeups on a whole idle core (4-7), want >= 95" [ "$n" -ge 95 ]
kill $S0 $S2
scx_sis --set NO_IDLE_CORE >/dev/null
check set-live "$(scx_sis --set 2>&1)" sh -c 'scx_sis --set | grep -q "NO_IDLE_CORE"'
echo 0 >/sys/devices/system/cpu/cpu3/online
i=0; while [ "$(status cpus)" != 7 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check hotplug-in-place "attaches $(status attaches), $(view), state $(state)" [ "$(status attaches)" = 1 -a "$(status cpus)" = 7 -a "$(state)" = enabled ]
echo 1 >/sys/devices/system/cpu/cpu3/online
i=0; while [ "$(status cpus)" != 8 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check set-kept-over-hotplug "$(scx_sis --set 2>&1), $(view)" sh -c "scx_sis --set | grep -q NO_IDLE_CORE && [ $(status cpus) = 8 ]"
check same-loader "pid $PID0" kill -0 $PID0
# RT tasks take CPU 1 from sched_ext tasks. rtwake: 30 wakeups on a busy CPU 1, each
# re-enqueues what it preempts (`reenq`: ops.stopping before 6.19, the sched_switch
# hook after). rtsteal: CPU 1 held 500 ms from a lone unpinned spinner, which must run
# elsewhere for >= 100 of those ms (stranded, it waits for the RT task, or gets at most
# ext_server's 5 %): an idle CPU is woken to pull it.
stress-ng --cpu 8 --timeout 6s --quiet & SNG=$!
sleep 1
sis-probe rtwake 1 30 50000 >/tmp/rtw.log 2>&1
wait $SNG
sis-probe rtsteal 1 500 >/tmp/rt.log 2>&1
check still-enabled "state=$(state)" [ "$(state)" = enabled ]
stop_sis
r=$(total reenq /tmp/c.log)
echo "# $K: $(cat /tmp/rt.log); reenq=${r:-none} ($(cat /tmp/rtw.log))"
ran=$(sed -n 's/.* ran \([0-9]*\) of.*/\1/p' /tmp/rt.log)
check rt-preempted-task-requeued "$(cat /tmp/rt.log); want CPU 1 and >= 100 ms" \
	sh -c "grep -q 'on CPU 1 when preempted' /tmp/rt.log && [ '${ran:-0}' -ge 100 ]"
check rt-wakeups-requeue "reenq=${r:-none} after 30 RT wakeups on busy CPU 1" [ "${r:-0}" -ge 1 ]
check exit-0 "exit $SIS_RC: $(tail -3 /tmp/c.log)" [ "$SIS_RC" = 0 ]
check unloaded "state=$(state)" wait_state disabled 5
grep -m1 "kernel $K" /tmp/c.log | sed 's/^.*INFO. /# /'
