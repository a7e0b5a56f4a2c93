# demo.sh SECS [SCX_SIS ARGS...]: scx_sis with live stats under hackbench + tbench.
SECS=$1; shift
scx_sis --stats 2 "$@" &
PID=$!
i=0; while [ "$(cat /sys/kernel/sched_ext/state)" != enabled ] && [ $i -lt 300 ]; do
	kill -0 $PID 2>/dev/null || { wait $PID; exit $?; }; sleep 0.1; i=$((i + 1)); done
N=$(nproc)
tbench_srv >/dev/null 2>&1 &
SRV=$!
sleep 1
tbench -t "$SECS" -c /usr/share/dbench/client.txt "$N" 127.0.0.1 >/tmp/tb.log 2>&1 &
TB=$!
end=$(($(date +%s) + SECS))
while [ "$(date +%s)" -lt $end ]; do hackbench -g 2 -l 100 >/dev/null 2>&1; done
wait $TB
grep -E "Throughput" /tmp/tb.log
kill $SRV
kill -INT $PID
wait $PID
