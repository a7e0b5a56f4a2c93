# SPDX-License-Identifier: GPL-2.0-only
# suite: verifier 1:4:2 lines 300
# verifier.sh: the instructions the verifier processed for each BPF program, held to
# the baseline `cargo xtask verifier` recorded in verifier-baseline.txt for this
# kernel, within the budget that file's `# budget: FACTOR MIN_EXTRA MAX` line gives
# (xtask's VERIFIER_BUDGET); a program the baseline does not know fails, so a new
# program is recorded before it lands.
# With `refused` (no scheduler loads on this line) the report must fail in one line.
. /tests/lib.sh
K=$(uname -r)
B=/tests/verifier-baseline.txt
if [ "$1" = refused ]; then
	plan 1
	scx_sis --verifier-report >/tmp/vr.txt 2>/tmp/vr.err
	rc=$?
	check refused "exit $rc: $(tail -2 /tmp/vr.err)" sh -c "[ $rc = 1 ] && grep -q 'pahole older than 1.26' /tmp/vr.err"
	exit 0
fi
n=$(grep -c "^$K " $B)
plan $((n + 4))
check budget-declared "no '# budget: FACTOR MIN_EXTRA MAX' line in verifier-baseline.txt" grep -q '^# budget: [0-9][0-9]* [0-9][0-9]* [0-9][0-9]*$' $B
check kernel-in-baseline "no line for $K in verifier-baseline.txt: run cargo xtask verifier" [ "$n" -gt 0 ]
scx_sis --verifier-report >/tmp/vr.txt 2>/tmp/vr.err
rc=$?
check report-exit-0 "exit $rc: $(tail -3 /tmp/vr.err)" [ $rc = 0 ]
sed 's/^/# /' /tmp/vr.txt
missing=""
for p in $(awk '$1 == "verified_insns" {print $2}' /tmp/vr.txt); do
	grep -q "^$K $p " $B || missing="$missing $p"
done
check every-program-in-baseline "not in the baseline for $K:$missing" [ -z "$missing" ]
set -- $(sed -n 's/^# budget: //p' $B)
factor=$1 extra=$2 max=$3
grep "^$K " $B >/tmp/base.txt
while read -r _ prog base; do
	now=$(awk -v p="$prog" '$1 == "verified_insns" && $2 == p {print $3}' /tmp/vr.txt)
	budget=$((base * factor))
	[ $budget -lt $((base + extra)) ] && budget=$((base + extra))
	[ $budget -gt $max ] && budget=$max
	check "insns-$prog" "$prog: ${now:-not loaded} verified instructions on $K, budget $budget (baseline $base)" \
		awk -v n="$now" -v b="$budget" 'BEGIN { exit !(n != "" && n + 0 <= b) }'
done </tmp/base.txt
