# security.sh: only root reads stats or changes features; hostile clients of the stats
# socket get an error or a close, never a crash or a hang; no kernel addresses in the
# stats; a socket path someone else prepared is refused.
. /tests/lib.sh
SOCK=/var/run/scx/root/stats
rss() { awk '/VmRSS/ {print $2}' /proc/$SIS_PID/status; }
monitor_ok() { timeout ${1:-6} scx_sis --monitor 1 2>/dev/null | grep -c "^\[scx_sis\] *[0-9]*/s |" | awk '{exit !($1 >= 2)}'; }
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
check features-unchanged "$(scx_sis --set)" sh -c 'scx_sis --set | grep -q "^WAKE_AFFINE IDLE_CORE IDLE_SMT RECENT_USED SIS_UTIL$"'
sis-probe idle $SOCK 2000 30 >/tmp/idle.txt 2>&1 & IDLE=$!
i=0; while ! grep -q holding /tmp/idle.txt && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check idle-connections-open "$(cat /tmp/idle.txt)" grep -q "holding 2000" /tmp/idle.txt
T0=$(date +%s); check answers-beside-idle-connections "monitor printed nothing" monitor_ok 20; echo "# monitor beside 2000 idle connections: $(($(date +%s) - T0)) s"
R1=$(rss)
wait $IDLE
sleep 1
check answers-after-idle-connections "monitor printed nothing" monitor_ok
R2=$(rss)
echo "# loader RSS: ${R0} kB before the hostile clients, ${R1} kB with 2000 idle connections, ${R2} kB after"
check rss-bounded "RSS ${R0} -> ${R1} -> ${R2} kB" sh -c "[ $R1 -lt $((R0 + 65536)) ] && [ $R2 -lt $((R0 + 65536)) ]"
check still-enabled "state=$(state)" [ "$(state)" = enabled ]
check loader-alive "$(tail -3 /tmp/sec.log)" kill -0 $SIS_PID
timeout 4 scx_sis --monitor 1 --json >/tmp/j.txt 2>/dev/null
timeout 4 scx_sis --monitor 1 --stats-detail >>/tmp/j.txt 2>/dev/null
check no-kernel-addresses "$(grep -Eo 'ffff[89a-f][0-9a-f]{11}|1844674[0-9]{12}' /tmp/j.txt | head -3)" \
	sh -c "[ -s /tmp/j.txt ] && ! grep -Eq 'ffff[89a-f][0-9a-f]{11}|1844674[0-9]{12}' /tmp/j.txt"
stop_sis
check exit-0 "exit $SIS_RC" [ "$SIS_RC" = 0 ]
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
