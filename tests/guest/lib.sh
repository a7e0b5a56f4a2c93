# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers for guest test scripts: each check prints `ok NAME` or `not ok NAME: why`.
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; }
check() { # check NAME WHY CMD...
	local name=$1 why=$2
	shift 2
	if "$@"; then ok "$name"; else fail "$name" "$why"; fi
}
# HRTICK as this kernel's sched/features has it (off before 7.1): scx_sis's default
KHRTICK=$(tr ' ' '\n' 2>/dev/null </sys/kernel/debug/sched/features | grep -x 'NO_HRTICK\|HRTICK')
export KHRTICK
# NI_RANDOM and NI_RATE as this kernel has them: off where it predates them (6.16, 6.17;
# NI_RATE 7.1); without debugfs, scx_sis's table (both on)
KNI="NI_RANDOM NI_RATE"
if [ -r /sys/kernel/debug/sched/features ]; then
	KNI=$(for f in NI_RANDOM NI_RATE; do
		tr ' ' '\n' </sys/kernel/debug/sched/features | grep -x "NO_$f\|$f" || echo "NO_$f"
	done | tr '\n' ' ')
	KNI=${KNI% }
fi
export KNI
state() { cat /sys/kernel/sched_ext/state 2>/dev/null || echo missing; }
# scx_dump: sched_ext's debug dump (SysRq-D), which goes to its tracepoint alone
scx_dump() {
	local ev=/sys/kernel/tracing/events/sched_ext/sched_ext_dump/enable
	echo >/sys/kernel/tracing/trace
	echo 1 >$ev && echo D >/proc/sysrq-trigger
	echo 0 >$ev
	sed -n 's/^.*sched_ext_dump: //p' /sys/kernel/tracing/trace
}
# node_of CPU: the NUMA node CPU belongs to (empty without NUMA)
node_of() { basename "$(ls -d /sys/devices/system/cpu/cpu"$1"/node* 2>/dev/null | head -1)" 2>/dev/null | tr -dc 0-9; }
# l3_of CPU: the CPUs of CPU's last-level cache, as sysfs lists them
l3_of() { cat /sys/devices/system/cpu/cpu"$1"/cache/index3/shared_cpu_list; }
# wait_state STATE SECS: poll the sched_ext state
wait_state() {
	i=0
	while [ "$(state)" != "$1" ] && [ $i -lt $(($2 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(state)" = "$1" ]
}
# start_sis LOG ARGS...: start scx_sis (or $SIS_BIN) in the background, wait until
# enabled (a line every 20 s while the verifier works: under TCG beside busy CPUs it
# can take a minute)
start_sis() {
	log=$1; shift
	"${SIS_BIN:-scx_sis}" --totals-json "$@" >"$log" 2>&1 &
	SIS_PID=$!
	local w
	for w in 20 40 60; do
		wait_state enabled 20 && break
		[ $w = 60 ] && return 1
		echo "# scx_sis not enabled after $w s (state $(state))"
	done
	# the loader writes its status file just after attaching
	i=0
	while [ "$(status pid)" != "$SIS_PID" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(status pid)" = "$SIS_PID" ]
}
# stop_sis: SIGINT, wait; sets SIS_RC
stop_sis() {
	kill -INT "$SIS_PID" 2>/dev/null
	wait "$SIS_PID"
	SIS_RC=$?
}
# count FILE CPUS...: the wakeups a probe's `cpu C N` lines put on these CPUs
count() {
	local f=$1 n=0 c
	shift
	for c in "$@"; do n=$((n + $(awk -v c="$c" '$1=="cpu" && $2==c {print $3}' "$f" | head -1) + 0)); done
	echo $n
}
# total FIELD LOG: a number from the loader's exit line `totals {JSON}` (--totals-json)
total() { grep -o 'totals {.*' "$2" | tail -1 | grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
# totals LOG FIELD...: `field=value ...` of those fields, for a test's comment line
totals() { local f=$1 k; shift; for k in "$@"; do printf '%s=%s ' "$k" "$(total "$k" "$f")"; done; }
# cpu_of PID: CPU=the CPU the task last ran on (field 39 of its stat). No fork: with
# every vCPU busy each fork of a reader waits its turn behind the busy ones.
cpu_of() { CPU=; read -r l <"/proc/$1/stat" || return 1; set -- $l; shift 38; CPU=$1; }
# spin_on CPU...: a busy loop pinned to each CPU (their PIDs in SPINS), back once each
# is on its CPU (at most 5 s each: under TCG beside busy vCPUs an exec can take seconds)
spin_on() {
	local c i
	SPINS=""
	for c in "$@"; do
		sis-probe spin "$c" &
		SPINS="$SPINS $!"
		i=0
		while cpu_of $! && [ "$CPU" != "$c" ] && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	done
}
# watched SECS CMD...: run CMD; one still going after SECS s gets sched_ext's dump
# printed on stderr (as # lines) while it waits, and is then killed. For a loop that
# takes seconds: a task left waiting shows in the dump.
watched() {
	local secs=$1 pid wd rc
	shift
	"$@" &
	pid=$!
	(
		sleep "$secs"
		kill -0 $pid 2>/dev/null || exit 0
		echo "# '$*' not done in $secs s; sched_ext's dump:"
		scx_dump | sed 's/^/# /'
		kill -9 $pid
	) >&2 &
	wd=$!
	wait $pid
	rc=$?
	kill $wd 2>/dev/null
	return $rc
}
# counted LOG CMD...: run CMD while a monitor of the running scx_sis (on CPU 0, or on
# COUNT_CPU) reads it every 0.5 s; LOG gets one `totals {...}` line with each counter
# summed over the monitor's intervals (from before CMD to after it), read by `total`
counted() {
	local log=$1 mon i=0
	shift
	taskset -c "${COUNT_CPU:-0}" scx_sis --monitor 0.5 --json >"$log.mon" 2>&1 &
	mon=$!
	# the first interval starts when the monitor connects, so before CMD
	while [ ! -s "$log.mon" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	"$@"
	sleep 1
	kill $mon; wait $mon 2>/dev/null
	awk '/^\{/ { if (steps == "" && match($0, /"steps":"[^"]*"/)) steps = substr($0, RSTART, RLENGTH)
		while (match($0, /"[a-z_0-9]+":[0-9]+[,}]/)) {
			kv = substr($0, RSTART + 1, RLENGTH - 2); $0 = substr($0, RSTART + RLENGTH)
			split(kv, a, "\":"); if (!(a[1] in s)) k[n++] = a[1]; s[a[1]] += a[2] } }
		END { printf "totals {%s", steps; sep = steps == "" ? "" : ","
			for (i = 0; i < n; i++) { printf "%s\"%s\":%d", sep, k[i], s[k[i]]; sep = "," }
			print "}" }' "$log.mon" >"$log"
}
# identity LOG: the placement steps (the totals name them) sum to select_cpu exactly
identity() {
	local sum=0 f calls steps
	steps=$(grep -o 'totals {.*' "$1" | tail -1 | grep -o '"steps":"[^"]*"' | cut -d'"' -f4)
	[ -n "$steps" ] || { echo "# $1: no step list in the totals"; return 1; }
	for f in $steps; do
		sum=$((sum + $(total $f "$1")))
	done
	calls=$(total select_cpu "$1")
	echo "# $1: select_cpu=$calls, steps sum=$sum"
	[ -n "$calls" ] && [ "$calls" -gt 0 ] && [ "$sum" = "$calls" ]
}
# status FIELD: a field of the running loader's /run/scx_sis/status.json (attaches,
# restarts, features, pid, ...; topology fields are cpus, llcs, cores, nodes, smt)
status() { grep -o "\"$1\":[^,}]*" /run/scx_sis/status.json 2>/dev/null | head -1 | cut -d: -f2 | tr -d '"'; }
# view: the topology the loader attached with, as `N CPUs, N LLCs, N cores, N nodes`
view() { echo "$(status cpus) CPUs, $(status llcs) LLCs, $(status cores) cores, $(status nodes) nodes"; }
# plan N: how many checks this script reports; the runner fails a script that reports fewer
plan() { echo "plan $1"; }
