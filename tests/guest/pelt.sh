# SPDX-License-Identifier: GPL-2.0-only
# suite: pelt 1:4:2 newest 400
# pelt.sh: PELT and the wake_affine() parts built on it. A periodic task's load, runnable
# and util under scx_sis (`scx_sis --pelt`) against the kernel's own figures for the
# same task under EEVDF (/proc/PID/sched); WA_WEIGHT sends a wakee from a CPU with two
# hogs to its waker's lighter CPU, as the kernel does, and prev keeps it without it;
# wake_wide() turns a 1:N wakeup pattern away from the waker and leaves a 1:1 pair be.
. /tests/lib.sh
plan 11
# signals READER [NICE]: mean load, runnable and util read (every 0.1 s, by READER, one
# process on CPU 0) over 2 s of a task running 1 ms of every 3.33 ms on CPU 3, after 2 s
# of warm-up; then the share of those 2 s it ran, x 1024 (its schedstat): what util
# should track. Both readers start no process per read: one that does disturbs the task
# just before each read, and util weighs the last few ms most (under host load the
# kernel's figure read by `scx_sis --help; cat` came out 1.24-1.27x its share, by `cat`
# 0.90-0.93x).
signals() {
	sis-probe duty 3 1000 3333 9 ${2:-0} >/tmp/duty.pid & D=$!
	sleep 2
	P=$(cat /tmp/duty.pid)
	$1 "$P" >/tmp/sig.txt & R=$!
	sleep 0.5
	n0=$(grep -c '^se.avg.util_avg ' /tmp/sig.txt)
	t0=$(cut -d' ' -f1 /proc/$P/schedstat) w0=$(cut -d' ' -f1 /proc/uptime | tr -d .)
	sleep 2
	t1=$(cut -d' ' -f1 /proc/$P/schedstat) w1=$(cut -d' ' -f1 /proc/uptime | tr -d .)
	n1=$(grep -c '^se.avg.util_avg ' /tmp/sig.txt)
	kill $R; wait $R 2>/dev/null
	kill $D; wait $D 2>/dev/null
	echo "$(mean se.avg.load_avg) $(mean se.avg.runnable_avg) $(mean se.avg.util_avg)" \
		"$(((t1 - t0) * 1024 / ((w1 - w0) * 10000000)))"
}
# mean FIELD: of the reads between n0 and n1 in /tmp/sig.txt
mean() {
	grep "^$1 " /tmp/sig.txt | sed -n "$((n0 + 1)),${n1}p" |
		awk '{ s += $3; n++ } END { print n ? int(s / n) : 0 }'
}
proc_sched() { taskset -c 0 sis-probe every /proc/"$1"/sched 100; }
sis_pelt() { taskset -c 0 scx_sis --pelt "$1" --monitor 0.1; }
# near A B: within 5 % of B, plus 10
near() { d=$(($1 - $2)); [ ${d#-} -le $(($2 * 5 / 100 + 10)) ]; }

set -- $(signals proc_sched)
kl=$1 kr=$2 ku=$3 kd=$4
set -- $(signals proc_sched 5)
kl5=$1 kr5=$2
start_sis /tmp/p1.log || fail start "scx_sis did not start"
set -- $(signals sis_pelt)
sl=$1 sr=$2 su=$3 sd=$4
set -- $(signals sis_pelt 5)
sl5=$1 sr5=$2
# --pelt with --monitor reads until the task exits, then exits 0, also when nothing
# reaps it (its parent here is a `sleep 9` that never waits): a zombie's storage stays
rm -f /tmp/zpid
sh -c 'sleep 2 & echo $! >/tmp/zpid; exec sleep 9' &
while [ ! -s /tmp/zpid ]; do sleep 0.05; done
timeout 6 taskset -c 0 scx_sis --pelt $(cat /tmp/zpid) --monitor 0.2 >/tmp/pm.txt 2>&1
pm=$? pn=$(grep -c '^se.avg.util_avg ' /tmp/pm.txt)
stop_sis
check pelt-monitor-ends "exit $pm after $pn reads: $(tail -1 /tmp/pm.txt)" [ $pm = 0 -a $pn -ge 3 ]
echo "# 1 ms of 3.33 ms on CPU 3: EEVDF load $kl runnable $kr util $ku (ran $kd/1024); scx_sis load $sl runnable $sr util $su (ran $sd/1024)"
# each scheduler's util against the share the task ran under it (the BPF ops run in the
# task's time, so it runs longer under scx_sis in TCG): the two ratios within 15 %
ratio=0
[ "${sd:-0}" -gt 0 ] && [ "${ku:-0}" -gt 0 ] && ratio=$((su * kd * 100 / (sd * ku)))
# (a task that could not keep its duty, running all the time on a starved guest, would
# pass whatever the accounting: each must have run 20-80 %)
check pelt-util "util/ran: scx_sis $su/$sd, kernel $ku/$kd ($ratio %)" \
	sh -c "[ $ratio -ge 85 -a $ratio -le 115 ] && [ ${sd:-0} -ge 205 -a ${sd:-0} -le 820 ] && [ ${kd:-0} -ge 205 -a ${kd:-0} -le 820 ]"
check pelt-load "nice 0, never waiting: load $sl = util $su (kernel: $kl, $ku)" near "$sl" "$su"
check pelt-runnable "runnable $sr = util $su (kernel: $kr, $ku)" near "$sr" "$su"
# nice 5 (weight 335): load is runnable at a third of the weight, under both schedulers
check pelt-weight-nice5 "load x 1024 / 335 against runnable: scx_sis $sl5 / $sr5, kernel $kl5 / $kr5" \
	sh -c "near() { d=\$((\$1 - \$2)); [ \${d#-} -le \$((\$2 * 5 / 100 + 10)) ]; }; near $((sl5 * 1024 / 335)) $sr5 && near $((kl5 * 1024 / 335)) $kr5"

# weight RUN: where the wakee of `weightwake` ran; W = CPU 1, E = CPU 5 with two hogs
R=300 W=1 E=5
weight() {
	sis-probe spin $E & H1=$!
	sis-probe spin $E & H2=$!
	sleep 1
	sis-probe weightwake $R $W $E 300 >/tmp/ww-$1.txt
	kill $H1 $H2; wait $H1 $H2 2>/dev/null
	cat /tmp/ww-$1.txt
}
on() { grep -o " $1:[0-9]*" "$2" | cut -d: -f2 | grep . || echo 0; }
weight eevdf
start_sis /tmp/p2.log || fail start "scx_sis did not start"
weight sis
stop_sis
start_sis /tmp/p3.log -f NO_WA_WEIGHT || fail start "scx_sis did not start"
weight sis-noweight
stop_sis
kw=$(on $W /tmp/ww-eevdf.txt) sw=$(on $W /tmp/ww-sis.txt) nw=$(on $W /tmp/ww-sis-noweight.txt)
m2=$(total migrations /tmp/p2.log) m3=$(total migrations /tmp/p3.log) x3=$(total wa_weight /tmp/p3.log)
echo "# of $R wakeups: run on the waker's CPU under EEVDF $kw, scx_sis $sw ($(totals /tmp/p2.log wake_affine wa_weight migrations)), NO_WA_WEIGHT $nw ($(totals /tmp/p3.log wake_affine wa_weight migrations): a newidle pull)"
check wa-weight-kernel "EEVDF ran $kw of $R on the waker's CPU (the scenario's premise)" [ "$kw" -ge $((R * 7 / 10)) ]
check wa-weight-lighter "scx_sis ran $sw of $R on the waker's CPU, wa_weight $(total wa_weight /tmp/p2.log), migrations $m2" \
	sh -c "[ $sw -ge $((R * 7 / 10)) ] && [ $(total wa_weight /tmp/p2.log) -ge $((R / 2)) ] && [ $m2 -ge $((R / 2)) ]"
check wa-weight-off-keeps-prev "NO_WA_WEIGHT: wa_weight $x3, select_cpu moved $m3 of $R (want 0, and a quarter of $m2 at most)" \
	[ "$x3" = 0 -a "$m2" -gt 0 -a $((m3 * 4)) -le "$m2" ]

# wake_wide(): a master waking 32 workers in turn, each waking a side thread and the master
start_sis /tmp/p4.log || fail start "scx_sis did not start"
sis-probe fan 32 3
stop_sis
start_sis /tmp/p5.log || fail start "scx_sis did not start"
sis-probe pingpong 20000
stop_sis
rw=$(total wake_wide /tmp/p4.log) rs=$(total select_cpu /tmp/p4.log)
pw=$(total wake_wide /tmp/p5.log) ps=$(total select_cpu /tmp/p5.log)
echo "# wake_wide: fan of 32 $rw of $rs wakeups; pingpong $pw of $ps"
check wake-wide-fan "1:32 fan: wake_wide $rw of $rs (want >= 30 %)" [ "$rw" -ge $((rs * 3 / 10)) ]
check wake-wide-pair "pingpong: wake_wide $pw of $ps (want <= 1 %)" [ "$pw" -le $((ps / 100)) ]
# after thousands of moves, the CPUs' sums count only what still runs: no weight leaked
leaks=""
for f in /tmp/p2.log /tmp/p3.log /tmp/p4.log /tmp/p5.log; do
	n=$(total pelt_nr_runnable $f)
	[ -n "$n" ] && [ "$n" -le 6 ] || leaks="$leaks $f:${n:-none}"
done
check pelt-no-leak "runnable tasks in the CPUs' sums at exit (want <= 6):$leaks $(for f in /tmp/p2.log /tmp/p3.log /tmp/p4.log /tmp/p5.log; do total pelt_nr_runnable $f; done | tr '\n' ' ')" [ -z "$leaks" ]
