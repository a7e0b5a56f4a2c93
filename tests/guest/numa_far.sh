# SPDX-License-Identifier: GPL-2.0-only
# suite: numa-far-2:2:2 2:2:2 newest 300 numa numadist=40 -- 40
# suite: numa-near-2:2:2 2:2:2 newest 300 numa -- 20
# numa_far.sh DIST: two nodes DIST apart (CPUs 0-3, 4-7). sd_init() clears SD_WAKE_AFFINE
# on a NUMA level beyond node_reclaim_distance (30; 32 on AMD Zen), so a waker on node 0
# never pulls a wakee whose prev is on node 1 there. The kernel's own domain flags say
# which case this is; scx_sis's view must say the same, and a WF_SYNC pair (waker
# pinned to CPU 0, wakee allowed 0 and 4, sleeping on 4) must land as under EEVDF.
# Far apart, the fork domain ends at the node too: with CPUs 1-3 idle and node 1 all
# idle, 2 forks from CPU 0 stay on node 0 (a search of both nodes takes node 1).
. /tests/lib.sh
D=$1 W=0 E=4 R=200
# these guests' CPUs are no AMD Zen: node_reclaim_distance 30
want=near
[ "$D" -gt 30 ] && want=far
if [ $want = far ]; then plan 9; else plan 7; fi
dist=$(awk '{print $2}' /sys/devices/system/node/node0/distance)
check slit "node 0 to node 1: $dist, want $D" [ "$dist" = "$D" ]
# the kernel's NUMA level of CPU 0, and whether it has SD_WAKE_AFFINE (the domains
# are in debugfs once sched/verbose is on)
echo Y >/sys/kernel/debug/sched/verbose
dom=""
for d in /sys/kernel/debug/sched/domains/cpu0/domain*; do
	[ "$(cat $d/name 2>/dev/null)" = NUMA ] && dom=$d
done
kflags=$(cat $dom/flags 2>/dev/null)
kaff=near; echo "$kflags" | grep -qw SD_WAKE_AFFINE || kaff=far
echo "# kernel: NUMA domain ${dom##*/}: $kaff ($kflags)"
check kernel-numa-domain "CPU 0's NUMA domain '${dom##*/}': $kaff, want $want" [ -n "$dom" -a "$kaff" = $want ]
# at CPU FILE: how many rounds the probe's histogram in FILE puts on CPU
at() { grep -o " $1:[0-9]*" "$2" | head -1 | cut -d: -f2 | grep . || echo 0; }
# node0 FILE: children of sis-probe forkburst in FILE that first ran on node 0
node0() { awk '$1 == "cpu" && $2 < 4 { n += $3 } END { print n + 0 }' "$1"; }
sis-probe syncwake $R $W $E home >/tmp/e.txt
sis-probe forkburst 2 $W >/tmp/ef.txt
start_sis /tmp/n.log || fail start "$(tail -3 /tmp/n.log)"
pairs=$(status far_node_pairs) rd=$(status node_reclaim_distance)
sis-probe syncwake $R $W $E home >/tmp/s.txt
sis-probe forkburst 2 $W >/tmp/sf.txt
stop_sis
echo "# 2 forks from CPU $W, first run on node 0: EEVDF $(node0 /tmp/ef.txt), scx_sis $(node0 /tmp/sf.txt)"
sview=near; [ "${pairs:-0}" -gt 0 ] && sview=far
echo "# scx_sis: node_reclaim_distance $rd, $pairs far node pairs: $sview; $(totals /tmp/n.log select_cpu wake_affine wake_far target prev idlest fallback fork_loaded pulls steals steals_remote)"
check view-as-kernel "scx_sis $sview (far pairs $pairs, reclaim distance $rd), kernel $kaff" [ "$sview" = "$kaff" ]
ew=$(at $W /tmp/e.txt) sw=$(at $W /tmp/s.txt) far=$(total wake_far /tmp/n.log)
echo "# wakee on W (CPU $W) of $R: EEVDF $ew, scx_sis $sw"
if [ $want = near ]; then
	# the sync rule pulls the wakee to the waker's CPU about every other round (llc.sh)
	check affine-eevdf "W $ew of $R" [ "$ew" -ge $((R / 4)) ]
	check affine-sis-as-eevdf "W $sw of $R, EEVDF $ew" sh -c "[ $sw -ge $((R / 4)) ] && [ $((sw - ew)) -le $((R / 8)) ] && [ $((ew - sw)) -le $((R / 8)) ]"
	check far-not-counted "wake_far=$far" [ "${far:-1}" = 0 ]
else
	check prev-eevdf "W $ew of $R" [ "$ew" -le $((R / 8)) ]
	check prev-sis-as-eevdf "W $sw of $R, EEVDF $ew" [ "$sw" -le $((R / 8)) ]
	check far-counted "wake_far=$far, want >= $((R / 2))" [ "${far:-0}" -ge $((R / 2)) ]
	check fork-local-eevdf "$(node0 /tmp/ef.txt) of 2 on node 0: $(tr '\n' ' ' </tmp/ef.txt)" [ "$(node0 /tmp/ef.txt)" = 2 ]
	check fork-local-sis "$(node0 /tmp/sf.txt) of 2 on node 0: $(tr '\n' ' ' </tmp/sf.txt)" [ "$(node0 /tmp/sf.txt)" = 2 ]
fi
check exit-0 "exit $SIS_RC: $(tail -2 /tmp/n.log)" [ "$SIS_RC" = 0 ]
