# SPDX-License-Identifier: GPL-2.0-only
# demo.sh SECS [SCX_SIS ARGS...]: what scx_sis is for, in about a minute. A schbench-like
# load on about half the CPUs (2 message threads wake their workers over pipes; each
# worker runs 100 us and replies), busy loops on CPUs 0 and 2, and a task that sleeps
# 2 ms at a time with its prev on CPU 0 (so each of its wakeups must search) leave idle
# cores and idle siblings in play. scx_sis
# prints its stats line every second; halfway `scx_sis --set NO_IDLE_CORE` switches the
# idle-core search off on the running scheduler, at the end it is switched back on, and
# a before/after table of the figures that moved closes the demo.
. /tests/lib.sh
SECS=${1:-30}; shift
HALF=$((SECS / 2))
N=$(nproc)
W=$((N / 4)); [ $W -lt 1 ] && W=1
scx_sis --stats 1 --quality-comm sis- "$@" &
SIS_PID=$!
i=0; while [ "$(state)" != enabled ] && [ $i -lt 600 ]; do
	kill -0 $SIS_PID 2>/dev/null || { wait $SIS_PID; exit $?; }; sleep 0.1; i=$((i + 1)); done
# the stats socket comes up just after the attach, the status file just after it
i=0; while [ "$(status pid)" != $SIS_PID ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
# half NAME: HALF seconds of the load, scx_sis's per-second JSON recorded beside the line
half() {
	scx_sis --monitor 1 --json >/tmp/$1.json 2>/tmp/$1.err & MON=$!
	timeout $HALF sis-probe wake 1000000 2000 0 >/dev/null & WAKE=$!
	sis-probe msg 2 $W $HALF 100 >/tmp/$1.msg
	wait $WAKE
	kill $MON; wait $MON 2>/dev/null
	[ -s /tmp/$1.json ] || echo "demo: no stats recorded in the $1 half: $(cat /tmp/$1.err)"
}
sis-probe spin 0 & S0=$!; sis-probe spin 2 & S2=$!
echo "demo: first half: default features; $((2 * W)) workers and 2 message threads, busy loops on CPUs 0 and 2, a sleeper on CPU 0; $N CPUs"
half before
echo "demo: scx_sis --set NO_IDLE_CORE -> $(scx_sis --set NO_IDLE_CORE 2>&1)"
echo "demo: second half: NO_IDLE_CORE (select_idle_cpu looks for idle CPUs, not idle cores)"
half after
echo "demo: scx_sis --set IDLE_CORE -> $(scx_sis --set IDLE_CORE 2>&1)"
kill $S0 $S2
kill -INT $SIS_PID; wait $SIS_PID; RC=$?
# sum NAME FIELD: a counter summed over the half's intervals
sum() { grep -o "\"$2\":[0-9]*" /tmp/$1.json | cut -d: -f2 | awk '{s += $1} END {print s + 0}'; }
probe() { tr ' ' '\n' </tmp/$1.msg | grep "^$2=" | cut -d= -f2; }
row() { # row LABEL BEFORE AFTER
	printf 'demo: %-38s %14s %14s\n' "$1" "$2" "$3"
}
share() { awk -v a="$2" -v n="$(sum $1 select_cpu)" 'BEGIN { printf "%.1f", n ? 100 * a / n : 0 }'; }
per1k() { awk -v a="$(sum $1 $2)" -v n="$(sum $1 q_wakeups)" 'BEGIN { printf "%.0f", n ? 1000 * a / n : 0 }'; }
tpr() { echo $(($(sum $1 target) + $(sum $1 prev) + $(sum $1 recent))); }
echo "demo: summary (wakeups from scx_sis's counters, latency as the workers saw it)"
row "" IDLE_CORE NO_IDLE_CORE
row "wakeups searched (select_cpu)" "$(sum before select_cpu)" "$(sum after select_cpu)"
row "% target/prev/recent (idle, taken)" "$(share before $(tpr before))" "$(share after $(tpr after))"
for s in idle_core idle_smt idle_cpu fallback; do
	row "% placed by $s" "$(share before $(sum before $s))" "$(share after $(sum after $s))"
done
row "missed an idle core /1000 (sis-*)" "$(per1k before q_missed_core)" "$(per1k after q_missed_core)"
row "missed an idle CPU /1000 (sis-*)" "$(per1k before q_missed_cpu)" "$(per1k after q_missed_cpu)"
row "worker wakeup latency p50 us" "$(probe before probe_p50_us)" "$(probe after probe_p50_us)"
row "worker wakeup latency p99 us" "$(probe before probe_p99_us)" "$(probe after probe_p99_us)"
row "rounds per second" "$(probe before rounds_per_s)" "$(probe after rounds_per_s)"
echo "demo: how to read it: with IDLE_CORE a wakeup that must search lands on a wholly idle"
echo "demo:   core; with NO_IDLE_CORE it takes the first idle CPU, often a busy core's sibling."
echo "demo:   Most wakeups never search (target/prev idle), so the steps' shares say how much"
echo "demo:   a feature can matter. Under TCG the latencies are emulated: compare, do not quote."
echo "demo: next: cargo xtask bench placement,wakeup --sched eevdf,sis,sis:NO_IDLE_CORE"
echo "demo:   (every figure with n and spread), or scx_sis --list-features for what else to switch."
echo "demo: scx_sis exit $RC, sched_ext $(state)"
exit $RC
