# SPDX-License-Identifier: GPL-2.0-only
# suite: fidelity 1:4:2 newest 600
# fidelity.sh: 1:4:2 guest (cores 0-1 2-3 4-5 6-7). Each path around the search does
# what fair.c does: a wakeup that finds nothing idle waits on target (no kick with the
# default features) and is rescued only by an idle balance; the sync rule; a forked
# child's recent_used_cpu; queued wakeups counted as their own step.
. /tests/lib.sh
plan 14
N=$(nproc)
# sis NAME ARGS...: (re)start scx_sis with a log per phase
sis() { n=$1; shift; start_sis /tmp/f-$n.log "$@" || fail "$n-start" "$(tail -3 /tmp/f-$n.log)"; }
tot() { total $2 /tmp/f-$1.log; }
# hackloop SECS: hackbench rounds for SECS seconds; prints how many finished
hackloop() {
	end=$(($(date +%s) + $1)); hb=0
	while [ "$(date +%s)" -lt $end ]; do hackbench -g 1 -f 4 -l 40 >/dev/null 2>&1 && hb=$((hb + 1)); done
	echo $hb
}

# 1. every CPU busy: spinners on all CPUs plus hackbench. Wakeups find nothing idle, queue
# on target and wait there; nothing is kicked, no task waits past the watchdog.
# scx_sis is loaded first: verifying its programs while every vCPU spins takes minutes
# of TCG time.
sis full
spins=""; c=0
while [ $c -lt $N ]; do sis-probe spin $c & spins="$spins $!"; c=$((c + 1)); done
hb=$(hackloop 10)
check full-still-enabled "state=$(state); $(tail -3 /tmp/f-full.log)" [ "$(state)" = enabled ]
stop_sis
echo "# full: $hb hackbench rounds; $(totals /tmp/f-full.log select_cpu fallback cpu_queued pulls steals tick_kicks idle_kicks reenq queued_wakeup)"
check full-hackbench-ran "$hb rounds" [ "$hb" -gt 0 ]
check full-fallback-queued "fallback=$(tot full fallback) cpu_queued=$(tot full cpu_queued)" [ "$(tot full fallback)" -gt 0 -a "$(tot full cpu_queued)" -gt 0 ]
check full-no-idle-kick "idle_kicks=$(tot full idle_kicks) shared=$(tot full shared)" [ "$(tot full idle_kicks)" = 0 -a "$(tot full shared)" = 0 ]
kill $spins; wait $spins 2>/dev/null

# 2. three CPUs busy, hackbench with 8 tasks on the rest: what waits is pulled by a CPU going idle or after a tick kick,
# never kicked at enqueue; with IDLE_KICK the enqueue kicks.
# (the spinners start after each load: under TCG a loader beside busy vCPUs waits
# behind each of them)
for mode in balance idle_kick; do
	if [ $mode = idle_kick ]; then sis $mode -f IDLE_KICK; else sis $mode; fi
	sis-probe spin 0 & S0=$!; sis-probe spin 2 & S2=$!; sis-probe spin 4 & S4=$!
	hb=$(hackloop 10)
	sis-probe pingpong 1000 >/dev/null
	kill $S0 $S2 $S4; wait $S0 $S2 $S4 2>/dev/null
	stop_sis
	echo "# $mode: $hb hackbench rounds; $(totals /tmp/f-$mode.log select_cpu fallback cpu_queued shared pulls steals tick_kicks idle_kicks reenq queued_wakeup)"
done
check balance-no-idle-kick "idle_kicks=$(tot balance idle_kicks)" [ "$(tot balance idle_kicks)" = 0 ]
check balance-pulls "pulls=$(tot balance pulls) tick_kicks=$(tot balance tick_kicks)" [ "$(tot balance pulls)" -gt 0 ]
check idle-kick-kicks "idle_kicks=$(tot idle_kick idle_kicks) shared=$(tot idle_kick shared)" [ "$(tot idle_kick idle_kicks)" -gt 0 -a "$(tot idle_kick shared)" -gt 0 ]
check queued-wakeups-counted "queued_wakeup=$(tot balance queued_wakeup)" [ "$(tot balance queued_wakeup)" -gt 0 ]
check balance-identity "$(totals /tmp/f-balance.log select_cpu target prev recent idle_core idle_smt idle_cpu fallback idlest)" identity /tmp/f-balance.log

# 3. wake_affine_idle's sync rule: a waker pinned to CPU 0 wakes a task allowed on 0 and
# 6 over a pipe (WF_SYNC). Alone on CPU 0 the wakeup goes affine; with a task waiting
# for CPU 0 (a spinner pinned there) it must not.
R=1000
sis sync_alone
sis-probe syncwake $R 0 6 >/tmp/sync-alone.txt
stop_sis
cat /tmp/sync-alone.txt
sis sync_busy
sis-probe spin 0 & S0=$!
sleep 1
sis-probe syncwake $R 0 6
kill $S0; wait $S0 2>/dev/null
stop_sis
a=$(tot sync_alone wake_affine); sa=$(tot sync_alone select_cpu)
b=$(tot sync_busy wake_affine); sb=$(tot sync_busy select_cpu)
echo "# sync: alone wake_affine $a of $sa select_cpu; with a waiting task $b of $sb"
for n in sync_alone sync_busy; do echo "# $n: $(totals /tmp/f-$n.log target prev recent idle_core idle_smt idle_cpu fallback cpu_queued pulls tick_kicks hint_true hint_false sis_util_cut)"; done
check sync-alone-affine "wake_affine=$a of select_cpu=$sa, want >= $((R / 2))" [ "$a" -ge $((R / 2)) ]
check sync-busy-not-affine "wake_affine=$b of select_cpu=$sb, want < $((R / 10))" [ "$b" -lt $((R / 10)) ]

# 4. fork: the child's recent_used_cpu is the parent's CPU (7). The child moves to CPU 2,
# where a spinner runs, and sleeps: at its first wakeup target = prev = 2 is busy and
# recent_used_cpu 7 is idle, so RECENT_USED takes it there; without it the idle-core
# walk from CPU 3 finds core 4-5 first.
F=200
sis recent
sis-probe spin 2 & S2=$!
sleep 1
sis-probe forkwake $F 2000 7 2 >/tmp/fw-recent.txt
kill $S2; wait $S2 2>/dev/null
stop_sis
sis no_recent -f NO_RECENT_USED
sis-probe spin 2 & S2=$!
sleep 1
sis-probe forkwake $F 2000 7 2 >/tmp/fw-no_recent.txt
kill $S2; wait $S2 2>/dev/null
stop_sis
on7() { awk '$1=="cpu" && $2==7 {print $3}' $1 | grep . || echo 0; }
r=$(on7 /tmp/fw-recent.txt); nr=$(on7 /tmp/fw-no_recent.txt)
echo "# fork: children woke on CPU 7 $r/$F with RECENT_USED (recent=$(tot recent recent)): $(tr '\n' ' ' </tmp/fw-recent.txt); $nr/$F without: $(tr '\n' ' ' </tmp/fw-no_recent.txt)"
check fork-recent-used "$r/$F children woke on the parent's CPU 7, recent=$(tot recent recent)" [ $((r * 100)) -ge $((F * 80)) -a "$(tot recent recent)" -ge $((F * 8 / 10)) ]
check fork-no-recent-used "$nr/$F on CPU 7 with NO_RECENT_USED, recent=$(tot no_recent recent)" [ "$(tot no_recent recent)" = 0 -a $((nr * 100)) -le $((F * 50)) ]
check disabled-after "state=$(state)" [ "$(state)" = disabled ]
