# SPDX-License-Identifier: GPL-2.0-only
# suite: bounds 1:4:2 newest 500
# bounds.sh: the scan bounds of each era. On an LLC that hackbench keeps busy, each
# bound cuts the idle-CPU walk and the others do not; with all three off the walk
# covers the whole LLC (the seed's masterx); with SIS_UTIL on, SIS_PROP's count is overridden (5.20-6.6) but still timed.
. /tests/lib.sh
plan 16
N=$(nproc)
tot() { total $2 /tmp/b-$1.log; }
# run NAME FEATURES: scx_sis with those features under hackbench on every CPU
run() {
	start_sis /tmp/b-$1.log -f "$2" || { fail "$1-start" "$(tail -3 /tmp/b-$1.log)"; return; }
	end=$(($(date +%s) + 8))
	while [ "$(date +%s)" -lt $end ]; do hackbench -g 2 -f 4 -l 40 >/dev/null 2>&1; done
	stop_sis
	echo "# $1 ($2): $(totals /tmp/b-$1.log select_cpu scan_calls scanned scan_max_ever sis_util_cut sis_avg_cpu_cut sis_prop_cut scan_timed scan_cost_ns idle_cpu fallback)"
}
cuts() { echo "util=$(tot $1 sis_util_cut) avg_cpu=$(tot $1 sis_avg_cpu_cut) prop=$(tot $1 sis_prop_cut)"; }

run masterx NO_SIS_UTIL
check masterx-no-cuts "$(cuts masterx)" [ "$(tot masterx sis_util_cut)" = 0 -a "$(tot masterx sis_avg_cpu_cut)" = 0 -a "$(tot masterx sis_prop_cut)" = 0 ]
check masterx-walks-whole-llc "scan_max_ever=$(tot masterx scan_max_ever) cpus=$N" [ "$(tot masterx scan_max_ever)" -ge "$N" ]
check masterx-untimed "scan_timed=$(tot masterx scan_timed)" [ "$(tot masterx scan_timed)" = 0 ]

run avg_cpu NO_SIS_UTIL,SIS_AVG_CPU
check avg-cpu-cuts "$(cuts avg_cpu)" [ "$(tot avg_cpu sis_avg_cpu_cut)" -gt 0 ]
check avg-cpu-only "$(cuts avg_cpu)" [ "$(tot avg_cpu sis_util_cut)" = 0 -a "$(tot avg_cpu sis_prop_cut)" = 0 ]
check avg-cpu-timed "scan_timed=$(tot avg_cpu scan_timed) scan_cost_ns=$(tot avg_cpu scan_cost_ns)" [ "$(tot avg_cpu scan_timed)" -gt 0 ]

run prop NO_SIS_UTIL,SIS_PROP
check prop-cuts "$(cuts prop)" [ "$(tot prop sis_prop_cut)" -gt 0 ]
check prop-only "$(cuts prop)" [ "$(tot prop sis_util_cut)" = 0 -a "$(tot prop sis_avg_cpu_cut)" = 0 ]
check prop-timed "scan_timed=$(tot prop scan_timed)" [ "$(tot prop scan_timed)" -gt 0 ]

run util ""
check util-cuts "$(cuts util)" [ "$(tot util sis_util_cut)" -gt 0 -a "$(tot util sis_prop_cut)" = 0 -a "$(tot util sis_avg_cpu_cut)" = 0 ]

run util_prop SIS_PROP
check util-overrides-prop "$(cuts util_prop)" [ "$(tot util_prop sis_prop_cut)" = 0 -a "$(tot util_prop sis_util_cut)" -gt 0 ]
check util-prop-timed "scan_timed=$(tot util_prop scan_timed)" [ "$(tot util_prop scan_timed)" -gt 0 ]
check util-prop-identity "$(totals /tmp/b-util_prop.log select_cpu)" identity /tmp/b-util_prop.log

# live: --set turns a bound on in the running scheduler
start_sis /tmp/b-live.log -f NO_SIS_UTIL || fail live-start "$(tail -3 /tmp/b-live.log)"
scx_sis --set SIS_PROP,SIS_AVG_CPU >/dev/null
check live-set "$(scx_sis --set)" sh -c 'scx_sis --set | grep -q " SIS_AVG_CPU SIS_PROP PLACE_LAG"'
hackbench -g 2 -f 4 -l 200 >/dev/null 2>&1
stop_sis
check live-cuts "$(cuts live)" [ $(($(tot live sis_avg_cpu_cut) + $(tot live sis_prop_cut))) -gt 0 ]
check live-exit "rc=$SIS_RC" [ "$SIS_RC" = 0 ]
