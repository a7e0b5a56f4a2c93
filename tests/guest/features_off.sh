# SPDX-License-Identifier: GPL-2.0-only
# suite: features-off 1:4:2 newest 400
# features_off.sh: each feature switched off drives its step's counter to zero.
. /tests/lib.sh
plan 15
load() { # load NAME FEATURES: scx_sis under a mixed wakeup load
	start_sis /tmp/f-$1.log -f "$2" || { fail "$1-start" "$(tail -3 /tmp/f-$1.log)"; return; }
	hackbench -g 2 -l 100 >/dev/null 2>&1
	sis-probe pingpong 1000 >/dev/null
	sis-probe wake 100 1000 0 >/dev/null
	stop_sis
	check "$1-identity" "$(grep totals /tmp/f-$1.log)" identity /tmp/f-$1.log
}
sis-probe spin 0 & S0=$!
load all ""
for f in recent idle_core idle_smt wake_affine hint_true; do
	echo "# all features: $f=$(total $f /tmp/f-all.log)"
done
check on-idle-core "idle_core=$(total idle_core /tmp/f-all.log)" [ "$(total idle_core /tmp/f-all.log)" -gt 0 ]
check on-recent "recent=$(total recent /tmp/f-all.log)" [ "$(total recent /tmp/f-all.log)" -gt 0 ]
check on-sis-util "sis_util_cut=$(total sis_util_cut /tmp/f-all.log)" [ "$(total sis_util_cut /tmp/f-all.log)" -gt 0 ]
check on-wake-affine "wake_affine=$(total wake_affine /tmp/f-all.log)" [ "$(total wake_affine /tmp/f-all.log)" -gt 0 ]
load no_recent NO_RECENT_USED
check off-recent "recent=$(total recent /tmp/f-no_recent.log)" [ "$(total recent /tmp/f-no_recent.log)" = 0 ]
load no_core NO_IDLE_CORE
check off-idle-core "idle_core=$(total idle_core /tmp/f-no_core.log) hint_true=$(total hint_true /tmp/f-no_core.log)" \
	[ "$(total idle_core /tmp/f-no_core.log)" = 0 -a "$(total hint_true /tmp/f-no_core.log)" = 0 ]
load no_smt NO_IDLE_SMT
check off-idle-smt "idle_smt=$(total idle_smt /tmp/f-no_smt.log)" [ "$(total idle_smt /tmp/f-no_smt.log)" = 0 ]
load no_affine NO_WAKE_AFFINE
check off-wake-affine "wake_affine=$(total wake_affine /tmp/f-no_affine.log)" [ "$(total wake_affine /tmp/f-no_affine.log)" = 0 ]
load no_util NO_SIS_UTIL
check off-sis-util "sis_util_cut=$(total sis_util_cut /tmp/f-no_util.log)" [ "$(total sis_util_cut /tmp/f-no_util.log)" = 0 ]
kill $S0
