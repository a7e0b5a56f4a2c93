# SPDX-License-Identifier: GPL-2.0-only
# suite: native-bench 1:4:2 newest 600
# native_bench.sh: `cargo xtask bench` on a sched_ext host, with this guest as that
# host (the xtask binary runs here, natively). The tables come out with the host
# described in the header; the BPF figures come without kernel.bpf_stats_enabled;
# the kernel's sched features, the sysctl and the scheduler are as found afterwards;
# it refuses in one line with another sched_ext scheduler loaded; a kill mid-run
# (the trap Ctrl-C takes too) still restores everything.
. /tests/lib.sh
plan 11
export SCX_SIS_TESTS=/tests
KF=/sys/kernel/debug/sched/features
F0=$(cat $KF) S0=$(cat /proc/sys/kernel/bpf_stats_enabled)
# noic: another build of scx_sis (here a copy of this one), with a feature off
B="bench wakeup --sched eevdf,sis,noic=sis@$(command -v scx_sis):NO_IDLE_CORE,eevdf:NO_SIS_UTIL --runs 2 --secs 2 --loads 4 --no-warmup --no-build --seed 3"
xtask $B --out /tmp/nb >/tmp/nb.txt 2>&1
rc=$?
grep -E '^bench: |^bench-error' /tmp/nb.txt | sed 's/^/# /' | head -6
check exit-0 "exit $rc: $(tail -3 /tmp/nb.txt)" [ $rc = 0 ]
check header-native "$(grep -m1 '^bench: ' /tmp/nb.txt)" sh -c "grep -q '^bench: native host: .* 8 CPUs in 1 socket(s), 1 LLC(s), 4 cores, SMT on (as the kernel sees it); kernel $(uname -r); cpufreq governor .*; other load before the start: ' /tmp/nb.txt"
rows() { grep -c "^wakeup,$1," /tmp/nb/wakeup.csv 2>/dev/null; }
check tables "rows eevdf=$(rows eevdf) sis=$(rows sis) noic=$(rows noic)" sh -c '[ "$(grep -c "^wakeup,sis," /tmp/nb/wakeup.csv)" -ge 2 ] && [ "$(grep -c "^wakeup,eevdf," /tmp/nb/wakeup.csv)" -ge 2 ] && grep -q "vs eevdf\|eevdf" /tmp/nb.txt'
# the other build ran and is named in the header, with the id it prints
named="noic is scx_sis from $(command -v scx_sis) ($(scx_sis --version | sed 's/^scx_sis //'))"
check other-build "rows noic=$(rows noic); $(grep -o 'noic is scx_sis from [^;]*' /tmp/nb.txt | head -1)" sh -c "[ \"\$(grep -c '^wakeup,noic,' /tmp/nb/wakeup.csv)\" -ge 2 ] && grep -qF '$named' /tmp/nb.txt"
# the CSV is long: suite,sched,load,run,metric,value
ns=$(awk -F, '$2 == "sis" && $5 == "bpf_select_ns" { print $6; exit }' /tmp/nb/wakeup.csv)
check bpf-stats-without-sysctl "sis bpf_select_ns=${ns:-none}, bpf_stats_enabled=$(cat /proc/sys/kernel/bpf_stats_enabled)" awk -v n="$ns" 'BEGIN { exit !(n != "" && n + 0 > 0) }'
check restored "features $( [ "$(cat $KF)" = "$F0" ] && echo same || echo changed), bpf_stats_enabled $S0 -> $(cat /proc/sys/kernel/bpf_stats_enabled)" sh -c "[ \"\$(cat $KF)\" = \"$F0\" ] && [ \"\$(cat /proc/sys/kernel/bpf_stats_enabled)\" = $S0 ]"
check left-default "state=$(state)" [ "$(state)" = disabled ]
start_sis /tmp/o.log || fail other-start "$(tail -3 /tmp/o.log)"
xtask $B --out /tmp/nb2 >/tmp/nb2.txt 2>&1
rc=$?
check refuses-when-loaded "exit $rc: $(cat /tmp/nb2.txt)" sh -c "[ $rc = 2 ] && [ \$(grep -c . /tmp/nb2.txt) = 1 ] && grep -q 'another sched_ext scheduler is loaded' /tmp/nb2.txt"
stop_sis
# killed while scx_sis runs: bench.sh's trap (Ctrl-C's too) puts everything back
xtask bench wakeup --sched sis:NO_IDLE_CORE,eevdf:NO_SIS_UTIL --runs 3 --secs 5 --loads 4 --no-build --seed 5 --out /tmp/nb3 >/tmp/nb3.txt 2>&1 &
X=$!
wait_state enabled 120
sleep 1
# the first of bench.sh's processes is the script (the others are its subshells)
kill -TERM "$(ps -o pid,args | grep '[s]h /tests/bench.sh' | awk 'NR == 1 { print $1 }')"
wait $X
rc=$?
check interrupted-exit "exit $rc: $(tail -2 /tmp/nb3.txt)" [ $rc = 130 ]
check interrupted-default "state=$(state)" wait_state disabled 20
check interrupted-restored "features $( [ "$(cat $KF)" = "$F0" ] && echo same || echo changed)" [ "$(cat $KF)" = "$F0" ]
