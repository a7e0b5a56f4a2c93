# SPDX-License-Identifier: GPL-2.0-only
# suite: topology-1:4:2 1:4:2 newest 300 -- 1:4:2
# suite: topology-2:2:2-numa 2:2:2 newest 300 numa -- 2:2:2 numa
# suite: topology-1:4:1-exit7 1:4:1 newest 300 rc=7 -- 1:4:1; exit 7
# suite: topology-1:2:4:2 1:2:4:2 every 300 -- 1:2:4:2
# suite: topology-2:2:2:2-numa 2:2:2:2 newest 300 numa -- 2:2:2:2 numa
# topology.sh S:C:T|S:L:C:T [numa]: the guest sees the topology qemu was asked for: CPUs,
# SMT siblings, one L3 per LLC (L per socket, C cores of T threads each), NUMA nodes.
. /tests/lib.sh
plan 17
IFS=: read -r S L C T <<EOF_T
$1
EOF_T
[ -z "$T" ] && { T=$C; C=$L; L=1; }
NUMA=$2
N=$((S * L * C * T))
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
# one L3 per LLC: CPUs numbered LLC after LLC, C * T each
bad=""
cpu=0
while [ $cpu -lt $N ]; do
	first=$((cpu / (C * T) * C * T))
	want="$first-$((first + C * T - 1))"
	[ $((C * T)) = 1 ] && want=$cpu
	l3=$(cat /sys/devices/system/cpu/cpu$cpu/cache/index3/shared_cpu_list)
	[ "$l3" = "$want" ] || bad="$bad cpu$cpu:$l3(want $want)"
	cpu=$((cpu + 1))
done
echo "# L3s: $(cat /sys/devices/system/cpu/cpu*/cache/index3/shared_cpu_list | sort -u | tr '\n' ' ')"
check llcs "$bad" [ -z "$bad" ]
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
LLCS=$((S * L))
NODES=1; [ "$NUMA" = numa ] && NODES=$S
start_sis /tmp/tv.log || fail start "$(tail -3 /tmp/tv.log)"
view=$(view)
stop_sis
check scx_sis-view "scx_sis '$view', want $N CPUs, $LLCS LLCs, $((S * L * C)) cores, $NODES nodes" \
	[ "$view" = "$N CPUs, $LLCS LLCs, $((S * L * C)) cores, $NODES nodes" ]
check debugfs "debugfs not mounted" sh -c 'grep -q " /sys/kernel/debug debugfs" /proc/mounts'
