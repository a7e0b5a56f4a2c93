# SPDX-License-Identifier: GPL-2.0-only
# suite: hotplug 1:4:2 every 300
# hotplug.sh: a CPU going offline and online makes the kernel ask scx_sis for a
# restart; the loader restarts by itself, logs why, and loads the new topology.
. /tests/lib.sh
plan 10
start_sis /tmp/h.log || fail start "$(tail -3 /tmp/h.log)"
PID0=$SIS_PID
scx_sis --set NO_IDLE_SMT >/dev/null
attaches() { status attaches; }
wait_attaches() { i=0; while [ "$(attaches)" -lt $1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done; }
echo 0 >/sys/devices/system/cpu/cpu3/online
wait_attaches 2
wait_state enabled 30
check offline-restarted "attaches $(status attaches), restarts $(status restarts): $(tail -4 /tmp/h.log)" [ "$(status attaches)" -ge 2 -a "$(status restarts)" -ge 1 ]
check offline-topology "$(view)" [ "$(status cpus)" = 7 ]
check offline-enabled "state=$(state)" [ "$(state)" = enabled ]
hackbench -g 2 -l 50 >/tmp/hb.log 2>&1
check offline-hackbench "$(tail -2 /tmp/hb.log)" grep -q Time /tmp/hb.log
echo 1 >/sys/devices/system/cpu/cpu3/online
wait_attaches 3
wait_state enabled 30
check online-restarted "attaches $(status attaches): $(tail -4 /tmp/h.log)" [ "$(status attaches)" -ge 3 ]
check online-topology "$(view)" [ "$(status cpus)" = 8 ]
check set-survives-restart "$(scx_sis --set 2>&1)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE IDLE_CORE NO_IDLE_SMT RECENT_USED SIS_UTIL NO_IDLE_KICK NO_SIS_AVG_CPU NO_SIS_PROP$"'
check same-loader "pid $PID0" kill -0 $PID0
stop_sis
check exit-0 "exit $SIS_RC: $(tail -3 /tmp/h.log)" [ "$SIS_RC" = 0 ]
check disabled-after "state=$(state)" wait_state disabled 5
grep -i "restart\|hotplug" /tmp/h.log | sed 's/^/| /' | head -4
