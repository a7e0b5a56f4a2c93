# SPDX-License-Identifier: GPL-2.0-only
# suite: native-check 1:4:2 every 300
# native_check.sh: `cargo xtask check` as a user runs it on a sched_ext machine, with
# this guest as that machine: tests/guest/first_check.sh passes all its steps and
# leaves the kernel on its default scheduler; with another sched_ext scheduler loaded
# it refuses in one line (exit 2) and leaves that one running.
. /tests/lib.sh
plan 6
sh /tests/first_check.sh >/tmp/fc.txt 2>&1
rc=$?
sed 's/^/# /' /tmp/fc.txt
check exit-0 "exit $rc" [ $rc = 0 ]
check summary "$(tail -1 /tmp/fc.txt)" grep -q '^check: PASS (5 of 5)$' /tmp/fc.txt
check every-step "$(grep -c ': PASS$' /tmp/fc.txt) steps passed" [ "$(grep -c '^check [a-z-]*: PASS$' /tmp/fc.txt)" = 5 ]
check left-default "state=$(state)" [ "$(state)" = disabled ]
start_sis /tmp/o.log || fail other-start "$(tail -3 /tmp/o.log)"
sh /tests/first_check.sh >/tmp/fc2.txt 2>&1
rc=$?
check refuses-when-loaded "exit $rc: $(cat /tmp/fc2.txt)" sh -c "[ $rc = 2 ] && [ \$(wc -l </tmp/fc2.txt) = 1 ] && grep -q 'another sched_ext scheduler is loaded' /tmp/fc2.txt"
check other-still-running "state=$(state), pid $SIS_PID" sh -c "[ $(state) = enabled ] && kill -0 $SIS_PID"
stop_sis
