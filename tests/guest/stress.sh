# SPDX-License-Identifier: GPL-2.0-only
# suite: stress-60s 1:4:2 newest 500 -- 60
# stress.sh SECS: stress-ng (cpu, fork, affinity) plus hackbench at twice the CPU
# count; scx_sis stays loaded (no watchdog stall), its EEVDF sums stay whole (no
# `v_jumps`), and it exits 0 on SIGINT.
. /tests/lib.sh
plan 8
SECS=${1:-60}
N=$(nproc)
start_sis /tmp/s.log --stats 10 || fail start "$(tail -5 /tmp/s.log)"
stress-ng --cpu $N --fork 2 --affinity 2 --timeout ${SECS}s --quiet >/tmp/sng.log 2>&1 & SNG=$!
end=$(($(date +%s) + SECS))
hb=0
while [ "$(date +%s)" -lt $end ]; do
	hackbench -g 1 -f $N -l 50 >/dev/null 2>&1 && hb=$((hb + 1))
done
wait $SNG; sng=$?
echo "# $hb hackbench runs, stress-ng exit $sng"
check stress-ng-finished "stress-ng exit $sng: $(tail -3 /tmp/sng.log)" [ $sng = 0 ]
check hackbench-ran "$hb runs" [ $hb -gt 0 ]
check still-enabled "state=$(state); $(tail -5 /tmp/s.log)" [ "$(state)" = enabled ]
check loader-alive "scx_sis died: $(tail -5 /tmp/s.log)" kill -0 $SIS_PID
stop_sis
check exit-0 "exit $SIS_RC: $(tail -5 /tmp/s.log)" [ "$SIS_RC" = 0 ]
check no-stall "$(grep -i -m1 stall /tmp/s.log)" sh -c '! grep -qi "stall\|error" /tmp/s.log'
check counter-identity "$(grep totals /tmp/s.log)" identity /tmp/s.log
# the EEVDF sums stayed whole: no placement found V farther off than any lag allows
check no-v-jump "$(totals /tmp/s.log v_jumps sums_retry starved)" [ "$(total v_jumps /tmp/s.log)" = 0 ]
tail -3 /tmp/s.log | sed 's/^/| /'
