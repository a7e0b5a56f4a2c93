# SPDX-License-Identifier: GPL-2.0-only
# suite: topology-view-2:8:2-numa 2:8:2 newest 600 numa
# suite: topology-view-4:4:2-numa 4:4:2 newest 600 numa
# suite: topology-view-1:16:1 1:16:1 newest 600
# suite: topology-view-1:2:4:2 1:2:4:2 newest 600
# suite: topology-view-2:2:2:2-numa 2:2:2:2 newest 600 numa
# topo_view.sh: scx_sis's view of LLCs, cores and nodes matches sysfs; a full load
# runs without a stall; the search cost at full load is recorded (and bounded); every
# live `--stats 1 --json` interval over the 30 s of full load is printed as `json ...`
# for the runner, which checks that its steps sum to its select_cpu count.
. /tests/lib.sh
plan 5 json
S=/sys/devices/system/cpu
N=$(nproc)
llcs=$(cat $S/cpu*/cache/index3/shared_cpu_list 2>/dev/null | sort -u | wc -l)
[ "$llcs" = 0 ] && llcs=1
cores=$(for c in $S/cpu[0-9]*; do echo "$(cat $c/topology/physical_package_id) $(cat $c/topology/core_id)"; done | sort -u | wc -l)
nodes=$(ls -d /sys/devices/system/node/node* | wc -l)
echo "# sysfs: $N CPUs, $llcs LLCs ($(cat $S/cpu*/cache/index3/shared_cpu_list 2>/dev/null | sort -u | tr '\n' ' ')), $cores cores, $nodes nodes"
start_sis /tmp/t.log --stats 1 --json || fail start "$(tail -3 /tmp/t.log)"
view=$(view)
echo "# scx_sis: $view"
check view-matches-sysfs "scx_sis '$view' vs sysfs $N/$llcs/$cores/$nodes" [ "$view" = "$N CPUs, $llcs LLCs, $cores cores, $nodes nodes" ]
# full load: twice as many CPU hogs as CPUs, plus wakeups to place
stress-ng --cpu $((N * 2)) --timeout 30s --quiet & SNG=$!
# the window opens once every CPU has a hog (a loaded host can take seconds to start 2N)
running() { cut -d' ' -f4 /proc/loadavg | cut -d/ -f1; }
i=0; while [ "$(running)" -le $N ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
echo "# $(running) tasks running after $((i / 10)) s of stress-ng"
sleep 3
# the monitor is a new process among 2N hogs: on a busy host its start alone took over
# 8 s once (an empty window at 12 s, 1 run of 3), so it gets 20 s, stress-ng 30
timeout 20 scx_sis --monitor 4 --json >/tmp/full.json 2>/dev/null
hackbench -g 2 -l 100 >/tmp/hb.log 2>&1
wait $SNG; sng=$?
check full-load-ran "stress-ng exit $sng; $(tail -1 /tmp/hb.log)" sh -c "[ $sng = 0 ] && grep -q Time /tmp/hb.log"
check still-enabled "state=$(state)" [ "$(state)" = enabled ]
stop_sis
grep '^{' /tmp/t.log | sed 's/^/json /'
check no-stall "$(grep -i stall /tmp/t.log)" sh -c '! grep -v "^{" /tmp/t.log | grep -qi "stall\|error"'
last=$(tail -1 /tmp/full.json)
mean=$(echo "$last" | grep -o '"scan_mean":[0-9.e+-]*' | cut -d: -f2)
max=$(echo "$last" | grep -o '"scan_max":[0-9]*' | cut -d: -f2)
cut=$(echo "$last" | grep -o '"sis_util_cut_pct":[0-9.e+-]*' | cut -d: -f2)
echo "# cost at full load: LLC of $((N / llcs)) CPUs, scan mean $mean max $max CPUs per wakeup, SIS_UTIL cut ${cut}% of walks"
check full-load-scan-bounded "scan mean $mean" awk -v m="$mean" 'BEGIN { exit !(m != "" && m < 2.0) }'
