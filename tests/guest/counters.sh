# SPDX-License-Identifier: GPL-2.0-only
# suite: counters 1:4:2 every 400
# suite: counters-2:2:2-numa 2:2:2 newest 400 numa
# suite: counters-1:4:1 1:4:1 newest 400
# counters.sh: load, run hackbench and tbench, unload; the placement steps sum to the
# select_cpu count exactly; clean exit.
. /tests/lib.sh
plan 9 json
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
# SIGTERM, like SIGINT: exit 0, kernel back on its default scheduler
kill -TERM "$SIS_PID"; wait "$SIS_PID"; SIS_RC=$?
check exit-0-on-sigterm "exit $SIS_RC: $(tail -3 /tmp/c.log)" [ "$SIS_RC" = 0 ]
check disabled-after "state=$(state)" wait_state disabled 5
check counter-identity "$(grep totals /tmp/c.log)" identity /tmp/c.log
grep -A14 "totals over" /tmp/c.log | sed 's/^/| /'
