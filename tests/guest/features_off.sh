# SPDX-License-Identifier: GPL-2.0-only
# suite: features-off 1:4:2 newest 400
# features_off.sh: each feature switched off drives its step's counter to zero.
. /tests/lib.sh
plan 20
# load NAME FEATURES: scx_sis under a mixed wakeup load, CPU 0 busy. The spinner starts
# once scx_sis is up: beside it the verifier, most of a start, runs at half speed.
load() {
	start_sis /tmp/f-$1.log -f "$2" || { fail "$1-start" "$(tail -3 /tmp/f-$1.log)"; return; }
	sis-probe spin 0 & S0=$!
	hackbench -g 2 -l 100 >/dev/null 2>&1
	sis-probe pingpong 1000 >/dev/null
	# 100 wakes take seconds: a loop still going after 90 s is dumped and fails
	watched 90 sis-probe wake 100 1000 0 >/dev/null || fail "$1-wake-loop" "not done in 90 s"
	kill $S0
	stop_sis
	check "$1-identity" "$(grep totals /tmp/f-$1.log)" identity /tmp/f-$1.log
}
load all ""
for f in recent idle_core idle_smt wake_affine hint_true; do
	echo "# all features: $f=$(total $f /tmp/f-all.log)"
done
check on-idle-core "idle_core=$(total idle_core /tmp/f-all.log)" [ "$(total idle_core /tmp/f-all.log)" -gt 0 ]
check on-recent "recent=$(total recent /tmp/f-all.log)" [ "$(total recent /tmp/f-all.log)" -gt 0 ]
check on-sis-util "sis_util_cut=$(total sis_util_cut /tmp/f-all.log)" [ "$(total sis_util_cut /tmp/f-all.log)" -gt 0 ]
check on-wake-affine "wake_affine=$(total wake_affine /tmp/f-all.log)" [ "$(total wake_affine /tmp/f-all.log)" -gt 0 ]
# beside one pinned spinner no task waits the starvation rescue's 5 s
check none-starved "starved=$(total starved /tmp/f-all.log)" [ "$(total starved /tmp/f-all.log)" = 0 ]
load no_recent NO_RECENT_USED
check off-recent "recent=$(total recent /tmp/f-no_recent.log)" [ "$(total recent /tmp/f-no_recent.log)" = 0 ]
load no_core NO_IDLE_CORE
check off-idle-core "idle_core=$(total idle_core /tmp/f-no_core.log) hint_true=$(total hint_true /tmp/f-no_core.log)" \
	[ "$(total idle_core /tmp/f-no_core.log)" = 0 -a "$(total hint_true /tmp/f-no_core.log)" = 0 ]
load no_smt NO_IDLE_SMT
check off-idle-smt "idle_smt=$(total idle_smt /tmp/f-no_smt.log)" [ "$(total idle_smt /tmp/f-no_smt.log)" = 0 ]
load no_affine NO_WAKE_AFFINE
check off-wake-affine "wake_affine=$(total wake_affine /tmp/f-no_affine.log)" [ "$(total wake_affine /tmp/f-no_affine.log)" = 0 ]
ni="ni_runs=$(total ni_runs /tmp/f-all.log) ni_cost_cut=$(total ni_cost_cut /tmp/f-all.log) ni_random_skip=$(total ni_random_skip /tmp/f-all.log)"
echo "# all features: $ni"
# a walk stops for its budget once at most, and some walks balance
check on-newidle "$ni (want runs > 0, cost_cut < runs)" \
	[ "$(total ni_runs /tmp/f-all.log)" -gt 0 -a "$(total ni_cost_cut /tmp/f-all.log)" -lt "$(total ni_runs /tmp/f-all.log)" ]
if echo " $KNI " | grep -q " NI_RANDOM "; then
	check on-ni-random "$ni" [ "$(total ni_random_skip /tmp/f-all.log)" -gt 0 ]
else # this kernel predates NI_RANDOM, so scx_sis starts with it off
	check on-ni-random "$ni (NI_RANDOM off by default here)" [ "$(total ni_random_skip /tmp/f-all.log)" = 0 ]
fi
load no_ni_random NO_NI_RANDOM
check off-ni-random "ni_random_skip=$(total ni_random_skip /tmp/f-no_ni_random.log)" [ "$(total ni_random_skip /tmp/f-no_ni_random.log)" = 0 ]
load no_util NO_SIS_UTIL
check off-sis-util "sis_util_cut=$(total sis_util_cut /tmp/f-no_util.log)" [ "$(total sis_util_cut /tmp/f-no_util.log)" = 0 ]
