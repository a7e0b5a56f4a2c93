# SPDX-License-Identifier: GPL-2.0-only
# suite: hotplug 1:4:2 every 300
# hotplug.sh: a CPU going offline and online leaves scx_sis loaded (it has
# ops.cpu_online/offline): the loader rereads sysfs, rewrites the topology in place,
# logs it, and says so in status.json; nothing restarts and --set state stays. Then
# scx_sis starts while CPU 3 goes off and on line every 0.1 s: a hotplug during the
# load must not fail the attach (no hotplug_seq check; the loader catches up after).
# Before 6.19 the cycling runs first, before any scx_sis: a hotplug while those kernels
# enable or tear down a sched_ext scheduler can hang them (KERNELS.md).
. /tests/lib.sh
plan 13
maj=$(uname -r | cut -d. -f1); min=$(uname -r | cut -d. -f2)
quiet_enable=$([ "$maj" -lt 6 -o \( "$maj" = 6 -a "$min" -lt 19 \) ] && echo 1 || echo 0)
# cycle: CPU 3 off and on every 0.1 s until /tmp/stop (or N times)
cycle() {
	n=0
	while [ ! -e /tmp/stop ] && [ $n != "${1:--1}" ]; do
		n=$((n + 1)); echo 0 >/sys/devices/system/cpu/cpu3/online; sleep 0.1
		echo 1 >/sys/devices/system/cpu/cpu3/online; sleep 0.1
	done
	echo "# CPU 3 went offline $n times, then the cycling stopped: state $(state)"
}
[ $quiet_enable = 0 ] || cycle 20
start_sis /tmp/h.log || fail start "$(tail -3 /tmp/h.log)"
PID0=$SIS_PID
scx_sis --set NO_IDLE_SMT >/dev/null
wait_cpus() { i=0; while [ "$(status cpus)" != $1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; }
echo 0 >/sys/devices/system/cpu/cpu3/online
wait_cpus 7
check offline-in-place "state $(state), attaches $(status attaches), hotplugs $(status hotplugs): $(grep 'CPU hotplug' /tmp/h.log | tail -1)" \
	sh -c "[ $(state) = enabled ] && [ $(status attaches) = 1 ] && [ $(status hotplugs) -ge 1 ]"
check offline-topology "$(view)" [ "$(view)" = "7 CPUs, 1 LLCs, 4 cores, 1 nodes" ]
hackbench -g 2 -l 50 >/tmp/hb.log 2>&1
check offline-hackbench "$(tail -2 /tmp/hb.log)" grep -q Time /tmp/hb.log
echo 1 >/sys/devices/system/cpu/cpu3/online
wait_cpus 8
check online-in-place "state $(state), attaches $(status attaches), hotplugs $(status hotplugs)" \
	sh -c "[ $(state) = enabled ] && [ $(status attaches) = 1 ] && [ $(status hotplugs) = 2 ]"
check online-topology "$(view)" [ "$(view)" = "8 CPUs, 1 LLCs, 4 cores, 1 nodes" ]
check logged "$(grep -c 'CPU hotplug: ' /tmp/h.log) lines: $(grep 'CPU hotplug' /tmp/h.log | tail -1)" grep -q "CPU hotplug: 8 CPUs, 1 LLCs, 4 cores, 1 nodes, topology rewritten in" /tmp/h.log
check set-kept "$(scx_sis --set 2>&1)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE WA_IDLE WA_WEIGHT WA_BIAS WAKE_WIDE IDLE_CORE NO_IDLE_SMT RECENT_USED SIS_UTIL NO_IDLE_KICK NO_SIS_AVG_CPU NO_SIS_PROP PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT WAKEUP_PREEMPTION DELAY_DEQUEUE $KHRTICK $KNI$"'
check same-loader "pid $PID0" kill -0 $PID0
stop_sis
check exit-0 "exit $SIS_RC: $(tail -3 /tmp/h.log)" [ "$SIS_RC" = 0 ]
check disabled-after "state=$(state)" wait_state disabled 5
# 6.19+: the load meets the cycling; before, it ran at the start (above)
if [ $quiet_enable = 0 ]; then cycle & CYC=$!; else CYC=; fi
if ! start_sis /tmp/h2.log; then
	echo "# not enabled after 60 s: state $(state), $(tail -2 /tmp/h2.log); blocked tasks:"
	echo 1 >/proc/sys/kernel/sysrq; echo w >/proc/sysrq-trigger; sleep 1
	dmesg | sed -n '/Show Blocked State/,$p' | grep -v 'CPU3\|smpboot' | tail -80 | sed 's/^/# /'
fi
touch /tmp/stop
check load-during-hotplug "state $(state), attaches $(status attaches): $(grep -i 'exit\|error' /tmp/h2.log | head -2)" \
	sh -c "[ $(state) = enabled ] && [ '$(status attaches)' = 1 ]"
[ -z "$CYC" ] || wait $CYC
echo 1 >/sys/devices/system/cpu/cpu3/online 2>/dev/null
wait_cpus 8
check caught-up "$(view), attaches $(status attaches)" [ "$(view)" = "8 CPUs, 1 LLCs, 4 cores, 1 nodes" -a "$(status attaches)" = 1 ]
stop_sis
check exit-0-after "exit $SIS_RC: $(tail -3 /tmp/h2.log)" [ "$SIS_RC" = 0 ]
