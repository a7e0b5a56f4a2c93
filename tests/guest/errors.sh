# SPDX-License-Identifier: GPL-2.0-only
# suite: errors 1:4:2 newest 300
# errors.sh: every bad start gets one clear line and a non-zero exit; nothing stays loaded.
. /tests/lib.sh
plan 36
expect_err() { # expect_err NAME PATTERN CMD...
	n=$1; pat=$2; shift 2
	"$@" >/tmp/e.out 2>/tmp/e.err; rc=$?
	lines=$(grep -c . /tmp/e.err)
	check "$n" "exit $rc, $lines lines: $(head -c 600 /tmp/e.err)" \
		sh -c "[ $rc -ne 0 ] && grep -q \"$pat\" /tmp/e.err && [ $lines -eq 1 ]"
	check "$n-nothing-loaded" "state=$(state)" [ "$(state)" = disabled ]
}
expect_err unknown-feature "unknown feature 'NO_IDLE_CORES' (valid: WAKE_AFFINE, WA_IDLE, WA_WEIGHT, WA_BIAS, WAKE_WIDE, IDLE_CORE" scx_sis -f NO_IDLE_CORES
expect_err zero-slice "slice-us" scx_sis --slice-us 0
expect_err bad-stats-interval "stats must be between" scx_sis --stats=-1
expect_err not-root "must run as root" su -s /bin/sh nobody -c scx_sis
expect_err negative-slice "slice-us" scx_sis --slice-us=-5
expect_err absurd-slice "slice-us" scx_sis --slice-us 99999999999
expect_err long-quality-comm "at most 15 bytes" scx_sis --quality-comm 0123456789abcdefg
expect_err zero-stats-interval "stats must be between" scx_sis --stats 0
expect_err nan-monitor-interval "monitor must be between" scx_sis --monitor nan
expect_err absurd-dump-len "exit-dump-len" scx_sis --exit-dump-len 4294967295
expect_err bad-feature-list "unknown feature 'BOGUS'" scx_sis -f IDLE_CORE,BOGUS
expect_err monitor-nothing-running "no running scx_sis to monitor" scx_sis --monitor 1
expect_err set-nothing-running "no running scx_sis to change" scx_sis --set NO_IDLE_CORE
expect_err pelt-monitor-interval "monitor must be between" scx_sis --pelt 1 --monitor 0
start_sis /tmp/first.log
"scx_sis" >/tmp/e.out 2>/tmp/e.err; rc=$?
check already-running "exit $rc: $(cat /tmp/e.err)" sh -c "[ $rc -ne 0 ] && grep -q 'another scx_sis is already running (pid $SIS_PID)' /tmp/e.err && [ \$(grep -c . /tmp/e.err) = 1 ]"
check first-still-enabled "state=$(state)" [ "$(state)" = enabled ]
stop_sis
# a deliberate BPF runtime error: the loader prints the kernel's exit reason, exits non-zero
scx_sis --test-runtime-error >/tmp/e.out 2>/tmp/e.err; rc=$?
grep -i "exit\|error" /tmp/e.err | head -3 | sed 's/^/| /'
check runtime-error-reported "exit $rc: $(grep error: /tmp/e.err)" sh -c "[ $rc -ne 0 ] && grep -q 'scx_sis: error: EXIT: .*deliberate runtime error (--test-runtime-error)' /tmp/e.err"
check runtime-error-disabled "state=$(state)" wait_state disabled 5
scx_sis --test-verifier-reject >/tmp/e.out 2>/tmp/e.err; rc=$?
echo "# verifier rejection output:"; sed 's/^/| /' /tmp/e.err | tail -20
check verifier-rejection "exit $rc" sh -c "[ $rc -ne 0 ] && grep -q 'verifier rejected' /tmp/e.err && grep -q 'invalid mem access' /tmp/e.err"
check verifier-nothing-loaded "state=$(state)" [ "$(state)" = disabled ]
scx_sis --list-features >/tmp/lf.txt
check list-features "$(cat /tmp/lf.txt)" sh -c 'grep -q "^IDLE_CORE *on" /tmp/lf.txt && grep -q "^IDLE_KICK *off" /tmp/lf.txt && [ $(grep -c . /tmp/lf.txt) = 22 ]'
# -V: the build id as the scx schedulers print it (version, git hash, target, scx_utils)
scx_sis -V >/tmp/v.txt 2>&1
check version-build-id "$(cat /tmp/v.txt)" grep -Eq '^scx_sis [0-9]+\.[0-9]+\.[0-9]+(-g[0-9a-f]+(-dirty)?)? [a-z0-9_]+-[a-z0-9_-]+(/debug)? \(scx_utils [0-9.]+\)$' /tmp/v.txt
