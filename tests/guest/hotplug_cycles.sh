# SPDX-License-Identifier: GPL-2.0-only
# suite: hotplug-cycles 1:4:2 every 900
# hotplug_cycles.sh: 10 offline/online cycles while hackbench runs, including CPU 0's
# sibling and a whole core, then 10 back-to-back cycles faster than a restart takes.
# Each online CPU is unknown to the topology loaded while it was offline until the
# restart lands: scx_sis must schedule it (orphan DSQ) without a runtime error. It
# restarts by itself each time, the workload finishes, the last instance has the
# full topology, and a --set change survives every restart.
. /tests/lib.sh
plan 10
start_sis /tmp/hc.log || fail start "$(tail -3 /tmp/hc.log)"
PID0=$SIS_PID
scx_sis --set NO_RECENT_USED >/dev/null
( for i in $(seq 1 400); do hackbench -g 1 -l 40 >/dev/null 2>&1 || echo "hackbench failed" >>/tmp/hb.err; [ -e /tmp/stop ] && break; done; echo done >/tmp/hb.done ) &
attaches() { status attaches; }
# tick I WHAT: a line every 10 s of a wait, so that the runner's no-output watchdog
# (120 s) only ever fires on a guest that really hangs
tick() { [ $(($1 % 100)) = 99 ] && echo "# still waiting for $2: attaches $(attaches), $(status cpus) CPUs, state $(state)"; }
settle() {
	i=0; while [ "$(attaches)" -lt $1 ] && [ $i -lt 300 ]; do sleep 0.1; tick $i "attach $1"; i=$((i + 1)); done
	wait_state enabled 30
}
cycle=0
for cpus in 1 3 "4 5" 7 2 1 "6 7" 5 3 2; do
	cycle=$((cycle + 1))
	n=$(attaches)
	for c in $cpus; do echo 0 >/sys/devices/system/cpu/cpu$c/online; done
	settle $((n + 1))
	off="$(status cpus) CPUs"
	n=$(attaches)
	for c in $cpus; do echo 1 >/sys/devices/system/cpu/cpu$c/online; done
	settle $((n + 1))
	echo "# cycle $cycle: offline $cpus -> $off, online -> $(status cpus) CPUs, state $(state)"
done
# faster than a restart: the next hotplug lands while the last restart is loading
n=$(attaches)
for i in 1 2 3 4 5 6 7 8 9 10; do
	c=$((i % 3 * 2 + 3))
	echo 0 >/sys/devices/system/cpu/cpu$c/online
	echo 1 >/sys/devices/system/cpu/cpu$c/online
done
echo "# fast cycles issued: attaches $(attaches), state $(state)"
settle $((n + 1))
i=0; while [ "$(status cpus)" != 8 ] && [ $i -lt 300 ]; do sleep 0.1; tick $i "8 CPUs"; i=$((i + 1)); done
wait_state enabled 30
echo "# fast cycles: $(( $(attaches) - n )) attaches, state $(state)"
touch /tmp/stop
i=0; while [ ! -e /tmp/hb.done ] && [ $i -lt 600 ]; do sleep 0.1; tick $i "the workload"; i=$((i + 1)); done
R=$(status restarts)
echo "# $R restarts logged, $(attaches) attaches"
check restarts-logged "$R restarts" [ "$R" -ge 20 ]
check restart-reason "$(grep -m1 restart /tmp/hc.log)" grep -q "CPU hotplug" /tmp/hc.log
check workload-finished "$(cat /tmp/hb.err 2>/dev/null)" sh -c '[ -e /tmp/hb.done ] && [ ! -s /tmp/hb.err ]'
check final-topology "$(view)" [ "$(view)" = "8 CPUs, 1 LLCs, 4 cores, 1 nodes" ]
check still-enabled "state=$(state)" [ "$(state)" = enabled ]
check same-loader "pid $PID0" kill -0 $PID0
check set-survives-restarts "$(scx_sis --set 2>&1)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE IDLE_CORE IDLE_SMT NO_RECENT_USED SIS_UTIL NO_IDLE_KICK NO_SIS_AVG_CPU NO_SIS_PROP$"'
stop_sis
check exit-0 "exit $SIS_RC: $(tail -3 /tmp/hc.log)" [ "$SIS_RC" = 0 ]
check no-ejection "$(grep -i 'stall\|error' /tmp/hc.log | head -2)" sh -c '! grep -qi "stall\|error" /tmp/hc.log'
check no-runtime-error "$(dmesg | grep -A1 'runtime error' | head -3)" sh -c '! dmesg | grep -q "runtime error\|non-existent DSQ"'
