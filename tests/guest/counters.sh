# SPDX-License-Identifier: GPL-2.0-only
# suite: counters 1:4:2 every 400
# suite: counters-2:2:2-numa 2:2:2 newest 400 numa
# suite: counters-1:4:1 1:4:1 newest 400
# counters.sh: load, run hackbench and tbench, unload; the placement steps sum to the
# select_cpu count exactly; a CPU queue's count never holds fewer tasks than the queue
# (dump_cpu's counted and dsq, under churn); clean exit.
. /tests/lib.sh
plan 10 json
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
# --monitor attaches to the running instance through its stats socket, loads nothing
(sis-probe pingpong 200000 >/dev/null &) ; timeout 5 scx_sis --monitor 1 >/tmp/mon.txt 2>&1
killall sis-probe 2>/dev/null
check monitor-prints "$(head -c 400 /tmp/mon.txt)" sh -c '[ $(grep -c "^\[scx_sis\] *[0-9]*/s |" /tmp/mon.txt) -ge 2 ]'
sed 's/^/| /' /tmp/mon.txt | tail -2
# --monitor --json: one object per interval; the host checks each parses and that its
# placement steps sum to its select_cpu count
(hackbench -g 1 -l 200 >/dev/null 2>&1 &); (sis-probe pingpong 100000 >/dev/null &)
timeout 8 scx_sis --monitor 1 --json >/tmp/json.txt 2>/dev/null
killall sis-probe hackbench 2>/dev/null
sed 's/^/json /' /tmp/json.txt
# queues that hold tasks, under churn: 3 spinners on CPU 1, 2 on CPU 2, hackbench beside
# them; each of 4 dumps must show counted >= dsq on every CPU and, in all, a queue
# with tasks waiting
sis-probe spin 1 & Q1=$!; sis-probe spin 1 & Q2=$!; sis-probe spin 1 & Q3=$!
sis-probe spin 2 & Q4=$!; sis-probe spin 2 & Q5=$!
(hackbench -g 2 -l 2000 >/dev/null 2>&1 &)
sleep 1
: >/tmp/dsq.txt
# (the reader runs as SCHED_FIFO: behind the churn each of its forks waits its turn)
sis-probe rt sh -c '. /tests/lib.sh; for i in 1 2 3 4; do scx_dump | grep -o "sis: nr_queued=.*" >>/tmp/dsq.txt; sleep 0.5; done'
kill $Q1 $Q2 $Q3 $Q4 $Q5; killall hackbench 2>/dev/null; wait $Q1 $Q2 $Q3 $Q4 $Q5 2>/dev/null
dq=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	n++; if (v["dsq"] > 0) w++; if (v["counted"] + 0 < v["dsq"] + 0) bad++ }
	END { printf "%d %d %d", n, w, bad }' /tmp/dsq.txt)
set -- $dq
seen=$(awk '{print $6, $7}' /tmp/dsq.txt | sort | uniq -c | sort -rn | head -5 | tr '\n' ';')
echo "# dsq-counts: $1 CPU lines, $2 with tasks waiting; dsq and counted: $seen"
check dsq-counts "$1 CPU lines, $2 with tasks waiting, $3 counted below dsq: $seen" \
	[ "$1" -gt 0 -a "$2" -gt 0 -a "$3" = 0 ]
# SIGTERM, like SIGINT: exit 0, kernel back on its default scheduler
kill -TERM "$SIS_PID"; wait "$SIS_PID"; SIS_RC=$?
check exit-0-on-sigterm "exit $SIS_RC: $(tail -3 /tmp/c.log)" [ "$SIS_RC" = 0 ]
check disabled-after "state=$(state)" wait_state disabled 5
check counter-identity "$(grep totals /tmp/c.log)" identity /tmp/c.log
grep -A14 "totals over" /tmp/c.log | sed 's/^/| /'
