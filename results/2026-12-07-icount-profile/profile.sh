#!/bin/sh
# The call-graph profile of results/2026-12-07-icount-profile (not a test): tbench with
# CLIENTS clients (default 8) under EEVDF, scx_sis and scx_cosmos, two rounds. Run as
# tests/guest/profile.sh:
#   cargo xtask vm --no-build --icount --with /usr/bin/perf --with PATH/TO/scx_cosmos \
#     --kernel 7.3.4+deb13-cloud-amd64 --timeout 3500 --idle-timeout 900 -- sh /tests/profile.sh [CLIENTS]
. /tests/lib.sh
CLIENTS=${1:-8}
tbench_srv >/dev/null 2>&1 &
sleep 1
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
run() { # run NAME ROUND
	perf record -q -a -g -e cpu-clock -F 999 -o /tmp/p.data -- \
		tbench -t 3 -c /usr/share/dbench/client.txt $CLIENTS 127.0.0.1 >/tmp/tb.out 2>&1
	echo "=== $1 round $2 $(grep -o 'Throughput [0-9.]* MB/sec' /tmp/tb.out)"
	perf report -i /tmp/p.data --stdio --header-only 2>/dev/null | grep -i "sample\|event"
	perf report -i /tmp/p.data --stdio --children --sort sym -g none --percent-limit 0.05 2>/dev/null |
		grep -E "Samples|__schedule|schedule$|try_to_wake_up|ttwu|finish_task_switch|_raw_spin|do_idle|cpu_startup_entry|pick_|put_prev|set_next|enqueue|dequeue|balance|scx|bpf_|select_task_rq|irq_work|sysvec|hrtimer|tick|switch_|update_curr|__x64_sys|sk_wait_data|sock_def_readable|wake_up|resched|ext|dispatch|consume|do_syscall_64"
}
for r in 1 2; do
	for s in eevdf sis cosmos; do
		case $s in
		sis) start_sis /tmp/sis.log || echo "sis failed" ;;
		cosmos) scx_cosmos >/tmp/cos.log 2>&1 & CP=$!; wait_state enabled 60 ;;
		esac
		sleep 1
		run $s $r
		case $s in
		sis) stop_sis ;;
		cosmos) kill -INT $CP; wait $CP ;;
		esac
		wait_state disabled 30
	done
done
