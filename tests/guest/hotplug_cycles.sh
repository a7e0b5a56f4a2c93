# SPDX-License-Identifier: GPL-2.0-only
# suite: hotplug-cycles 1:4:2 every 500
# suite: hotplug-cycles-short 1:4:2 others 400 -- short
# hotplug_cycles.sh: 5 offline/online cycles while hackbench runs (CPU 0's sibling,
# both whole cores 4-5 and 6-7 among them), then 6 back-to-back cycles; with `short`
# (the lines outside the full suite) the first two, a sibling and a whole core.
# scx_sis has ops.cpu_online/offline, so the kernel keeps it loaded: the state, sampled
# every half second from the first cycle to the end, reads enabled throughout, there is
# one attach, the topology in status.json matches sysfs after each cycle, and the cycled
# CPUs take wakeups through the idle-core step again; SysRq-D's dump carries our lines;
# no placement found V jumped (`v_jumps`).
# With `refused` (kernel.rs REFUSED) it asserts the one-line refusal.
. /tests/lib.sh
if [ "$1" = refused ]; then
	plan 1
	scx_sis >/tmp/hc.log 2>&1
	check refused-exit-1 "exit $?: $(tail -1 /tmp/hc.log)" grep -q "pahole older than 1.26" /tmp/hc.log
	exit 0
fi
plan 13
CYCLES='1 "4 5" 3 "6 7" 2'
[ "$1" = short ] && CYCLES='1 "4 5"'
# the CPUs the cycles take off and on, plus the 6 back-to-back; one hotplug each way
pairs=$(($(eval "echo $CYCLES" | wc -w) + 6))
S=/sys/devices/system/cpu
T0=$(date +%s)
# el: seconds since the script began, for the progress lines
el() { echo "$(($(date +%s) - T0)) s"; }
# sysfs: the topology the kernel has online, as scx_sis's view prints it
sysfs_view() {
	n=$(cat $S/online | tr ',' '\n' | awk -F- '{ n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n }')
	llcs=$(cat $S/cpu*/cache/index3/shared_cpu_list 2>/dev/null | sort -u | wc -l)
	cores=$(for c in $S/cpu[0-9]*; do [ -e $c/topology/core_id ] && echo "$(cat $c/topology/physical_package_id) $(cat $c/topology/core_id)"; done | sort -u | wc -l)
	echo "$n CPUs, $llcs LLCs, $cores cores, 1 nodes"
}
# matches: wait up to 5 s for the view to match sysfs; a line and a mismatch count if not
bad_views=0
matches() {
	i=0; while [ "$(view)" != "$(sysfs_view)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(view)" = "$(sysfs_view)" ] || { bad_views=$((bad_views + 1)); echo "# $1: scx_sis '$(view)', sysfs '$(sysfs_view)'"; }
}
start_sis /tmp/hc.log || fail start "$(tail -3 /tmp/hc.log)"
PID0=$SIS_PID
scx_sis --set NO_RECENT_USED >/dev/null
( for i in $(seq 1 400); do hackbench -g 1 -l 40 >/dev/null 2>&1 || echo "hackbench failed" >>/tmp/hb.err; [ -e /tmp/stop ] && break; done; echo done >/tmp/hb.done ) &
( while [ ! -e /tmp/stop_sampling ]; do echo "$(state) $(status attaches)"; sleep 0.5; done >/tmp/samples ) &
cycle=0
eval "set -- $CYCLES"
for cpus; do
	cycle=$((cycle + 1))
	for c in $cpus; do echo 0 >$S/cpu$c/online; done
	matches "cycle $cycle offline $cpus"
	off="$(status cpus) CPUs"
	for c in $cpus; do echo 1 >$S/cpu$c/online; done
	matches "cycle $cycle online $cpus"
	echo "# cycle $cycle: offline $cpus -> $off, online -> $(status cpus) CPUs, state $(state), $(el)"
done
for i in 1 2 3 4 5 6; do
	c=$((i % 3 * 2 + 3))
	echo 0 >$S/cpu$c/online
	echo 1 >$S/cpu$c/online
done
matches "after 6 back-to-back cycles"
echo "# back-to-back cycles done: $(view), state $(state), hotplugs $(status hotplugs), $(el)"
touch /tmp/stop
# the hackbench under way finishes: up to 90 s of wall time, a line every 15 s
t=$(date +%s)
while [ ! -e /tmp/hb.done ] && [ $(($(date +%s) - t)) -lt 90 ]; do
	sleep 1
	[ $((($(date +%s) - t) % 15)) = 0 ] && echo "# waiting for the last hackbench, $(el)"
done
touch /tmp/stop_sampling
sleep 1
n=$(wc -l </tmp/samples)
off=$(grep -vc "^enabled 1$" /tmp/samples)
echo "# $n state samples, $off not 'enabled' with one attach; hotplugs $(status hotplugs)"
check always-enabled "$off of $n half-second samples not enabled with 1 attach: $(grep -v '^enabled 1$' /tmp/samples | sort | uniq -c | head -3)" \
	sh -c "[ $n -ge 10 ] && [ $off = 0 ]"
check one-attach "attaches $(status attaches), restarts $(status restarts)" [ "$(status attaches)" = 1 ]
check hotplugs-counted "hotplugs $(status hotplugs), want $((pairs * 2)) ($pairs offline/online pairs, 6 of them back-to-back)" [ "$(status hotplugs)" = $((pairs * 2)) ]
check view-matches-sysfs "$bad_views of $((cycle * 2 + 1)) checks did not match within 5 s" [ $bad_views = 0 ]
check workload-finished "$(cat /tmp/hb.err 2>/dev/null)" sh -c '[ -e /tmp/hb.done ] && [ ! -s /tmp/hb.err ]'
check set-kept "$(scx_sis --set 2>&1)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE WA_IDLE WA_WEIGHT WA_BIAS WAKE_WIDE IDLE_CORE IDLE_SMT NO_RECENT_USED SIS_UTIL NO_IDLE_KICK NO_SIS_AVG_CPU NO_SIS_PROP PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT WAKEUP_PREEMPTION DELAY_DEQUEUE $KHRTICK $KNI$"'
# cores 0-1 busy (one thread each): a task whose prev is CPU 0 wakes onto the whole
# idle cores 4-5 and 6-7 (CPUs 5 and 7 went off and on 3 times, 4 and 6 once; with
# `short` 5 and 7 twice, 4 once)
sis-probe spin 0 & S0=$!
sis-probe spin 2 & S2=$!
# 100 wakes take 1-2 s: a loop still going after 90 s is dumped while it waits, then
# ended. The watchdog forks before the loop and the shell waits rather than polls: a
# poll's child exiting on an idle core as the shell's wakeup scans leaves no idle core
# found, and that scan clears the hint (as fair.c's would).
(
	sleep 91
	W=$(cat /tmp/w.pid)
	kill -0 "$W" 2>/dev/null || exit 0
	echo "# the wake loop did not end within 90 s; sched_ext's dump:"
	scx_dump | sed 's/^/# /'
	kill -9 "$W"
) & WD=$!
sleep 1
r0=$(grep -c "topology rewritten" /tmp/hc.log)
sis-probe wake 100 2000 0 >/tmp/w.txt & W=$!
echo $W >/tmp/w.pid
wait $W; wrc=$?
kill $WD 2>/dev/null
r1=$(grep -c "topology rewritten" /tmp/hc.log)
# SysRq-D beside the spinners: the dump carries our lines for a CPU and a task
scx_dump >/tmp/dump.txt
check debug-dump "$(grep -c '^ *sis: ' /tmp/dump.txt) lines of ours in $(wc -l </tmp/dump.txt)" \
	sh -c "grep -q '^ *sis: nr_queued=.* avg_vruntime=' /tmp/dump.txt && grep -q '^ *sis: rq_cpu=' /tmp/dump.txt"
kill $S0 $S2
n=$(count /tmp/w.txt 4 5 6 7)
check idle-core-on-cycled-cpus "$n/100 wakeups on the idle cores 4-7, want >= 95 (wake loop exit $wrc; by CPU:$(awk '$1=="cpu" {printf " %s:%s", $2, $3}' /tmp/w.txt); topology rewrites during the loop: $((r1 - r0)))" [ "$n" -ge 95 ]
check same-loader "pid $PID0" kill -0 $PID0
stop_sis
echo "# $(totals /tmp/hc.log offline_kicks starved)"
check exit-0 "exit $SIS_RC: $(tail -3 /tmp/hc.log)" [ "$SIS_RC" = 0 ]
check no-ejection "$(grep -i 'stall\|error\|asked for a restart' /tmp/hc.log | head -2)" sh -c '! grep -qi "stall\|error\|asked for a restart" /tmp/hc.log'
check no-runtime-error "$(dmesg | grep -A1 'runtime error' | head -3)" sh -c '! dmesg | grep -q "runtime error\|non-existent DSQ\|not properly vacated"'
check no-v-jump "$(totals /tmp/hc.log v_jumps sums_retry starved)" [ "$(total v_jumps /tmp/hc.log)" = 0 ]
grep "CPU hotplug" /tmp/hc.log | tail -2 | sed 's/^.*INFO. /| /'
