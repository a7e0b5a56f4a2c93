# SPDX-License-Identifier: GPL-2.0-only
# suite: topology-1:4:2 1:4:2 newest 300 -- 1 4 2
# suite: topology-2:2:2-numa 2:2:2 newest 300 numa -- 2 2 2 numa
# suite: topology-1:4:1-exit7 1:4:1 newest 300 rc=7 -- 1 4 1; exit 7
# topology.sh SOCKETS CORES THREADS [numa]: the guest sees the topology qemu was asked for.
. /tests/lib.sh
plan 16
S=$1 C=$2 T=$3 NUMA=$4
N=$((S * C * T))
check nproc "nproc=$(nproc), want $N" [ "$(nproc)" = "$N" ]
bad=""
cpu=0
while [ $cpu -lt $N ]; do
	sib=$(cat /sys/devices/system/cpu/cpu$cpu/topology/thread_siblings_list)
	if [ "$T" = 1 ]; then want=$cpu; else
		first=$((cpu / T * T)); want="$first-$((first + T - 1))"; [ "$T" = 2 ] || true; fi
	[ "$sib" = "$want" ] || bad="$bad cpu$cpu:$sib(want $want)"
	cpu=$((cpu + 1))
done
echo "# siblings: $(cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list | sort -u | tr '\n' ' ')"
check siblings "$bad" [ -z "$bad" ]
nodes=$(ls -d /sys/devices/system/node/node* | wc -l)
if [ "$NUMA" = numa ]; then want=$S; else want=1; fi
check numa-nodes "$nodes nodes, want $want" [ "$nodes" = "$want" ]
check sched_ext-present "no /sys/kernel/sched_ext" [ -e /sys/kernel/sched_ext/state ]
check kconfig "no /boot/config-$(uname -r)" grep -q CONFIG_SCHED_CLASS_EXT=y /boot/config-$(uname -r)
check loopback "lo is not up" sh -c 'ip link show lo | grep -q UP'
for w in tbench tbench_srv hackbench stress-ng perf scx_sis; do
	check "has-$w" "$w not on PATH" sh -c "command -v $w >/dev/null"
done
check dbench-client "no client.txt" [ -s /usr/share/dbench/client.txt ]
check bpffs "bpffs not mounted" sh -c 'grep -q " /sys/fs/bpf bpf" /proc/mounts'
LLCS=1; [ "$NUMA" = numa ] && LLCS=$S
NODES=1; [ "$NUMA" = numa ] && NODES=$S
start_sis /tmp/tv.log || fail start "$(tail -3 /tmp/tv.log)"
view=$(view)
stop_sis
check scx_sis-view "scx_sis '$view', want $N CPUs, $LLCS LLCs, $((S * C)) cores, $NODES nodes" \
	[ "$view" = "$N CPUs, $LLCS LLCs, $((S * C)) cores, $NODES nodes" ]
check debugfs "debugfs not mounted" sh -c 'grep -q " /sys/kernel/debug debugfs" /proc/mounts'
