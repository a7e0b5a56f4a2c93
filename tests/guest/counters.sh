# counters.sh: load, run hackbench and tbench, unload; the placement steps sum to the
# select_cpu count exactly; clean exit.
. /tests/lib.sh
echo "# kernel $(uname -r), $(nproc) CPUs"
check disabled-before "state=$(state)" [ "$(state)" = disabled ]
start_sis /tmp/c.log || fail start "$(tail -5 /tmp/c.log)"
check enabled "state=$(state)" [ "$(state)" = enabled ]
hackbench -g 2 -l 200 >/tmp/hb.log 2>&1
check hackbench "$(tail -2 /tmp/hb.log)" grep -q Time /tmp/hb.log
tbench_srv >/dev/null 2>&1 & SRV=$!
sleep 1
tbench -t 4 -c /usr/share/dbench/client.txt $(nproc) 127.0.0.1 >/tmp/tb.log 2>&1
kill $SRV
check tbench "$(tail -2 /tmp/tb.log)" grep -q Throughput /tmp/tb.log
check still-enabled "state=$(state)" [ "$(state)" = enabled ]
stop_sis
check exit-0 "exit $SIS_RC: $(tail -3 /tmp/c.log)" [ "$SIS_RC" = 0 ]
check disabled-after "state=$(state)" wait_state disabled 5
check counter-identity "$(grep totals /tmp/c.log)" identity /tmp/c.log
grep -o "totals .*" /tmp/c.log | sed 's/^/| /'
