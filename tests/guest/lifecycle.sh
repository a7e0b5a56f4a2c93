# lifecycle.sh: disabled before scx_sis, enabled while it runs, disabled after SIGINT,
# with the exit reason logged and exit status 0.
. /tests/lib.sh
echo "# kernel $(uname -r)"
check disabled-before "state=$(state)" [ "$(state)" = disabled ]
start_sis /tmp/sis.log --stats 1
check enabled-while-running "state=$(state); log: $(tail -3 /tmp/sis.log)" [ "$(state)" = enabled ]
check ops-name "ops=$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)" grep -q '^sis' /sys/kernel/sched_ext/root/ops
hackbench -g 4 -l 200 >/tmp/hb.log 2>&1
check hackbench-under-sis "hackbench failed: $(tail -2 /tmp/hb.log)" grep -q Time /tmp/hb.log
check still-enabled "state=$(state)" [ "$(state)" = enabled ]
stop_sis
check exit-0-on-sigint "scx_sis exited $SIS_RC: $(tail -3 /tmp/sis.log)" [ "$SIS_RC" = 0 ]
check disabled-after "state=$(state)" wait_state disabled 5
check exit-reason-logged "$(tail -3 /tmp/sis.log)" grep -q "unregistered from user space" /tmp/sis.log
sed 's/^/| /' /tmp/sis.log | tail -4
