# SPDX-License-Identifier: GPL-2.0-only
# suite: overload 1:4:2 newest 300
# overload.sh: placement does not freeze under overload. tbench at 4x the CPUs, and the
# migrations of its tasks (set_task_cpu(), every class: se.nr_migrations in
# /proc/PID/sched) per 1000 context switches over a window after a warm-up, under EEVDF
# and under scx_sis in the same guest: scx_sis must move its tasks at no less than a
# quarter of the kernel's rate, and its busy balance must move at least 100 tasks.
. /tests/lib.sh
plan 5
N=$(nproc) C=$(($(nproc) * 4)) WARM=3 WIN=6
tbench_srv >/dev/null 2>&1 &
SRV=$!
sleep 1
# the first tbench of a boot can fail ("failed to create barrier semaphore"): a warm-up
tbench -t 2 -c /usr/share/dbench/client.txt 2 127.0.0.1 >/dev/null 2>&1
# snap FILE: pid, migrations and switches of each tbench client and server process
# (one cat over every /proc/PID/sched, which skips the tasks gone meanwhile: a process
# per task would take seconds in TCG), read as SCHED_FIFO: at normal priority the
# reader waits behind 4x the CPUs in tasks, 20 s or more a read. A file opens with
# "comm (pid, #threads: n)".
snap() {
	sis-probe rt sh -c 'cat /proc/[0-9]*/sched 2>/dev/null | awk "$1"' snap \
		'/ \([0-9]+, #threads: / { keep = ($1 == "tbench" || $1 == "tbench_srv"); pid = $2 }
		keep && /^se.nr_migrations/ { m[pid] = $3 } keep && /^nr_switches/ { s[pid] = $3 }
		END { for (p in s) print p, m[p], s[p] }' >"$1"
}
# rate: migrations per 1000 switches in a WIN s window of tbench with C clients, over
# the processes alive at both ends; then the migrations, switches and processes. tbench
# runs long enough to outlast the window, and is killed after it.
rate() {
	tbench -t 60 -c /usr/share/dbench/client.txt $C 127.0.0.1 >/tmp/tb.txt 2>&1 &
	sleep $WARM
	snap /tmp/a.txt
	sleep $WIN
	snap /tmp/b.txt
	for p in $(awk '{ print $1 }' /tmp/b.txt | tr -dc '0-9\n'); do
		[ "$p" = "$SRV" ] || kill "$p" 2>/dev/null
	done
	wait
	awk 'NR == FNR { m[$1] = $2; s[$1] = $3; next }
		($1 in m) { dm += $2 - m[$1]; ds += $3 - s[$1]; n++ }
		END { printf "%d %d %d %d\n", dm * 1000 / (ds > 0 ? ds : 1), dm, ds, n }' /tmp/a.txt /tmp/b.txt
}
set -- $(rate)
ke=${1:-0} kmig=${2:-0} ksw=${3:-0} kn=${4:-0}
start_sis /tmp/o.log || fail start "$(tail -3 /tmp/o.log)"
set -- $(rate)
se=${1:-0} smig=${2:-0} ssw=${3:-0} sn=${4:-0}
stop_sis
kill $SRV 2>/dev/null
lbs=$(total lb_smt /tmp/o.log) lbl=$(total lb_llc /tmp/o.log)
moved=$((${lbs:-0} + ${lbl:-0}))
echo "# tbench $C clients on $N CPUs, migrations per 1000 switches over $WIN s: EEVDF $ke ($kmig of $ksw, $kn tasks), scx_sis $se ($smig of $ssw, $sn tasks)"
echo "# scx_sis: $(totals /tmp/o.log select_cpu migrations fallback pulls steals tick_kicks lb_runs lb_smt lb_llc lb_hot nohz_kicks lb_active)"
check kernel-moves "EEVDF: $ke migrations per 1000 switches (the premise: > 2)" [ "$ke" -gt 2 ]
check sis-moves "scx_sis: $se per 1000 switches, EEVDF $ke: want at least a quarter" [ $((se * 4)) -ge "$ke" ]
check sis-switched "scx_sis ran tbench: $ssw switches, EEVDF $ksw" [ "$ssw" -gt $((ksw / 4)) ]
check busy-balance-moved "scx_sis's busy balance moved $moved tasks, want >= 100" [ "$moved" -ge 100 ]
check exit-0 "exit $SIS_RC: $(tail -2 /tmp/o.log)" [ "$SIS_RC" = 0 ]
