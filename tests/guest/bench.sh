# SPDX-License-Identifier: GPL-2.0-only
# bench.sh RUNS SECS SCHEDS SCHEDULE: the guest half of `cargo xtask bench`, or on a
# sched_ext host its native half (then it restores what it changed however it ends).
# SCHEDS: LABEL=SPEC,... with SPEC eevdf, eevdf:NO_X+Y (the kernel's own features, set
# in /sys/kernel/debug/sched/features for the run and restored after), sis, sis:NO_X+Y,
# sis@N[:NO_X+Y] (another build, configuration N of the host's list counted from 0,
# staged as scx_sis@N), or a peer scheduler's binary. SCHEDULE: the host's seeded
# order, one scheduler start per entry, "RUN LABEL=SPEC SUITE LOAD,LOAD;..."; run 0 is
# the discarded warm-up.
# Every figure is one line
#   bench: suite=S sched=LABEL run=R load=L metric=value ...   (bench-warmup: for run 0)
# and scx_sis's own per-second JSON during a measurement is one `bench-mon:` line each.
T=$(cd "$(dirname "$0")" && pwd)
. "$T/lib.sh"
RUNS=$1 SECS=$2 SCHEDS=$(echo "$3" | tr , ' ') SCHEDULE=$4
N=$(nproc)
KF=/sys/kernel/debug/sched/features
ip link set lo up
MOUNTED= SPEC= STATSON= TBSRV= HOGS= MON=
# whatever ends the bench (the end, Ctrl-C, a kill, a fatal error): no scheduler of
# ours left loaded, the kernel's features as found, every helper gone (children of a
# script ignore SIGINT, so each is killed here), debugfs as found
cleanup() {
	[ -n "$SPEC" ] && stop_sched "$SPEC" >/dev/null 2>&1
	for p in $STATSON $TBSRV $HOGS $MON; do kill "$p" 2>/dev/null; done
	[ -n "$MOUNTED" ] && umount /sys/kernel/debug 2>/dev/null
}
trap 'echo "bench-interrupted: restoring"; cleanup; exit 130' INT TERM
grep -qs ' /sys/kernel/debug ' /proc/mounts || { mount -t debugfs none /sys/kernel/debug && MOUNTED=1; }
# the kernel's own features as found: every EEVDF figure is read against these
echo "bench-kfeatures: $(cat $KF 2>/dev/null || echo unreadable)"
# kfeat_ok NAME: the kernel has scheduler feature NAME (with or without NO_)
kfeat_ok() { tr ' ' '\n' <$KF | grep -qx -e "$1" -e "NO_$1"; }
for e in $SCHEDS; do
	spec=${e#*=}
	case $spec in eevdf:*)
		for f in $(echo "${spec#eevdf:}" | tr + ' '); do
			kfeat_ok "${f#NO_}" && continue
			echo "bench-fatal: unknown kernel scheduler feature '$f' in $spec (kernel $(uname -r) has: $(cat $KF))"
			cleanup
			exit 1
		done ;;
	esac
done
tbench_srv >/dev/null 2>&1 &
TBSRV=$!
sleep 1

# set_kfeats SPEC: write eevdf:F1+F2's features, remembering how to undo each
set_kfeats() {
	KUNDO=""
	for f in $(echo "${1#eevdf:}" | tr + ' '); do
		name=${f#NO_}
		if tr ' ' '\n' <$KF | grep -qx "$name"; then KUNDO="$KUNDO $name"; else KUNDO="$KUNDO NO_$name"; fi
		echo "$f" >$KF || return 1
	done
}
restore_kfeats() { for f in $KUNDO; do echo "$f" >$KF; done; KUNDO=""; }

# start_sched SPEC SUITE: load the configuration; eevdf means none loaded
start_sched() {
	case $1 in
	eevdf) [ "$(state)" = disabled ] ;;
	eevdf:*) [ "$(state)" = disabled ] && set_kfeats "$1" ;;
	sis*)
		# sis@N[:NO_X+Y]: another build, staged by the host as scx_sis@N
		local s=$1 b
		SIS_BIN=scx_sis
		case $s in sis@*) b=${s%%:*}; SIS_BIN=scx_$b; s=sis${s#"$b"} ;; esac
		# latency and throughput are timed without the classification's extra work,
		# unless the spec names QUALITY (sis:QUALITY, sis:NO_X+QUALITY), which puts
		# it on for the bench's workers in every suite, so its cost can be measured
		f=+${s#sis}+; f=$(echo "$f" | tr : +)
		q=--no-quality
		case $f in *+QUALITY+*) q=--quality-comm; f=$(echo "$f" | sed 's/+QUALITY+/+/') ;; esac
		[ "$2" = placement ] && q=--quality-comm
		f=$(echo "$f" | sed 's/^+*//; s/+*$//' | tr + ,)
		set -- "$1" "$2" -f "$f" $q
		[ "$q" = --quality-comm ] && set -- "$@" sis-worker
		shift 2
		# the statistics are on for every configuration alike (statson) or for none
		start_sis /tmp/sched.log --no-bpf-stats "$@" ;;
	*)
		"$1" >/tmp/sched.log 2>&1 &
		SIS_PID=$!
		wait_state enabled 60 ;;
	esac
}
stop_sched() {
	case $1 in
	eevdf) return 0 ;;
	eevdf:*) restore_kfeats; return 0 ;;
	esac
	kill -INT "$SIS_PID" 2>/dev/null
	wait "$SIS_PID" 2>/dev/null
	wait_state disabled 20
	# its programs are freed after the unregistration: gone before the next scheduler's
	# first snapshot, or bpf_delta would subtract their counts from that one's
	i=0
	while [ $i -lt 100 ] && ! sis-probe bpfstats | grep -q ' progs=0 '; do sleep 0.1; i=$((i + 1)); done
}
is_eevdf() { case $1 in eevdf | eevdf:*) return 0 ;; esac; return 1; }
# emit SUITE CONF RUN LOAD KEY=VALUE...
# emit SUITE CONF RUN LOAD FIELDS...: a figure, unless the scheduler was ejected meanwhile
emit() {
	s=$1 c=$2 r=$3 l=$4; shift 4
	if ! is_eevdf "$SPEC" && [ "$(state)" != enabled ]; then
		echo "bench-error: suite=$s sched=$c run=$r load=$l: scheduler ejected, figure dropped: $(grep EXIT /tmp/sched.log | tail -1)"
		return
	fi
	# a restart of scx_sis leaves the kernel's own scheduler running meanwhile; a CPU
	# hotplug (handled in place) changes the machine under the figure
	case $SPEC in sis*) if [ "$(status attaches)" != "$ATT0" ]; then
		echo "bench-error: suite=$s sched=$c run=$r load=$l: scx_sis restarted during the measurement (attaches $ATT0 -> $(status attaches)): part of it ran on the kernel's own scheduler, figure dropped"
		return
	elif [ "$(status hotplugs)" != "$HP0" ]; then
		echo "bench-error: suite=$s sched=$c run=$r load=$l: a CPU went off- or online during the measurement (hotplugs $HP0 -> $(status hotplugs)), figure dropped"
		return
	fi ;; esac
	if [ "$r" = 0 ]; then echo "bench-warmup: suite=$s sched=$c run=$r load=$l $*"; else echo "bench: suite=$s sched=$c run=$r load=$l $*"; fi
}
# monitor_start: scx_sis's per-second JSON while a measurement runs. Every other
# configuration gets a stand-in with the same cadence (a process that wakes once a
# second, reads a /proc file and writes a line), so no configuration runs beside an
# extra client the others lack.
monitor_start() {
	rm -f /tmp/mon.json
	case $SPEC in
	sis*) "$SIS_BIN" --monitor 1 --json >/tmp/mon.json 2>/dev/null & MON=$! ;;
	*) (while sleep 1; do cat /proc/stat; done >/dev/null 2>&1) & MON=$! ;;
	esac
}
monitor_stop() { # SUITE CONF RUN LOAD
	kill $MON 2>/dev/null; wait $MON 2>/dev/null; MON=
	[ "$3" = 0 ] || [ ! -s /tmp/mon.json ] && return
	grep '^{' /tmp/mon.json | sed "s/^/bench-mon: suite=$1 sched=$2 run=$3 load=$4 /"
}
# bpf_snap / bpf_delta: the kernel's statistics of the loaded sched_ext scheduler's
# programs (whichever runs, peers included: its struct_ops programs and any program
# sharing a map with them, sis-probe bpfstats) around one measurement; bpf_delta prints the
# ns of all of them per select_cpu call, select_cpu's own ns per call, the calls, and
# their ns as a share of the CPUs' time meanwhile (bpf_cpu_pct)
bpf_snap() { B0=; is_eevdf "$SPEC" || { B0=$(sis-probe bpfstats); BT0=$(uptime_s); }; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
bpf_field() { echo "$2" | tr ' ' '\n' | grep "^$1=" | cut -d= -f2; }
bpf_delta() {
	[ -n "$B0" ] || return 0
	B1=$(sis-probe bpfstats)
	dns=$(($(bpf_field ns "$B1") - $(bpf_field ns "$B0")))
	dsel=$(($(bpf_field select_runs "$B1") - $(bpf_field select_runs "$B0")))
	dsns=$(($(bpf_field select_ns "$B1") - $(bpf_field select_ns "$B0")))
	# another scheduler's programs in one snapshot only: no figure rather than a wrong one
	[ "$dsel" -gt 0 ] && [ "$(bpf_field progs "$B0")" = "$(bpf_field progs "$B1")" ] || return 0
	# where the time goes: each op's ns and runs (per 1000) per select_cpu call
	ops=""
	for o in $(echo "$B1" | tr ' ' '\n' | sed -n 's/^op\.\([a-z_]*\)=.*/\1/p'); do
		v1=$(bpf_field "op.$o" "$B1") v0=$(bpf_field "op.$o" "$B0")
		ns0=${v0%/*} runs0=${v0#*/}
		ops="$ops op_${o}_ns=$(((${v1%/*} - ${ns0:-0}) / dsel)) op_${o}_runs_per_1k=$(((${v1#*/} - ${runs0:-0}) * 1000 / dsel))"
	done
	pct=$(awk -v ns=$dns -v a="$BT0" -v b="$(uptime_s)" -v n=$N 'BEGIN { if (b > a) printf "%.2f", ns / 1e7 / ((b - a) * n) }')
	echo "bpf_all_ns_per_select=$((dns / dsel)) bpf_select_ns=$((dsns / dsel)) bpf_select_calls=$dsel bpf_cpu_pct=${pct:-nan}$ops"
}
# cpu_snap: /proc/stat's idle jiffies (iowait included), all jiffies (user to steal),
# context switches; /proc/interrupts' rescheduling and function call IPIs, local timer
# interrupts and irq_work interrupts, summed over the CPUs (x86's RES, CAL, LOC and IWI
# rows: 0 where they are absent)
cpu_snap() {
	awk '/^cpu / {t = 0; for (i = 2; i <= 9; i++) t += $i; print $5 + $6, t}
		/^ctxt/ {print $2}' /proc/stat | tr '\n' ' '
	awk '$1 == "RES:" || $1 == "CAL:" {for (i = 2; $i ~ /^[0-9]+$/; i++) ipi += $i}
		$1 == "LOC:" {for (i = 2; $i ~ /^[0-9]+$/; i++) loc += $i}
		$1 == "IWI:" {for (i = 2; $i ~ /^[0-9]+$/; i++) iwi += $i}
		END {print ipi + 0, loc + 0, iwi + 0}' /proc/interrupts | tr '\n' ' '
}
# tbench_run CLIENTS: tbench against the local tbench_srv: mb_s, and what the CPUs did
# in its timed phase (from "releasing clients" to the first "cleanup" line; /proc/stat,
# /proc/interrupts): the share of their time idle, and per MB at the MB/s tbench
# reports the context switches, the IPIs (rescheduling and function call), the local
# timer interrupts and the irq_work interrupts
tbench_run() {
	tbench -t "$SECS" -c /usr/share/dbench/client.txt "$1" 127.0.0.1 2>&1 | {
		s0= s1= v=nan
		while read -r l; do
			case $l in
			"releasing clients"*) s0=$(cpu_snap) t0=$(uptime_s) ;;
			*cleanup*) [ -n "$s1" ] || { s1=$(cpu_snap) t1=$(uptime_s); } ;;
			Throughput*) v=$(echo "$l" | awk '{print $2}') ;;
			esac
		done
		[ -n "$s0" ] && [ -n "$s1" ] || { echo "mb_s=$v"; exit; }
		# $1-$6 the first snapshot, $7 its time, $8-$13 the second, $14 its time, $15 MB/s
		echo "$s0 $t0 $s1 $t1 $v" | awk '{
			printf "mb_s=%s", $15
			if ($9 > $2) printf " idle_pct=%.2f", 100 * ($8 - $1) / ($9 - $2)
			mb = $15 * ($14 - $7)
			if ($15 != "nan" && mb > 0)
				printf " sw_per_mb=%.1f ipi_per_mb=%.2f timer_per_mb=%.2f iwi_per_mb=%.2f",
					($10 - $3) / mb, ($11 - $4) / mb, ($12 - $5) / mb, ($13 - $6) / mb
			print ""
		}'
	}
}
# msg WORKERS: the schbench-like load (2 message threads, 1 below 2 workers); prints
# its key=values
msg() {
	m=2; [ "$1" -lt 2 ] && m=1
	p=$(sis-probe msg $m $(($1 / m)) "$SECS" 100)
	echo "${p#msg: }"
}
# msg_run WORKERS: the same load under the tracer; prints the tracer's and the load's key=values
msg_run() {
	sis-probe trace start 8192
	p=$(msg "$1")
	t=$(sis-probe trace stop sis-worker)
	echo "${t#trace: comm=sis-worker } $p"
}

# others CPU: every CPU but CPU, as a list for taskset
others() { seq 0 $((N - 1)) | grep -vx "$1" | paste -sd, -; }
# hogs_off: the load's helpers in HOGS killed and reaped
hogs_off() {
	[ -n "$HOGS" ] && kill $HOGS && wait $HOGS 2>/dev/null
	HOGS=""
}
# ran_ns PID: ns the task has run (its schedstat)
ran_ns() { cut -d' ' -f1 /proc/"$1"/schedstat; }
measure() { # SUITE CONF RUN LOAD
	case $1 in
	tbench)
		# scx_sis's counters say how far each search went (CPUs scanned, BPF ns)
		monitor_start
		bpf_snap
		v=$(tbench_run "$4")
		b=$(bpf_delta)
		monitor_stop "$@"
		emit "$@" $v $b ;;
	tbench-bare)
		# the same load bare: no BPF statistics, no monitor for any configuration
		emit "$@" $(tbench_run "$4") ;;
	wakeup)
		monitor_start
		bpf_snap
		r=$(msg_run "$4")
		b=$(bpf_delta)
		monitor_stop "$@"
		emit "$@" $r $b
		if command -v schbench >/dev/null; then
			emit "$@" $(schbench -m 2 -t $(($4 / 2 + 1)) -r "$SECS" 2>&1 | awk -f "$T/schbench.awk")
		fi ;;
	latency)
		# the same load bare: no tracer, no BPF statistics, no monitor for any configuration
		emit "$@" $(msg "$4") ;;
	hackbench)
		v=$(hackbench -g "$4" -l $((SECS * 20)) 2>&1 | awk '/^Time:/ {print $2}')
		emit "$@" secs=${v:-nan} ;;
	pipe)
		v=$(perf bench sched pipe -l $((SECS * 2000)) 2>&1 | awk '/usecs\/op/ {print $1}')
		emit "$@" usecs_op=${v:-nan} ;;
	nice)
		# weights on a CPU that is not the busiest: nice -20 and nice 0 hogs pinned to
		# CPU N/2, hackbench -g LOAD switching on the others
		taskset -c "$(others $((N / 2)))" hackbench -g "$4" -l 100000000 >/dev/null 2>&1 & HB=$!
		sis-probe spin $((N / 2)) -20 & A=$!
		sis-probe spin $((N / 2)) 0 & B=$!
		HOGS="$HB $A $B"
		sleep 1
		a0=$(ran_ns $A) b0=$(ran_ns $B) t0=$(uptime_s)
		sleep "$SECS"
		a=$(($(ran_ns $A) - a0)) b=$(($(ran_ns $B) - b0)) t1=$(uptime_s)
		hogs_off
		# hackbench's groups are its children: gone with it before the next figure
		killall hackbench 2>/dev/null
		emit "$@" $(awk -v a=$a -v b=$b -v t0=$t0 -v t1=$t1 'BEGIN {
			if (b > 0) printf "nice_ratio=%.2f ", a / b
			if (t1 > t0) printf "pair_ms_per_s=%.1f", (a + b) / 1e6 / (t1 - t0)
		}') ;;
	sched-idle)
		# a SCHED_IDLE hog pinned to each of the first LOAD CPUs and a normal napper on
		# CPU 0: fair.c preempts the hog at each wakeup (wakeup_preempt_fair())
		for c in $(seq 0 $(($4 - 1))); do sis-probe hog $c idle 0 & HOGS="$HOGS $!"; done
		sleep 1
		p=$(sis-probe nap 0 normal 0 $((SECS * 300)) 2000)
		hogs_off
		emit "$@" hogs=$4 $(echo "$p" | sed -n 's/^nap: n=[0-9]* p50=\([0-9-]*\) p90=\([0-9-]*\) max=\([0-9-]*\) us$/nap_p50_us=\1 nap_p90_us=\2 nap_max_us=\3/p') ;;
	affine)
		# WA_WEIGHT's load: a wakee allowed on CPUs 1 and N/2+1, asleep on the second
		# (prev), where LOAD hogs run; woken by a task pinned to CPU 1. wake_affine_weight()
		# sends it to the lighter CPU; without it, it waits behind the hogs.
		for i in $(seq 1 "$4"); do sis-probe spin $((N / 2 + 1)) & HOGS="$HOGS $!"; done
		sleep 1
		p=$(sis-probe weightwake $((SECS * 60)) 1 $((N / 2 + 1)) 300)
		hogs_off
		emit "$@" hogs=$4 $(echo "$p" | awk '/^weightwake:/ {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			if (f["n"] > 0)
				printf "on_waker_per_1k=%d wake_p50_us=%s wake_p90_us=%s", f["on_w"] * 1000 / f["n"], f["p50"], f["p90"]
		}') ;;
	cost)
		is_eevdf "$SPEC" && { echo "bench-skip: suite=cost sched=$2: EEVDF runs no BPF"; return; }
		HOGS=""
		for i in $(seq 1 "$4"); do sis-probe spin -1 & HOGS="$HOGS $!"; done
		sleep 1
		monitor_start
		bpf_snap
		p=$(sis-probe msg 2 2 "$SECS" 100)
		b=$(bpf_delta)
		monitor_stop "$@"
		hogs_off
		emit "$@" hogs=$4 ${p#msg: } $b ;;
	placement)
		monitor_start
		r=$(msg_run "$4")
		monitor_stop "$@"
		emit "$@" $r ;;
	esac
}

echo "$SCHEDULE" | tr ';' '\n' >/tmp/schedule
# fd 3 holds the schedule, so no benchmark reading stdin can eat it
while read -r r e suite loads <&3; do
	[ -n "$e" ] || continue
	c=${e%%=*} SPEC=${e#*=}
	# the kernel's BPF statistics cost every BPF program a clock read: on only for the
	# suites that report them, and then for every configuration alike (held on by
	# `sis-probe statson`; kernel.bpf_stats_enabled is never written)
	[ -n "$STATSON" ] && { kill "$STATSON" 2>/dev/null; wait "$STATSON" 2>/dev/null; STATSON=; }
	[ "$suite" = cost ] && is_eevdf "$SPEC" && { echo "bench-skip: suite=cost sched=$c: EEVDF runs no BPF"; continue; }
	# the helper's own shell must not run our trap: a kill that lands before its exec
	# would otherwise run cleanup there (and kill tbench_srv under the next tbench)
	case $suite in cost | wakeup | tbench) (trap - INT TERM; exec sis-probe statson >/tmp/statson.log 2>&1) & STATSON=$! ;; esac
	if ! start_sched "$SPEC" "$suite"; then
		echo "bench-error: suite=$suite sched=$c run=$r: could not start: $(tail -2 /tmp/sched.log | tr '\n' ' ')"
		stop_sched "$SPEC"
		continue
	fi
	for l in $(echo "$loads" | tr , ' '); do
		ATT0=$(status attaches) HP0=$(status hotplugs)
		measure "$suite" "$c" "$r" "$l" </dev/null
		if ! is_eevdf "$SPEC" && [ "$(state)" != enabled ]; then
			echo "bench-error: suite=$suite sched=$c run=$r load=$l: scheduler ejected: $(grep EXIT /tmp/sched.log | tail -1)"
			break
		fi
	done
	stop_sched "$SPEC"
done 3</tmp/schedule
SPEC=
echo "bench-kfeatures-after: $(cat $KF 2>/dev/null || echo unreadable)"
cleanup
echo "bench-done: runs=$RUNS secs=$SECS cpus=$N kernel=$(uname -r)"
