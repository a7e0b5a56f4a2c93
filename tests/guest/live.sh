# SPDX-License-Identifier: GPL-2.0-only
# suite: live-switch 1:4:2 newest 400 -- 300
# live.sh: features switched on the running instance with --set. The placement test
# (busy loops on CPUs 0 and 2, wakee from CPU 0) flips from whole idle cores to idle
# siblings after --set NO_IDLE_CORE and back after --set IDLE_CORE, with one PID and
# sched_ext never leaving `enabled`.
. /tests/lib.sh
plan 15
N=${1:-300}
check set-without-instance "$(scx_sis --set NO_IDLE_CORE 2>&1)" sh -c \
	'! scx_sis --set NO_IDLE_CORE 2>/tmp/e && grep -q "no running scx_sis" /tmp/e && [ $(grep -c . /tmp/e) = 1 ]'
sis-probe spin 0 & S0=$!
sis-probe spin 2 & S2=$!
start_sis /tmp/live.log --stats 1 || fail start "$(tail -3 /tmp/live.log)"
PID0=$SIS_PID
sleep 1
sis-probe wake $N 2000 0 >/tmp/w1.txt
check set-prints-features "$(scx_sis --set)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE WA_IDLE WA_WEIGHT WA_BIAS WAKE_WIDE IDLE_CORE IDLE_SMT RECENT_USED SIS_UTIL NO_IDLE_KICK NO_SIS_AVG_CPU NO_SIS_PROP PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT WAKEUP_PREEMPTION DELAY_DEQUEUE $KHRTICK $KNI$"'
scx_sis --set NO_IDLE_CORE_X >/tmp/o 2>/tmp/e; rc=$?
check set-unknown-feature "exit $rc: $(cat /tmp/e)" sh -c "[ $rc != 0 ] && grep -q \"unknown feature 'NO_IDLE_CORE_X'\" /tmp/e && [ \$(grep -c . /tmp/e) = 1 ]"
check set-unknown-changes-nothing "$(scx_sis --set)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE WA_IDLE WA_WEIGHT WA_BIAS WAKE_WIDE IDLE_CORE "'
# only root changes a running scheduler: the pin is 0600 in a 0700 folder
su -s /bin/sh nobody -c 'scx_sis --set NO_IDLE_CORE' >/tmp/o 2>/tmp/e; rc=$?
check set-as-nobody-refused "exit $rc: $(cat /tmp/e)" sh -c "[ $rc != 0 ] && grep -qi 'permission' /tmp/e && [ \$(grep -c . /tmp/e) = 1 ]"
check set-as-nobody-changes-nothing "$(scx_sis --set)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE WA_IDLE WA_WEIGHT WA_BIAS WAKE_WIDE IDLE_CORE "'
scx_sis --set NO_IDLE_CORE
check set-no-idle-core "$(scx_sis --set)" sh -c 'scx_sis --set | grep -q "NO_IDLE_CORE"'
sis-probe wake $N 2000 0 >/tmp/w2.txt
scx_sis --set IDLE_CORE
sis-probe wake $N 2000 0 >/tmp/w3.txt
for i in 1 2 3; do sed -n "s/^# wake histogram/# phase $i wake histogram/p" /tmp/w$i.txt; done
a=$(count /tmp/w1.txt 4 5 6 7); b=$(count /tmp/w2.txt 1 3); c=$(count /tmp/w3.txt 4 5 6 7)
check before-idle-core "$a/$N on whole idle cores" [ $((a * 100)) -ge $((N * 95)) ]
check after-no-idle-core "$b/$N on idle siblings 1,3" [ $((b * 2)) -gt $N ]
check back-to-idle-core "$c/$N on whole idle cores" [ $((c * 100)) -ge $((N * 95)) ]
check same-instance "pid $PID0 vs $SIS_PID, alive: $(kill -0 $PID0 && echo yes)" kill -0 $PID0
# had sched_ext left `enabled`, this loader would have exited or logged a restart
check never-left-enabled "state=$(state), $(status attaches) attaches, $(status restarts) restarts" \
	[ "$(state)" = enabled -a "$(status attaches)" = 1 -a "$(status restarts)" = 0 ]
stop_sis
check marked-interval "$(grep -c 'changed]' /tmp/live.log) marked intervals" grep -q "feat NO_IDLE_CORE \[changed\]" /tmp/live.log
check exit-0 "exit $SIS_RC" [ "$SIS_RC" = 0 ]
check counters-identity "$(grep totals /tmp/live.log)" identity /tmp/live.log
kill $S0 $S2
