# SPDX-License-Identifier: GPL-2.0-only
# suite: security 1:4:2 every 400
# security.sh: only root reads stats or changes features; hostile clients of the stats
# socket get an error or a close, never a crash or a hang; no kernel addresses in the
# stats; a socket path someone else prepared is refused.
. /tests/lib.sh
plan 38
SOCK=/var/run/scx/root/stats
rss() { awk '/VmRSS/ {print $2}' /proc/$SIS_PID/status; }
# monitor_ok [SECS]: a monitor prints two stats lines within SECS (it ends at the second)
monitor_ok() { timeout ${1:-6} scx_sis --monitor 1 2>/dev/null | grep -m 2 "^\[scx_sis\] *[0-9]*/s |" | grep -c . | awk '{exit !($1 >= 2)}'; }
start_sis /tmp/sec.log || fail start "$(tail -3 /tmp/sec.log)"
check socket-root-only "$(ls -l $SOCK; ls -ld /var/run/scx/root)" sh -c \
	"[ \$(stat -c %a $SOCK) = 600 ] && [ \$(stat -c %a /var/run/scx/root) = 700 ] && [ \$(stat -c %u $SOCK) = 0 ]"
su -s /bin/sh nobody -c 'scx_sis --monitor 1' >/tmp/o 2>/tmp/e; rc=$?
check monitor-as-nobody-refused "exit $rc: $(cat /tmp/e)" sh -c "[ $rc != 0 ] && grep -q 'permission denied' /tmp/e && [ \$(grep -c . /tmp/e) = 1 ]"
su -s /bin/sh nobody -c 'scx_sis --set' >/tmp/o 2>/tmp/e; rc=$?
check set-print-as-nobody-refused "exit $rc: $(cat /tmp/e)" sh -c "[ $rc != 0 ] && grep -q 'permission denied' /tmp/e"
R0=$(rss)
for m in garbage truncated huge unknown; do
	out=$(sis-probe hostile $SOCK $m); rc=$?
	echo "# $out" | cut -c1-160
	check hostile-$m "exit $rc: $out" [ $rc = 0 ]
done
check features-unchanged "$(scx_sis --set)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE WA_IDLE WA_WEIGHT WA_BIAS WAKE_WIDE IDLE_CORE IDLE_SMT RECENT_USED SIS_UTIL NO_IDLE_KICK NO_SIS_AVG_CPU NO_SIS_PROP PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT WAKEUP_PREEMPTION DELAY_DEQUEUE $KHRTICK $KNI$"'
sis-probe idle $SOCK 2000 12 >/tmp/idle.txt 2>&1 & IDLE=$!
i=0; while ! grep -q holding /tmp/idle.txt && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check idle-connections-open "$(cat /tmp/idle.txt)" grep -q "holding 2000" /tmp/idle.txt
T0=$(date +%s); check answers-beside-idle-connections "monitor printed nothing" monitor_ok 20; echo "# monitor beside 2000 idle connections: $(($(date +%s) - T0)) s"
R1=$(rss)
wait $IDLE
sleep 1
check answers-after-idle-connections "monitor printed nothing within 20 s" monitor_ok 20
R2=$(rss)
echo "# loader RSS: ${R0} kB before the hostile clients, ${R1} kB with 2000 idle connections, ${R2} kB after"
check rss-bounded "RSS ${R0} -> ${R1} -> ${R2} kB" sh -c "[ $R1 -lt $((R0 + 65536)) ] && [ $R2 -lt $((R0 + 65536)) ]"
check still-enabled "state=$(state)" [ "$(state)" = enabled ]
check loader-alive "$(tail -3 /tmp/sec.log)" kill -0 $SIS_PID
timeout 4 scx_sis --monitor 1 --json >/tmp/j.txt 2>/dev/null
timeout 4 scx_sis --monitor 1 --stats-detail >>/tmp/j.txt 2>/dev/null
check no-kernel-addresses "$(grep -Eo 'ffff[89a-f][0-9a-f]{11}|1844674[0-9]{12}' /tmp/j.txt | head -3)" \
	sh -c "[ -s /tmp/j.txt ] && ! grep -Eq 'ffff[89a-f][0-9a-f]{11}|1844674[0-9]{12}' /tmp/j.txt"
# one instance: a second loader is refused and touches nothing of the first
scx_sis >/tmp/o 2>/tmp/e; rc=$?
check second-loader-refused "exit $rc: $(cat /tmp/e)" sh -c "[ $rc != 0 ] && grep -q 'another scx_sis is already running' /tmp/e && [ \$(grep -c . /tmp/e) = 1 ]"
check first-untouched "pin: $(ls -l /sys/fs/bpf/scx_sis/ 2>&1); state=$(state)" sh -c \
	'[ -e /sys/fs/bpf/scx_sis/ctl ] && [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && scx_sis --set >/dev/null'
# concurrent --set calls, each switching a different feature off, lose none
lost=0
for round in 1 2 3 4 5; do
	scx_sis --set WAKE_AFFINE,IDLE_SMT,RECENT_USED,SIS_UTIL >/dev/null
	pids=""
	for f in NO_WAKE_AFFINE NO_IDLE_SMT NO_RECENT_USED NO_SIS_UTIL; do scx_sis --set $f >/dev/null & pids="$pids $!"; done
	wait $pids
	scx_sis --set | grep -q "^NO_WAKE_AFFINE WA_IDLE WA_WEIGHT WA_BIAS WAKE_WIDE IDLE_CORE NO_IDLE_SMT NO_RECENT_USED NO_SIS_UTIL NO_IDLE_KICK NO_SIS_AVG_CPU NO_SIS_PROP PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT WAKEUP_PREEMPTION DELAY_DEQUEUE $KHRTICK $KNI$" || lost=$((lost + 1))
done
check concurrent-set-atomic "$lost of 5 rounds lost a change: $(scx_sis --set)" [ $lost = 0 ]
scx_sis --set WAKE_AFFINE,IDLE_SMT,RECENT_USED,SIS_UTIL >/dev/null
stop_sis
check exit-0 "exit $SIS_RC" [ "$SIS_RC" = 0 ]
check pin-removed "$(ls -la /sys/fs/bpf/scx_sis/)" sh -c '[ ! -e /sys/fs/bpf/scx_sis/ctl ] && [ "$(stat -c %a:%u /sys/fs/bpf/scx_sis)" = 700:0 ]'
# two loaders started at once: exactly one runs, the other says why
scx_sis >/tmp/l1.log 2>&1 & P1=$!
scx_sis >/tmp/l2.log 2>&1 & P2=$!
wait_state enabled 60
sleep 2
alive=0; kill -0 $P1 2>/dev/null && alive=$((alive + 1)); kill -0 $P2 2>/dev/null && alive=$((alive + 1))
check two-at-once-one-runs "$alive alive; $(cat /tmp/l1.log /tmp/l2.log | grep -i error)" sh -c \
	"[ $alive = 1 ] && [ \$(cat /tmp/l1.log /tmp/l2.log | grep -c 'already running\|already loaded') = 1 ] && [ \"\$(cat /sys/kernel/sched_ext/state)\" = enabled ]"
kill -INT $P1 $P2 2>/dev/null; wait $P1 $P2
wait_state disabled 5
# the pin folder: created by scx_sis, root's, 0700; anything someone else prepared is refused
PIN=/sys/fs/bpf/scx_sis
refused() { # refused NAME PATTERN: scx_sis refuses in one line and loads nothing
	scx_sis >/tmp/o 2>/tmp/e; rc=$?
	check $1-refused "exit $rc: $(cat /tmp/e)" sh -c "[ $rc != 0 ] && grep -q \"$2\" /tmp/e && [ \$(grep -c . /tmp/e) = 1 ]"
	check $1-nothing-loaded "state=$(state)" [ "$(state)" = disabled ]
}
rm -rf $PIN; mkdir $PIN; chown nobody $PIN
refused pin-foreign-owner "refusing to use $PIN: it belongs to uid 65534, not root"
rm -rf $PIN; mkdir -m 0777 $PIN; chmod 0777 $PIN
refused pin-world-writable "refusing to use $PIN: it is writable by group or others"
rm -rf $PIN; mkdir -m 0755 /tmp/target; ln -s /tmp/target $PIN
refused pin-symlink "refusing to use $PIN: it is a symlink"
check pin-symlink-target-untouched "$(stat -c %a /tmp/target)" [ "$(stat -c %a /tmp/target)" = 755 ]
rm -f $PIN; ln -s /nonexistent/x $PIN
refused pin-dangling-symlink "refusing to use $PIN: it is a symlink"
rm -f $PIN
rm -rf /run/scx_sis; ln -s /tmp/target /run/scx_sis
refused lock-symlink "refusing to use /run/scx_sis: it is a symlink"
rm -f /run/scx_sis
chmod 0777 /var/run/scx/root
refused stats-folder-writable "/var/run/scx/root is writable by group or others"
chmod 0700 /var/run/scx/root
# a socket path prepared by someone else is refused, and nothing is loaded
mkdir -p /var/run/scx/root
ln -sf /tmp/elsewhere $SOCK
scx_sis >/tmp/o 2>/tmp/e; rc=$?
check symlink-socket-refused "exit $rc: $(cat /tmp/e)" sh -c "[ $rc != 0 ] && grep -q 'is a symlink' /tmp/e && [ \$(grep -c . /tmp/e) = 1 ]"
check symlink-nothing-loaded "state=$(state)" [ "$(state)" = disabled ]
rm -f $SOCK; touch $SOCK; chown nobody $SOCK
scx_sis >/tmp/o 2>/tmp/e; rc=$?
check foreign-socket-refused "exit $rc: $(cat /tmp/e)" sh -c "[ $rc != 0 ] && grep -q 'belongs to uid 65534' /tmp/e"
check foreign-nothing-loaded "state=$(state)" [ "$(state)" = disabled ]
rm -f $SOCK
