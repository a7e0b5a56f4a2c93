# SPDX-License-Identifier: GPL-2.0-only
# soak.sh MINUTES [eevdf]: mixed stress-ng, hackbench and tbench at twice the CPU count, a
# CPU hotplug cycle every minute and, every other minute, a burst of five back-to-back
# offline/online cycles; prints one `soak:` summary line, with the time scx_sis was not
# the enabled scheduler (the state sampled every half second). With `eevdf` the same
# load runs on the kernel's own scheduler (a baseline for RCU stall reports).
. /tests/lib.sh
M=${1:-20}
SCHED=${2:-sis}
N=$(nproc)
if [ "$SCHED" = sis ]; then
	start_sis /tmp/soak.log --stats 60 || fail start "$(tail -3 /tmp/soak.log)"
	PID=$SIS_PID
else
	sleep 86400 & # stands in for the loader so the RSS sampling below has a PID
	PID=$!
	: >/tmp/soak.log
fi
end=$(($(date +%s) + M * 60))
stress-ng --cpu $N --fork 2 --affinity 2 --timeout $((M * 60))s --quiet >/tmp/sng.log 2>&1 &
( while [ "$(date +%s)" -lt $end ]; do hackbench -g 2 -l 100 >/dev/null 2>&1; done ) &
tbench_srv >/dev/null 2>&1 &
( while [ "$(date +%s)" -lt $end ]; do tbench -t 30 -c /usr/share/dbench/client.txt $((N * 2)) 127.0.0.1 >/dev/null 2>&1; done ) &
( while [ "$(date +%s)" -lt $end ]; do state; sleep 0.5; done >/tmp/soak.states ) &
rss_first=0 rss_peak=0 minute=0
while [ "$(date +%s)" -lt $end ]; do
	for i in 1 2 3 4 5 6; do
		r=$(awk '/VmRSS/ {print $2}' /proc/$PID/status 2>/dev/null)
		[ -n "$r" ] && [ "$r" -gt $rss_peak ] && rss_peak=$r
		[ $minute = 0 ] && [ -n "$r" ] && [ "$r" -gt $rss_first ] && rss_first=$r
		[ $i = 3 ] && echo 0 >/sys/devices/system/cpu/cpu$((minute % (N - 1) + 1))/online
		if [ $i = 5 ] && [ $((minute % 2)) = 1 ]; then
			f=$(((minute + 3) % (N - 1) + 1))
			for k in 1 2 3 4 5; do
				echo 0 >/sys/devices/system/cpu/cpu$f/online 2>/dev/null
				echo 1 >/sys/devices/system/cpu/cpu$f/online 2>/dev/null
			done
		fi
		sleep 10
	done
	echo 1 >/sys/devices/system/cpu/cpu$((minute % (N - 1) + 1))/online
	minute=$((minute + 1))
	echo "# minute $minute: state $(state), rss ${r} kB, $(grep -c 'scheduler attached' /tmp/soak.log) attaches"
done
for c in $(seq 1 $((N - 1))); do echo 1 >/sys/devices/system/cpu/cpu$c/online 2>/dev/null; done
sleep 5
alive=$(kill -0 $PID 2>/dev/null && echo yes || echo no)
if [ "$SCHED" = sis ]; then stop_sis; else kill $PID; SIS_RC=0; fi
stalls=$(dmesg | grep -c "rcu: INFO: .* self-detected stall\|rcu: INFO: .* detected stalls")
ej=$(grep "EXIT:" /tmp/soak.log | grep -vc "unregistered from user space\|hotplug\|going o")
restarts=$(grep -c "asked for a restart" /tmp/soak.log)
gap=$(grep -vc "^enabled$" /tmp/soak.states)
echo "soak: kernel $(uname -r) sched $SCHED minutes $M rcu_stalls $stalls ejections $ej restarts $restarts not_enabled_s $((gap / 2)) loader_alive $alive exit $SIS_RC rss_first_min_kb $rss_first rss_peak_kb $rss_peak"
grep "totals" /tmp/soak.log | tail -1 | sed 's/^/soak-totals: /'
grep "EXIT:" /tmp/soak.log | sort | uniq -c | sed 's/^/# /'
# What the kernel said around an RCU stall or an ejection: the CPU, the task, the stack.
dmesg | grep -A25 "rcu: INFO" | head -80 | sed 's/^/# dmesg: /'
grep -v "asked for a restart\|hotplug" /tmp/soak.log | grep -B2 -A30 "EXIT:" | head -60 | sed 's/^/# sis: /'
runtime=$(dmesg | grep -c "disabled (runtime error)")
check soak-no-ejection "$ej ejections, $runtime runtime errors" [ "$ej" = 0 -a "$runtime" = 0 ]
check soak-loader-alive "alive=$alive exit=$SIS_RC" [ "$alive" = yes -a "$SIS_RC" = 0 ]
check soak-rss-flat "first minute $rss_first kB, peak $rss_peak kB" [ $rss_peak -le $((rss_first + rss_first / 4 + 4096)) ]
