# SPDX-License-Identifier: GPL-2.0-only
# first_check.sh: `cargo xtask check`, the first minute on a user's sched_ext machine:
# scx_sis loads, a wakeup whose previous CPU's core is busy lands on a whole idle core,
# a feature switches live, scx_sis unloads cleanly and the kernel log stays clean. Run
# natively by xtask (scx_sis and sis-probe on PATH) and in a guest by native_check.sh.
# Prints `check NAME: PASS|FAIL (why)` per step and `check: PASS` or `check: FAIL (N of M)`;
# exits 0 on PASS, 1 on FAIL, 2 when it refuses to start.
pass=0 failed=0 log=${TMPDIR:-/tmp}/scx_sis-check.$$
step() { # step NAME WHY CMD...
	n=$1 w=$2; shift 2
	if "$@"; then echo "check $n: PASS"; pass=$((pass + 1)); else echo "check $n: FAIL ($w)"; failed=$((failed + 1)); fi
}
state() { cat /sys/kernel/sched_ext/state 2>/dev/null || echo missing; }
refuse() { echo "check: refused: $1" >&2; exit 2; }
[ "$(id -u)" = 0 ] || refuse "run it as root (it loads a scheduler)"
[ -e /sys/kernel/sched_ext ] || refuse "this kernel has no sched_ext (/sys/kernel/sched_ext is missing)"
[ "$(state)" = disabled ] || refuse "another sched_ext scheduler is loaded ($(cat /sys/kernel/sched_ext/root/ops 2>/dev/null || echo unknown)); stop it first"
command -v scx_sis >/dev/null && command -v sis-probe >/dev/null || refuse "scx_sis and sis-probe must be on PATH"
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || refuse "one CPU: no wakeup placement to check"
mark="scx_sis-check-$$"
echo "$mark" >/dev/kmsg 2>/dev/null
# cpus LIST: "0-1,8" -> "0 1 8"
cpus() { echo "$1" | tr , '\n' | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | tr '\n' ' '; }
pid= spin=
# Ctrl-C or a kill: no spinner left behind, scx_sis stopped (its SIGINT handler unloads it)
trap 'kill $spin 2>/dev/null; [ -n "$pid" ] && kill -INT $pid 2>/dev/null && wait $pid; echo "check: interrupted"; exit 130' INT TERM
echo "# $(uname -r), $ncpu CPUs, cpu0's core: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)"
scx_sis --totals-json >"$log" 2>&1 &
pid=$!
i=0; while [ "$(state)" != enabled ] && [ $i -lt 600 ] && kill -0 $pid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
step load "state $(state) after $((i / 10)) s: $(tail -2 "$log" | tr '\n' ' ')" [ "$(state)" = enabled ]
grep -m1 'INFO. kernel ' "$log" | sed 's/^.*INFO. /# /'
# CPU 0's whole core busy: a task whose previous CPU is 0 must find a whole idle core
busy=$(cpus "$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)")
for c in $busy; do
	sis-probe spin "$c" & spin="$spin $!"
done
sleep 1
sis-probe wake 200 2000 0 >"$log.wake"
kill $spin 2>/dev/null
spin=
off=0
while read -r k c n; do
	[ "$k" = cpu ] || continue
	case " $busy " in *" $c "*) ;; *) off=$((off + n)) ;; esac
done <"$log.wake"
echo "# $off of 200 wakeups left CPU 0's busy core ($busy) for a whole idle core"
step idle-core "$off of 200 wakeups left CPU 0's busy core (want >= 180; other load on the machine lowers it)" [ "$off" -ge 180 ]
scx_sis --set NO_IDLE_CORE >/dev/null 2>&1
scx_sis --set >"$log.set" 2>&1
scx_sis --set IDLE_CORE >/dev/null 2>&1
scx_sis --set >>"$log.set" 2>&1
# the first line has NO_IDLE_CORE, the second (switched back) has not
step switch-live "features after the switch and back: $(tr '\n' '|' <"$log.set")" \
	sh -c "sed -n 1p '$log.set' | grep -q NO_IDLE_CORE && ! sed -n 2p '$log.set' | grep -q NO_IDLE_CORE"
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
pid=
i=0; while [ "$(state)" != disabled ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
step unload "exit $rc, state $(state): $(tail -2 "$log" | tr '\n' ' ')" [ "$rc" = 0 -a "$(state)" = disabled ]
# the log since our mark: it must be there (else nothing was checked) and clean
dmesg 2>/dev/null | sed -n "/$mark/,\$p" >"$log.dmesg"
grep -E 'WARNING|BUG:|deprecated|runtime error|stall' "$log.dmesg" >"$log.kmsg"
step kernel-log "$([ -s "$log.dmesg" ] || echo "the kernel log could not be read"; head -2 "$log.kmsg" | tr '\n' ' ')" \
	sh -c "[ -s '$log.dmesg' ] && [ ! -s '$log.kmsg' ]"
rm -f "$log" "$log.wake" "$log.kmsg" "$log.dmesg" "$log.set"
if [ $failed = 0 ]; then echo "check: PASS ($pass of $pass)"; exit 0; fi
echo "check: FAIL ($failed of $((pass + failed)) failed)"
exit 1
