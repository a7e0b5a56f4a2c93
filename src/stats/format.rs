// SPDX-License-Identifier: GPL-2.0-only
//! An interval printed: the one-line summary and the per-step table.

use super::*;

impl Metrics {
    pub fn format<W: Write>(&self, w: &mut W) -> Result<()> {
        let n = self.select_cpu;
        let rate = if self.interval_s > 0.0 {
            n as f64 / self.interval_s
        } else {
            n as f64
        };
        // WF_CURRENT_CPU and kthread stacking are rare: shown in an interval that has them
        let rare = [
            bpf_intf::sis_stat_STAT_CURRENT_CPU,
            bpf_intf::sis_stat_STAT_KTHREAD,
        ];
        let steps: Vec<String> = STEPS
            .iter()
            .filter(|st| !rare.contains(&st.idx) || self.counter(st.idx) > 0)
            .map(|st| format!("{} {:.0}", st.short, pct(self.counter(st.idx), n)))
            .collect();
        let per_s = |v: u64| {
            if self.interval_s > 0.0 {
                v as f64 / self.interval_s
            } else {
                v as f64
            }
        };
        writeln!(
            w,
            "[scx_sis] {:>6.0}/s | % {} | qw {:.0} pull {:.0}+{:.0} kick {:.0}+{:.0} | miss/k core {:.0} cpu {:.0} stack {:.0} idle {:.1} | lat {:.0}/{:.0}/{:.0}us | scan {:.1}/{}/{} cut {:.0}% fp {:.0}% lost {:.1}/k | {:.0}ns | feat {}{}",
            rate,
            steps.join(" "),
            per_s(self.queued_wakeup),
            per_s(self.pulls),
            per_s(self.steals),
            per_s(self.tick_kicks),
            per_s(self.idle_kicks),
            self.missed_idle_core_per_1k,
            self.missed_idle_cpu_per_1k,
            self.stacked_per_1k,
            self.idle_cpus_mean,
            self.lat_p50_us,
            self.lat_p99_us,
            self.lat_max_us,
            self.scan_mean,
            self.scan_p99,
            self.scan_max,
            self.cut_pct,
            self.hint_fp_pct,
            self.lost_per_1k,
            self.select_ns,
            compact_features(&self.features),
            if self.features_changed > 0 { " [changed]" } else { "" },
        )?;
        if self.restarts > 0 {
            writeln!(
                w,
                "[scx_sis] not the enabled scheduler for {:.1}s since start ({} restarts): enabled {:.1}%",
                self.not_enabled_s, self.restarts, self.enabled_pct
            )?;
        }
        Ok(())
    }

    /// The full per-step table (`--stats-detail`).
    pub fn format_detail<W: Write>(&self, w: &mut W) -> Result<()> {
        let n = self.select_cpu;
        writeln!(
            w,
            "[scx_sis] {:.1}s  features {}{}",
            self.interval_s,
            self.features,
            if self.features_changed > 0 {
                "  [features changed]"
            } else {
                ""
            }
        )?;
        writeln!(
            w,
            "  {:<20} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "step", "wakeups", "%", "p50us", "p90us", "p99us", "p99.9us", "maxus"
        )?;
        let placed = [
            ("current_cpu", self.current_cpu, None),
            ("target", self.target, None),
            ("prev", self.prev, None),
            ("kthread", self.kthread, None),
            ("recent", self.recent, None),
            (
                "target_prev_recent",
                self.target + self.prev + self.recent,
                Some("target_prev_recent"),
            ),
            ("idle_core", self.idle_core, Some("idle_core")),
            ("idle_smt", self.idle_smt, Some("idle_smt")),
            ("idle_cpu", self.idle_cpu, Some("idle_cpu")),
            // the latency class holds the three: each waited on a busy CPU
            (
                "fallback+cur+kthread",
                self.fallback + self.current_cpu + self.kthread,
                Some("fallback"),
            ),
            ("idlest (fork)", self.idlest, None),
            ("no_select", 0, Some("no_select")),
            ("queued", self.queued_wakeup, Some("queued")),
        ];
        for (name, count, lat) in placed {
            let l = lat.and_then(|k| self.lat_by_step.get(k)).cloned();
            let count = if name == "no_select" {
                l.as_ref().map_or(0, |l| l.wakeups)
            } else {
                count
            };
            match l {
                Some(l) => writeln!(
                    w,
                    "  {:<20} {:>9} {:>6.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.0}",
                    name,
                    count,
                    // % of select_cpu calls; single-CPU wakeups make none
                    if name == "no_select" {
                        f64::NAN
                    } else {
                        pct(count, n)
                    },
                    l.p50_us,
                    l.p90_us,
                    l.p99_us,
                    l.p999_us,
                    l.max_us
                )?,
                None => writeln!(w, "  {:<20} {:>9} {:>6.1}", name, count, pct(count, n))?,
            }
        }
        writeln!(
            w,
            "  {:<20} {:>9}        {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.0}",
            "all wakeups",
            self.lat_wakeups,
            self.lat_p50_us,
            self.lat_p90_us,
            self.lat_p99_us,
            self.lat_p999_us,
            self.lat_max_us
        )?;
        writeln!(w, "  search: select_cpu {} scanned {} (mean {:.2} p99 {} max {}, ever {}) lost claims {} ({:.2}/1k) {:.0} ns/call",
            n, self.scanned, self.scan_mean, self.scan_p99, self.scan_max, self.scan_max_ever, self.lost_claims, self.lost_per_1k, self.select_ns)?;
        writeln!(w, "  bounds: walks {} cut by SIS_UTIL {} ({:.1}%) SIS_AVG_CPU {} ({:.1}%) SIS_PROP {} ({:.1}%)  timed walks {} ({:.0} ns each)",
            self.scan_calls, self.sis_util_cut, self.sis_util_cut_pct, self.sis_avg_cpu_cut, self.sis_avg_cpu_cut_pct, self.sis_prop_cut, self.sis_prop_cut_pct, self.scan_timed, self.scan_cost_ns)?;
        writeln!(w, "  hint: set {} true {} false {} (fp {:.1}%)  wake_affine {} (weight {}) wake_wide {}  migrations {} (cross-LLC {})",
            self.hint_set, self.hint_true, self.hint_false, self.hint_fp_pct, self.wake_affine, self.wa_weight, self.wake_wide, self.migrations, self.migrations_llc)?;
        writeln!(w, "  quality: {} wakeups classified, idle core existed {} missed {} ({:.1}/1k, {} by target/prev/recent), idle CPU existed {} missed {} ({:.1}/1k), stacked {} ({:.1}/1k), idle CPUs mean {:.2}",
            self.q_wakeups, self.q_idle_core, self.q_missed_core, self.missed_idle_core_per_1k, self.q_missed_core_early, self.q_idle_cpu, self.q_missed_cpu, self.missed_idle_cpu_per_1k, self.q_stacked, self.stacked_per_1k, self.idle_cpus_mean)?;
        if self.progs.values().any(|p| p.runs > 0) {
            let per: Vec<String> = self
                .progs
                .iter()
                .map(|(k, p)| format!("{k} {:.0}x{}", p.ns_per_run, p.runs))
                .collect();
            writeln!(
                w,
                "  bpf ns x runs: {}  ({:.0} ns per select_cpu in all)",
                per.join(" "),
                self.bpf_ns_per_wakeup
            )?;
        }
        writeln!(
            w,
            "  queueing: direct {} cpu_queued {} shared {} pinned {} reenq {}  balance: pulls {} steals {} (remote node {}) tick_kicks {} idle_kicks {}  newidle: runs {} cost_cut {} random_skip {} numa_kept {} hot {}  busy balance: runs {} moved smt {} llc {} node {} sys {} hot {}  idle balance: nohz_kicks {} active {}  fork_loaded {} fork_numa_local {}",
            self.direct,
            self.cpu_queued,
            self.shared,
            self.pinned,
            self.reenq,
            self.pulls,
            self.steals,
            self.steals_remote,
            self.tick_kicks,
            self.idle_kicks,
            self.ni_runs,
            self.ni_cost_cut,
            self.ni_random_skip,
            self.ni_numa_kept,
            self.ni_hot,
            self.lb_runs,
            self.lb_smt,
            self.lb_llc,
            self.lb_node,
            self.lb_sys,
            self.lb_hot,
            self.nohz_kicks,
            self.lb_active,
            self.fork_loaded,
            self.fork_numa_local
        )?;
        writeln!(
            w,
            "  eevdf: wakeup_preempt {} (of SCHED_IDLE {}, short {}, fork {}) place_lag {} deadline_initial {} rel_deadline {} delay_paid {} protect_cut {} pick_ineligible {} sched_idle {} starved {} offline_kicks {} hrtick {} (armed {})",
            self.wakeup_preempt,
            self.preempt_idle,
            self.preempt_short,
            self.fork_preempt,
            self.place_lag,
            self.deadline_initial,
            self.rel_deadline,
            self.delay_paid,
            self.protect_cut,
            self.pick_ineligible,
            self.sched_idle,
            self.starved,
            self.offline_kicks,
            self.hrtick,
            self.hrtick_armed
        )?;
        Ok(())
    }
}
