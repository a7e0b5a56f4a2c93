# SPDX-License-Identifier: GPL-2.0-only
# suite: reliability 1:4:2 every 500
# reliability.sh: loader death, an RT hog, odd tasks. No watchdog ejection, no lost task.
. /tests/lib.sh
plan 16
N=$(nproc)
ejected() { grep -qi "stall\|EXIT: .*error\|scx_bpf_error\|runnable task" "$1"; }

# Loader death: kill -9 during load -> default scheduler within 1 s; workload finishes
start_sis /tmp/r1.log || fail start "$(tail -3 /tmp/r1.log)"
hackbench -g 2 -l 400 >/tmp/hb1.log 2>&1 & HB=$!
sleep 1
kill -9 $SIS_PID
i=0; while [ "$(state)" != disabled ] && [ $i -lt 20 ]; do sleep 0.05; i=$((i + 1)); done
check kill9-disabled-within-1s "state=$(state) after $((i * 50)) ms" [ "$(state)" = disabled ]
echo "# kill -9: sched_ext disabled after $((i * 50)) ms (polled every 50 ms)"
wait $HB
check kill9-workload-finished "$(tail -2 /tmp/hb1.log)" grep -q Time /tmp/hb1.log
start_sis /tmp/r2.log
check kill9-restart-clean "$(tail -3 /tmp/r2.log)" [ "$(state)" = enabled ]

# An RT hog holds CPU 1 for 30 s while the CPUs run a workload. Before 7.0 no deadline
# server runs sched_ext tasks under RT load (7.0 added ext_server): a task bound to
# CPU 1 (its kworker) then waits out the hog, and a hog longer than the watchdog's
# 10 s ejects any sched_ext scheduler; there the hog holds CPU 1 for 7 s.
H=30
[ -d /sys/kernel/debug/sched/ext_server ] || H=7
sis-probe fifo 1 $H & RT=$!
stress-ng --cpu $N --timeout ${H}s --quiet >/tmp/sng.log 2>&1 & SNG=$!
hb=0 hbf=0; end=$(($(date +%s) + H))
while [ "$(date +%s)" -lt $end ]; do
	if hackbench -g 1 -l 50 >/tmp/hbrt.log 2>&1; then hb=$((hb + 1)); else hbf=$((hbf + 1)); cp /tmp/hbrt.log /tmp/hbrt-failed.log; fi
done
wait $SNG; sng=$?; wait $RT
echo "# RT hog on CPU 1 for $H s ($([ $H = 30 ] && echo "ext_server present" || echo "no ext_server on $(uname -r)")): $hb hackbench runs, $hbf failed, stress-ng exit $sng"
check rt-hog-workload "stress-ng exit $sng, $hb hackbench runs, $hbf failed: $(tail -2 /tmp/hbrt-failed.log 2>/dev/null | tr '\n' ' ')" [ $sng = 0 -a $hb -gt 0 ]
check rt-hog-no-ejection "state=$(state): $(grep -i stall /tmp/r2.log | head -1)" sh -c "[ \"\$(cat /sys/kernel/sched_ext/state)\" = enabled ] && ! grep -qi stall /tmp/r2.log"

# Odd tasks: pinned, affinity changing while queued, thread storm, 5000 sleepers
taskset -c 2 hackbench -g 1 -l 100 >/tmp/pin.log 2>&1
check pinned-hackbench "$(tail -1 /tmp/pin.log)" grep -q Time /tmp/pin.log
sis-probe churn $((N * 2)) 10 >/tmp/churn.log 2>&1
check affinity-churn "$(cat /tmp/churn.log)" grep -q "affinity rounds" /tmp/churn.log
sis-probe forks 20000 >/tmp/forks.log 2>&1
check thread-storm "$(cat /tmp/forks.log)" grep -q "forks: 20000" /tmp/forks.log
stress-ng --fork 4 --timeout 10s --quiet >/tmp/fork.log 2>&1
check fork-storm "exit $?: $(tail -2 /tmp/fork.log)" [ $? = 0 ]
sis-probe sleepers 5000 5 >/tmp/sleep.log 2>&1
check 5000-sleepers "$(cat /tmp/sleep.log)" grep -q "5000 threads woke and exited" /tmp/sleep.log

# nice -20 against nice 19 on one CPU: EEVDF gives -20 nearly all of it (weights
# 88761:15: a request of 19's every ~16 s), and the 5 s starvation rescue still lets 19
# run. Time on CPU and timeslices from schedstat over 10 s: exact, where utime ticks
# round a few ms down to 0.
sis-probe spin 3 -20 & HI=$!
sis-probe spin 3 19 & LO=$!
sleep 2
sst() { cut -d' ' -f"$2" /proc/"$1"/schedstat; }
hi0=$(sst $HI 1) lo0=$(sst $LO 1) lor0=$(sst $LO 3)
sleep 10
hi=$((($(sst $HI 1) - hi0) / 1000000)) lo=$((($(sst $LO 1) - lo0) / 1000000)) lor=$(($(sst $LO 3) - lor0))
kill $HI $LO
echo "# 10 s on CPU 3: nice -20 ran $hi ms, nice 19 ran $lo ms in $lor timeslices"
check nice-weights "nice -20 $hi ms, nice 19 $lo ms" [ $hi -gt $((lo * 5 + 50)) ]
check nice-19-not-starved "nice 19 ran $lor times" [ $lor -gt 0 ]

check still-enabled "state=$(state)" [ "$(state)" = enabled ]
stop_sis
check exit-0 "exit $SIS_RC: $(tail -3 /tmp/r2.log)" [ "$SIS_RC" = 0 ]
check no-ejection "$(grep -i 'stall\|error' /tmp/r2.log | head -2)" sh -c '! grep -qi "stall\|error" /tmp/r2.log'
check counter-identity "$(grep totals /tmp/r2.log)" identity /tmp/r2.log
