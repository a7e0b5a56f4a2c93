# SPDX-License-Identifier: GPL-2.0-only
# suite: lifecycle 1:4:2 every 400
# lifecycle.sh: disabled before scx_sis, enabled while it runs, disabled after SIGINT,
# with the exit reason logged and exit status 0.
. /tests/lib.sh
plan 22
echo "# kernel $(uname -r)"
check disabled-before "state=$(state)" [ "$(state)" = disabled ]
start_sis /tmp/sis.log --stats 1
check enabled-while-running "state=$(state); log: $(tail -3 /tmp/sis.log)" [ "$(state)" = enabled ]
check ops-name "ops=$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)" grep -q '^sis' /sys/kernel/sched_ext/root/ops
hackbench -g 4 -l 200 >/tmp/hb.log 2>&1
check hackbench-under-sis "hackbench failed: $(tail -2 /tmp/hb.log)" grep -q Time /tmp/hb.log
check still-enabled "state=$(state)" [ "$(state)" = enabled ]
check status-file "$(cat /run/scx_sis/status.json 2>&1)" [ "$(status pid)" = "$SIS_PID" -a "$(status attaches)" = 1 -a "$(status cpus)" = "$(nproc)" ]
stop_sis
check status-file-removed "$(ls -l /run/scx_sis/ 2>&1)" [ ! -e /run/scx_sis/status.json ]
check exit-0-on-sigint "scx_sis exited $SIS_RC: $(tail -3 /tmp/sis.log)" [ "$SIS_RC" = 0 ]
check disabled-after "state=$(state)" wait_state disabled 5
check exit-reason-logged "$(tail -3 /tmp/sis.log)" grep -q "unregistered from user space" /tmp/sis.log
sed 's/^/| /' /tmp/sis.log | tail -4
# Stats output that fails never unloads the scheduler: printing stops with one line on
# stderr and scheduling goes on; SIGINT still ends it cleanly, with totals.
out_case() { # out_case NAME [SECS]: scx_sis already started with stdout set up, SIS_PID, log /tmp/o-NAME.err
	wait_state enabled 60
	sleep ${2:-3}
	hackbench -g 1 -l 50 >/dev/null 2>&1
	check $1-still-enabled "state=$(state): $(tail -3 /tmp/o-$1.err)" sh -c "[ \"\$(cat /sys/kernel/sched_ext/state)\" = enabled ] && kill -0 $SIS_PID"
	kill -INT $SIS_PID
	i=0; while kill -0 $SIS_PID 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill -0 $SIS_PID 2>/dev/null && { kill -9 $SIS_PID; echo "# $1: no exit 5 s after SIGINT"; }
	wait $SIS_PID; rc=$?
	echo "# $1: exit $rc after $((i * 100)) ms; $(grep -v totals /tmp/o-$1.err | tail -2 | tr '\n' ' ')"
	check $1-sigint-clean "exit $rc after $((i * 100)) ms: $(tail -2 /tmp/o-$1.err)" sh -c "[ $rc = 0 ] && grep -q 'totals over' /tmp/o-$1.err"
	check $1-disabled "state=$(state)" wait_state disabled 5
}
scx_sis --stats 0.2 >&- 2>/tmp/o-closed.err & SIS_PID=$!
out_case closed
# (Rust's runtime reopens a closed stdout on /dev/null: the lines go nowhere, no error)
check closed-no-error "$(cat /tmp/o-closed.err)" sh -c '! grep -qi "error" /tmp/o-closed.err'
mkfifo /tmp/pipe1; head -c 1 </tmp/pipe1 >/dev/null &
scx_sis --stats 0.2 >/tmp/pipe1 2>/tmp/o-epipe.err & SIS_PID=$!
out_case epipe
check epipe-one-line "$(cat /tmp/o-epipe.err)" sh -c '[ $(grep -c "stats output failed.*Broken pipe" /tmp/o-epipe.err) = 1 ]'
# a reader that never reads: the pipe (64 KiB) fills within about 6 s of JSON intervals
# (at most 5 a second), then intervals are dropped; SIGINT is answered
mkfifo /tmp/pipe2; sleep 600 </tmp/pipe2 & HOLD=$!
scx_sis --stats 0.05 --json >/tmp/pipe2 2>/tmp/o-blocked.err & SIS_PID=$!
out_case blocked 12
check blocked-noticed "$(cat /tmp/o-blocked.err)" grep -q "stats output is blocked" /tmp/o-blocked.err
kill $HOLD
