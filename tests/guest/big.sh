# SPDX-License-Identifier: GPL-2.0-only
# suite: big-2:4:4:2-numa 2:4:4:2 newest 600 numa
# suite: big-2:4:4:2-numa-56-online 2:4:4:2 newest 600 numa maxcpus=56 -- 56
# big.sh [ONLINE]: the largest guests the suite boots, 64 CPUs in 8 LLCs on 2 nodes;
# with ONLINE the kernel brings only that many up at boot (maxcpus=), so 8 CPU ids
# are possible but offline when scx_sis loads (qemu 10.0.2's maxcpus gives the
# kernel no hotplug slots: "Allowing N present CPUs plus 0 hotplug CPUs"). scx_sis's
# view matches sysfs, it loads with the possible CPUs sized in, and a wakeup whose
# previous CPU's core is busy lands on a whole idle core of that LLC. With ONLINE, CPU
# 49 (never online before) then comes up: scx_sis stays loaded, learns its place
# from sysfs, and a wakeup whose previous CPU is 49 finds its LLC's idle cores.
. /tests/lib.sh
P=${1:-64}
if [ $P = 64 ]; then plan 6; else plan 8; fi
S=/sys/devices/system/cpu
N=$(nproc)
llcs=$(cat $S/cpu*/cache/index3/shared_cpu_list 2>/dev/null | sort -u | wc -l)
cores=$(for c in $S/cpu[0-9]*; do [ -e $c/topology/core_id ] && echo "$(cat $c/topology/physical_package_id) $(cat $c/topology/core_id)"; done | sort -u | wc -l)
nodes=$(ls -d /sys/devices/system/node/node* | wc -l)
echo "# sysfs: $N CPUs online ($(cat $S/online)), possible $(cat $S/possible), $llcs LLCs, $cores cores, $nodes nodes"
# (the kernel brings up every core's first thread before the second ones, so with
# maxcpus= the offline ids are SMT siblings spread over the last cores)
check possible-online "possible $(cat $S/possible), $N online ($(cat $S/online)), want 0-63 and $P" sh -c "[ \"\$(cat $S/possible)\" = 0-63 ] && [ $N = $P ]"
start_sis /tmp/b.log || fail start "$(tail -3 /tmp/b.log)"
echo "# scx_sis: $(view)"
check view-matches-sysfs "scx_sis '$(view)' vs sysfs $N/$llcs/$cores/$nodes" [ "$(view)" = "$N CPUs, $llcs LLCs, $cores cores, $nodes nodes" ]
llc0=$(cat $S/cpu0/cache/index3/shared_cpu_list)
check llc0 "cpu0's LLC $llc0" [ "$llc0" = 0-7 ]
sis-probe spin 0 & S0=$!
sis-probe spin 1 & S1=$!
sleep 1
sis-probe wake 200 2000 0 >/tmp/w.txt
kill $S0 $S1
n=$(count /tmp/w.txt 2 3 4 5 6 7)
check idle-core-in-llc "$n/200 wakeups on a whole idle core of cpu0's LLC (2-7), want >= 190" [ "$n" -ge 190 ]
if [ $P != 64 ]; then
	echo 1 >$S/cpu49/online
	i=0; while [ "$(status cpus)" != $((P + 1)) ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check cpu49-joined "scx_sis '$(view)', attaches $(status attaches), cpu49's LLC $(cat $S/cpu49/cache/index3/shared_cpu_list)" \
		[ "$(view)" = "$((P + 1)) CPUs, $llcs LLCs, $cores cores, $nodes nodes" -a "$(status attaches)" = 1 ]
	# LLC 48-55 has 48-49 (49 busy) and single-thread cores 50, 52, 54 (idle)
	sis-probe spin 49 & S49=$!
	sleep 1
	sis-probe wake 200 2000 49 >/tmp/w.txt
	kill $S49
	n=$(count /tmp/w.txt 50 52 54)
	check idle-core-from-cpu49 "$n/200 wakeups from prev 49 on the idle cores 50, 52, 54, want >= 190" [ "$n" -ge 190 ]
fi
stop_sis
check exit-0 "exit $SIS_RC: $(tail -3 /tmp/b.log)" [ "$SIS_RC" = 0 ]
check unloaded "state=$(state)" wait_state disabled 10
