# SPDX-License-Identifier: GPL-2.0-only
# suite: numa-imb-2:2:2:2 2:2:2:2 newest 300 numa
# numa_imb.sh: adjust_numa_imbalance() on the fork path. A fork whose node has idle CPUs
# stays there, although the other node has more, while the node would run at most
# imb_numa_nr tasks and the difference in idle CPUs is at most 2 (NUMA_IMBALANCE_MIN).
# imb_numa_nr is the node's LLCs, or an eighth of the node when it is one LLC; at least
# 1. So one fork from a running parent on CPU 0 (2 tasks on node 0, 1 idle CPU fewer)
# stays on node 0 where imb_numa_nr >= 2 and leaves it where it is 1; of two forks one
# leaves where imb_numa_nr <= 2 (the second at 3 tasks, or the first where it is 1; the
# second then ties on idle CPUs and stays), neither where it is 3 or more. One more
# running task on node 0 (a kworker) flips a single fork, so EEVDF and scx_sis are each
# checked against the formula for most rounds, not round by round against each other.
. /tests/lib.sh
ROUNDS=8
plan 8
# expand LIST: the CPUs of a cpulist (0-3,8-11), one a line
expand() { echo "$1" | tr ',' '\n' | awk -F- '{ for (i = $1; i <= ($2 == "" ? $1 : $2); i++) print i }'; }
NODE0=$(expand "$(cat /sys/devices/system/node/node0/cpulist)")
nw=$(echo "$NODE0" | wc -l)
lw=$(expand "$(cat /sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list)" | wc -l)
imb=$((nw / lw)); [ "$imb" = 1 ] && imb=$((nw >> 3)); [ "$imb" -lt 1 ] && imb=1
# one fork: 1 + 1 tasks on node 0 against imb_numa_nr; two: 1 + 2 for the second
want1=0; [ 2 -le "$imb" ] && want1=$ROUNDS
want2=$ROUNDS; [ 3 -le "$imb" ] && want2=$((2 * ROUNDS))
# node0 FILE: children of forkburst rounds in FILE that first ran on node 0
node0() { echo "$NODE0" | awk 'NR == FNR { on[$1] = 1; next } $1 == "cpu" && ($2 in on) { n += $3 }
	END { print n + 0 }' - "$1"; }
# children FILE: every child of the rounds in FILE, wherever it first ran
children() { awk '$1 == "cpu" { n += $3 } END { print n + 0 }' "$1"; }
# rounds N TAG: ROUNDS fork bursts of N from CPU 0, one histogram after another
rounds() { : >/tmp/$2.txt; for r in $(seq $ROUNDS); do sis-probe forkburst "$1" 0 >>/tmp/$2.txt; sleep 0.2; done; }
rounds 1 e1
rounds 2 e2
start_sis /tmp/n.log || fail start "$(tail -3 /tmp/n.log)"
rounds 1 s1
rounds 2 s2
stop_sis
e1=$(node0 /tmp/e1.txt) s1=$(node0 /tmp/s1.txt) e2=$(node0 /tmp/e2.txt) s2=$(node0 /tmp/s2.txt)
n1="$(children /tmp/e1.txt) $(children /tmp/s1.txt)" n2="$(children /tmp/e2.txt) $(children /tmp/s2.txt)"
kept=$(total fork_numa_local /tmp/n.log)
echo "# node 0: $nw CPUs, LLC $lw CPUs: imb_numa_nr $imb; on node 0 want $want1 of $ROUNDS single forks, $want2 of $((2 * ROUNDS)) in pairs"
echo "# on node 0: one fork EEVDF $e1, scx_sis $s1 of $ROUNDS; two forks EEVDF $e2, scx_sis $s2 of $((2 * ROUNDS)); children seen $n1 $n2; $(totals /tmp/n.log idlest fallback fork_numa_local)"
# most N WANT: N of ROUNDS is on WANT's side of half (WANT is 0 or ROUNDS)
most() { if [ "$2" -gt 0 ]; then [ $(($1 * 2)) -gt $ROUNDS ]; else [ $(($1 * 2)) -lt $ROUNDS ]; fi; }
# near N WANT: N of the 2 * ROUNDS pair forks is within a quarter of them of WANT
near() { local d=$(($1 - $2)); [ "${d#-}" -le $((ROUNDS / 2)) ]; }
check children-ran "children seen: single $n1 (want $ROUNDS each), pairs $n2 (want $((2 * ROUNDS)) each)" \
	[ "$n1 $n2" = "$ROUNDS $ROUNDS $((2 * ROUNDS)) $((2 * ROUNDS))" ]
w1="want $([ "$want1" -gt 0 ] && echo more || echo fewer) than $((ROUNDS / 2)) (imb_numa_nr $imb)"
check one-fork-kernel "EEVDF put $e1 of $ROUNDS on node 0, $w1" most "$e1" "$want1"
check one-fork-sis "scx_sis put $s1 of $ROUNDS on node 0, $w1; EEVDF $e1" most "$s1" "$want1"
w2="want $want2 within $((ROUNDS / 2))"
check two-forks-kernel "EEVDF put $e2 of $((2 * ROUNDS)) pair forks on node 0, $w2" near "$e2" "$want2"
check two-forks-sis "scx_sis put $s2 of $((2 * ROUNDS)) pair forks on node 0, $w2; EEVDF $e2" near "$s2" "$want2"
if [ "$want1" -gt 0 ]; then
	check kept-counted "fork_numa_local $kept, want >= $((ROUNDS - 1))" [ "${kept:-0}" -ge $((ROUNDS - 1)) ]
else
	check kept-counted "fork_numa_local $kept, want <= 1" [ "${kept:-9}" -le 1 ]
fi
check node-split "node 0 ($nw CPUs) is less than the machine ($(nproc))" [ "$nw" -lt "$(nproc)" ]
check exit-0 "exit $SIS_RC: $(tail -2 /tmp/n.log)" [ "$SIS_RC" = 0 ]
