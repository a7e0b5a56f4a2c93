# placement.sh: 1:4:2 guest, busy loops on CPUs 0 and 2, a task whose prev is CPU 0
# sleeps and wakes. IDLE_CORE: whole idle cores (4-7). NO_IDLE_CORE: an idle sibling
# of a busy CPU (1 or 3), through select_idle_smt.
. /tests/lib.sh
N=${1:-400}
sis-probe spin 0 & S0=$!
sis-probe spin 2 & S2=$!
run() { # run NAME FEATURES
	start_sis /tmp/p-$1.log -f "$2" || { fail "$1-start" "$(tail -3 /tmp/p-$1.log)"; return; }
	sleep 1
	sis-probe wake $N 2000 0 >/tmp/w-$1.txt
	stop_sis
	sed -n 's/^# wake histogram/# '"$1"' wake histogram/p' /tmp/w-$1.txt
	c=""; for f in select_cpu target prev recent idle_core idle_smt idle_cpu fallback wake_affine lost_claims; do c="$c $f=$(total $f /tmp/p-$1.log)"; done
	echo "# $1 counters:$c"
}
count() { # count FILE CPUS...: wakeups that landed on these CPUs
	f=$1; shift; n=0
	for c in "$@"; do n=$((n + $(awk -v c=$c '$1=="cpu" && $2==c {print $3}' $f | head -1) + 0)); done
	echo $n
}
run idle_core ""
core=$(count /tmp/w-idle_core.txt 4 5 6 7)
check idle-core-placement "$core/$N wakeups on a whole idle core (4-7), want >= 95%" [ $((core * 100)) -ge $((N * 95)) ]
run no_idle_core NO_IDLE_CORE
smt=$(count /tmp/w-no_idle_core.txt 1 3)
check no-idle-core-placement "$smt/$N wakeups on an idle sibling of a busy CPU (1,3), want > 50%" [ $((smt * 2)) -gt $N ]
check no-idle-core-counter "idle_core=$(total idle_core /tmp/p-no_idle_core.log) with NO_IDLE_CORE" [ "$(total idle_core /tmp/p-no_idle_core.log)" = 0 ]
check idle-smt-counter "idle_smt=$(total idle_smt /tmp/p-no_idle_core.log)" [ "$(total idle_smt /tmp/p-no_idle_core.log)" -gt 0 ]
kill $S0 $S2
