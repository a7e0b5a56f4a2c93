// SPDX-License-Identifier: GPL-2.0-only
//! Counters exported through scx_stats: totals from BPF, per-interval deltas and
//! `--monitor`. The counter table, steps and classes are in counters.rs, the printed
//! forms in format.rs.

use crate::bpf_intf;
use crate::derived::{self, DERIVED};
use crate::hist;
use anyhow::Result;
use scx_stats::prelude::*;
use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

mod counters;
mod format;
#[cfg(test)]
mod tests;

pub use counters::*;

#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[stat(top)]
pub struct Metrics {
    #[stat(desc = "Active features, as in /sys/kernel/debug/sched/features")]
    pub features: String,
    #[stat(desc = "Seconds covered by this sample")]
    pub interval_s: f64,
    #[stat(desc = "Seconds since the scheduler attached, when the sample was taken")]
    pub uptime_s: f64,
    #[stat(
        desc = "The placement step fields, space-separated in fair.c's order: their counts sum to select_cpu"
    )]
    pub steps: String,
    #[stat(desc = "ops.select_cpu calls (wakeups searched)")]
    pub select_cpu: u64,
    #[stat(
        desc = "Queued on the waker's CPU, busy, for a WF_CURRENT_CPU wakeup (seccomp's synchronous user notifications), before any other step"
    )]
    pub current_cpu: u64,
    #[stat(desc = "Placed on target: the waker's or prev CPU chosen by wake_affine, idle")]
    pub target: u64,
    #[stat(desc = "Placed on prev_cpu, idle and sharing the LLC with target")]
    pub prev: u64,
    #[stat(
        desc = "Stacked on prev_cpu, busy, by a per-CPU kthread running alone there (is_per_cpu_kthread(current)): the wakee waits on prev's queue"
    )]
    pub kthread: u64,
    #[stat(desc = "Placed on p->recent_used_cpu (RECENT_USED)")]
    pub recent: u64,
    #[stat(desc = "Placed on a CPU whose whole core was idle (IDLE_CORE walk)")]
    pub idle_core: u64,
    #[stat(desc = "Placed on an idle SMT sibling of prev (IDLE_SMT)")]
    pub idle_smt: u64,
    #[stat(desc = "Placed on an idle CPU found by select_idle_cpu")]
    pub idle_cpu: u64,
    #[stat(desc = "Nothing idle found: target returned unclaimed, task queued")]
    pub fallback: u64,
    #[stat(
        desc = "New tasks (fork) placed on an idle CPU by the slow path (find_idlest_cpu: idle core first)"
    )]
    pub idlest: u64,
    #[stat(
        desc = "... and forks that found nothing idle, sent to the least loaded CPU rather than the parent's (counted as fallback)"
    )]
    pub fork_loaded: u64,
    #[stat(
        desc = "Fork searches that adjust_numa_imbalance() kept on the parent's node where another node had more idle CPUs (decisions: the fork still counts as idlest or fallback)"
    )]
    pub fork_numa_local: u64,
    #[stat(desc = "Idle CPUs lost between the idle test and the claim")]
    pub lost_claims: u64,
    #[stat(desc = "CPUs whose idle state the searches tested")]
    pub scanned: u64,
    #[stat(desc = "select_idle_cpu walks started")]
    pub scan_calls: u64,
    #[stat(desc = "select_idle_cpu walks stopped or skipped by the SIS_UTIL limit")]
    pub sis_util_cut: u64,
    #[stat(
        desc = "select_idle_cpu walks skipped by SIS_AVG_CPU (avg_idle / 512 < avg_scan_cost + 1)"
    )]
    pub sis_avg_cpu_cut: u64,
    #[stat(
        desc = "select_idle_cpu walks stopped by SIS_PROP's limit (when SIS_UTIL does not override it)"
    )]
    pub sis_prop_cut: u64,
    #[stat(desc = "Walks timed for avg_scan_cost (while SIS_AVG_CPU or SIS_PROP is on)")]
    pub scan_timed: u64,
    #[stat(desc = "Their summed cost, ns (the samples avg_scan_cost averages)")]
    pub scan_ns: u64,
    #[stat(desc = "has_idle_cores hint set (0 -> 1) by a core going wholly idle")]
    pub hint_set: u64,
    #[stat(desc = "Core walks under the hint that found an idle core")]
    pub hint_true: u64,
    #[stat(desc = "Core walks under the hint that found none (hint false positive, cleared)")]
    pub hint_false: u64,
    #[stat(desc = "Tasks inserted straight into a claimed CPU's local DSQ")]
    pub direct: u64,
    #[stat(desc = "Tasks queued on an LLC's shared vtime DSQ (IDLE_KICK)")]
    pub shared: u64,
    #[stat(desc = "Single-CPU tasks queued on their CPU")]
    pub pinned: u64,
    #[stat(desc = "Tasks a CPU took from another LLC (its shared DSQ or a CPU queue there)")]
    pub steals: u64,
    #[stat(desc = "... of which from an LLC of another NUMA node (after the node's own LLCs)")]
    pub steals_remote: u64,
    #[stat(
        desc = "Wakeups that reached enqueue without select_cpu: queued to the CPU the task is still on (TTWU_QUEUE), not single-CPU tasks"
    )]
    pub queued_wakeup: u64,
    #[stat(
        desc = "Tasks queued on their own CPU's DSQ, as on fair.c's runqueue (fallback on target, WF_CURRENT_CPU wakeups, kthread stacking on prev, queued wakeups, preempted tasks)"
    )]
    pub cpu_queued: u64,
    #[stat(
        desc = "Newidle balance: tasks a CPU about to idle took from a sibling's or its LLC's CPU queues"
    )]
    pub pulls: u64,
    #[stat(desc = "nohz kick: ticks with tasks waiting that woke an idle CPU to pull")]
    pub tick_kicks: u64,
    #[stat(desc = "Idle CPUs kicked at enqueue by IDLE_KICK")]
    pub idle_kicks: u64,
    #[stat(
        desc = "Tasks a higher class (RT, stop) pushed off a CPU, left for the LLC's other CPUs with a kick"
    )]
    pub reenq: u64,
    #[stat(desc = "Periodic balance of busy CPUs: tasks moved between SMT siblings")]
    pub lb_smt: u64,
    #[stat(desc = "... between cores of an LLC")]
    pub lb_llc: u64,
    #[stat(desc = "... between LLCs of a node (the package level)")]
    pub lb_node: u64,
    #[stat(desc = "... between NUMA nodes")]
    pub lb_sys: u64,
    #[stat(desc = "Periodic balances run: a level due on a busy CPU (sched_balance_rq)")]
    pub lb_runs: u64,
    #[stat(
        desc = "Refusals by task_hot() in the busy balance: a task that ran on its CPU within 0.5 ms left where it was"
    )]
    pub lb_hot: u64,
    #[stat(
        desc = "nohz kicks by busy CPUs: two or more busy CPUs in an LLC woke an idle CPU to balance for itself"
    )]
    pub nohz_kicks: u64,
    #[stat(
        desc = "Active balance: running tasks an idle CPU's balance had preempted and pushed to it (packed cores spread)"
    )]
    pub lb_active: u64,
    #[stat(
        desc = "Newidle walks begun under avg_idle's budget: a CPU's own queues had nothing for it and a task waited in an LLC the walk reads (kicked CPUs walk ungated, uncounted)"
    )]
    pub ni_runs: u64,
    #[stat(
        desc = "... stopped before a level by avg_idle's budget (avg_idle < cost so far + the level's max_newidle_lb_cost)"
    )]
    pub ni_cost_cut: u64,
    #[stat(desc = "Levels NI_RANDOM passed over (sampled at their success rate)")]
    pub ni_random_skip: u64,
    #[stat(
        desc = "NUMA levels a newidle walk found balanced (calculate_imbalance(), adjust_numa_imbalance()): nothing taken from another node"
    )]
    pub ni_numa_kept: u64,
    #[stat(
        desc = "Refusals by task_hot() in newidle pulls: a task that ran on its CPU within 0.5 ms left where it was"
    )]
    pub ni_hot: u64,
    #[stat(desc = "Wakeups that preempted the running task of their CPU (wakeup_preempt_fair)")]
    pub wakeup_preempt: u64,
    #[stat(desc = "... of which a SCHED_IDLE task, preempted by a wakee of another policy")]
    pub preempt_idle: u64,
    #[stat(
        desc = "... of which past the running task's protection by a shorter request (PREEMPT_SHORT)"
    )]
    pub preempt_short: u64,
    #[stat(desc = "... of which a fork's first enqueue (wake_up_new_task(), WF_FORK)")]
    pub fork_preempt: u64,
    #[stat(desc = "Placements that kept the lag the task left with (place_entity(), PLACE_LAG)")]
    pub place_lag: u64,
    #[stat(desc = "New tasks' first deadlines set half a request away (PLACE_DEADLINE_INITIAL)")]
    pub deadline_initial: u64,
    #[stat(
        desc = "Placements of tasks that left without sleeping (a migration, an attribute change) and kept their relative deadline (PLACE_REL_DEADLINE)"
    )]
    pub rel_deadline: u64,
    #[stat(
        desc = "Wakeups whose sleeping debt V's progress on their rq paid down (DELAY_DEQUEUE, emulated)"
    )]
    pub delay_paid: u64,
    #[stat(
        desc = "Runs protected short of their deadline: NO_RUN_TO_PARITY, or a shorter queued request (set_protect_slice())"
    )]
    pub protect_cut: u64,
    #[stat(desc = "Picks that passed over earlier deadlines not yet eligible (pick_eevdf)")]
    pub pick_ineligible: u64,
    #[stat(desc = "Wakeups placed on a CPU that ran only SCHED_IDLE tasks (choose_idle_cpu)")]
    pub sched_idle: u64,
    #[stat(
        desc = "Tasks queued for half the watchdog's timeout, handed to the global DSQ (not fair.c)"
    )]
    pub starved: u64,
    #[stat(
        desc = "Runnable tasks stopped on a CPU sched_ext held offline in a hotplug: the CPU kicked itself (not fair.c)"
    )]
    pub offline_kicks: u64,
    #[stat(desc = "Runs the HRTICK timer ended on time, before the tick")]
    pub hrtick: u64,
    #[stat(desc = "HRTICK timer armings (one interrupt each on 7.0+, where an irq_work does it)")]
    pub hrtick_armed: u64,
    #[stat(
        desc = "Reads of a CPU's EEVDF sums retried because another CPU was updating them (not fair.c, which reads under the rq lock)"
    )]
    pub sums_retry: u64,
    #[stat(
        desc = "Moves of a task's EEVDF count that gave way to another CPU's (not fair.c, where rq locks serialize them)"
    )]
    pub acct_races: u64,
    #[stat(
        desc = "Placements that found V more than 2^36 ns (69 s) from its last reading on that CPU: broken EEVDF sums (0 expected)"
    )]
    pub v_jumps: u64,

    #[stat(desc = "Wakeups placed on a CPU other than prev_cpu")]
    pub migrations: u64,
    #[stat(desc = "Wakeups placed in another LLC than prev_cpu's")]
    pub migrations_llc: u64,
    #[stat(desc = "Wakeups whose target WAKE_AFFINE moved to the waker's CPU")]
    pub wake_affine: u64,
    #[stat(desc = "... of which WA_WEIGHT decided: the waker's CPU was the lighter by PELT load")]
    pub wa_weight: u64,
    #[stat(
        desc = "Wakeups wake_wide() kept off the waker's CPU (WAKE_WIDE: too many wakee flips)"
    )]
    pub wake_wide: u64,
    #[stat(
        desc = "Wakeups with no SD_WAKE_AFFINE domain spanning the waker's and prev's nodes (beyond node_reclaim_distance): target = prev"
    )]
    pub wake_far: u64,
    #[stat(
        desc = "Wakeups (not forks) classified against the idle masks read just before the decision (0 with --no-quality)"
    )]
    pub q_wakeups: u64,
    #[stat(desc = "... of which an allowed, fully idle core existed in target's LLC")]
    pub q_idle_core: u64,
    #[stat(desc = "... and the task went to a CPU whose core was not fully idle")]
    pub q_missed_core: u64,
    #[stat(
        desc = "... of which the current_cpu, target, prev, kthread or recent step placed it (they take a CPU without testing its core, as in fair.c)"
    )]
    pub q_missed_core_early: u64,
    #[stat(desc = "... of which an allowed idle CPU existed in target's LLC")]
    pub q_idle_cpu: u64,
    #[stat(desc = "... and the task went to a CPU that was not idle")]
    pub q_missed_cpu: u64,
    #[stat(desc = "... placed on a CPU that was not idle (running or about to run a task)")]
    pub q_stacked: u64,
    #[stat(desc = "Sum over classified wakeups of the allowed idle CPUs in target's LLC")]
    pub q_nr_idle: u64,
    #[stat(desc = "Wakeups that missed an existing idle core, per 1000 classified wakeups")]
    pub missed_idle_core_per_1k: f64,
    #[stat(desc = "Wakeups that missed an existing idle CPU, per 1000 classified wakeups")]
    pub missed_idle_cpu_per_1k: f64,
    #[stat(desc = "Wakeups stacked on a non-idle CPU, per 1000 classified wakeups")]
    pub stacked_per_1k: f64,
    #[stat(desc = "Mean allowed idle CPUs in target's LLC at a classified wakeup")]
    pub idle_cpus_mean: f64,
    #[stat(desc = "Longest search since the scheduler started, in CPUs tested")]
    pub scan_max_ever: u64,
    #[stat(desc = "Times the features were changed with --set (since start in totals)")]
    pub features_changed: u64,
    #[stat(
        desc = "Restarts since the loader started (the kernel unregistered scx_sis and asked for one; a CPU hotplug does not)"
    )]
    pub restarts: u64,
    #[stat(
        desc = "Seconds since the loader first attached during which scx_sis was not the enabled scheduler (between an unregistration and the next attach)"
    )]
    pub not_enabled_s: f64,
    #[stat(desc = "Share of the time since the loader first attached that scx_sis was enabled, %")]
    pub enabled_pct: f64,
    #[stat(
        desc = "PELT: tasks the CPUs' sums count runnable (cfs_rq->h_nr_runnable, summed over CPUs), at the sample"
    )]
    pub pelt_nr_runnable: u64,
    #[stat(desc = "PELT: the CPUs' load_avg summed, blocked load included, at the sample")]
    pub pelt_load_avg: u64,

    #[stat(desc = "Wakeups whose latency (runnable -> running) was measured")]
    pub lat_wakeups: u64,
    #[stat(desc = "Wakeup latency p50, us (log2 buckets, interpolated: exact to a factor of 2)")]
    pub lat_p50_us: f64,
    #[stat(desc = "Wakeup latency p90, us")]
    pub lat_p90_us: f64,
    #[stat(desc = "Wakeup latency p99, us")]
    pub lat_p99_us: f64,
    #[stat(desc = "Wakeup latency p99.9, us")]
    pub lat_p999_us: f64,
    #[stat(desc = "Wakeup latency max, us: upper edge of the highest non-empty bucket")]
    pub lat_max_us: f64,
    #[stat(
        desc = "Wakeup latency by placing step: idle_core, idle_smt, idle_cpu (with fork idlest), target_prev_recent, fallback (with current_cpu and kthread stacking), no_select (single-CPU or migration-disabled tasks), queued (queued wakeups)"
    )]
    pub lat_by_step: BTreeMap<String, LatStats>,

    #[stat(desc = "Mean CPUs tested per select_cpu")]
    pub scan_mean: f64,
    #[stat(desc = "p99 of CPUs tested per select_cpu (64 means >= 64)")]
    pub scan_p99: u64,
    #[stat(desc = "Most CPUs tested by one select_cpu in the interval (64 means >= 64)")]
    pub scan_max: u64,
    #[stat(desc = "Percent of select_idle_cpu walks stopped or skipped by SIS_UTIL")]
    pub sis_util_cut_pct: f64,
    #[stat(desc = "Percent of select_idle_cpu walks skipped by SIS_AVG_CPU")]
    pub sis_avg_cpu_cut_pct: f64,
    #[stat(desc = "Percent of select_idle_cpu walks stopped by SIS_PROP")]
    pub sis_prop_cut_pct: f64,
    #[stat(
        desc = "Percent of select_idle_cpu walks cut by any bound (SIS_UTIL, SIS_AVG_CPU, SIS_PROP)"
    )]
    pub cut_pct: f64,
    #[stat(
        desc = "Mean cost of a timed walk, ns (what avg_scan_cost tracks; 0 unless SIS_AVG_CPU or SIS_PROP is on)"
    )]
    pub scan_cost_ns: f64,
    #[stat(desc = "Percent of idle-core walks whose has_idle_cores hint was wrong")]
    pub hint_fp_pct: f64,
    #[stat(desc = "Lost claims per 1000 wakeups")]
    pub lost_per_1k: f64,
    #[stat(
        desc = "Mean ns per select_cpu from the kernel's BPF program stats, which scx_sis turns on (bpf_enable_stats) while a client or --stats reads and off 10 s after the last read"
    )]
    pub select_ns: f64,

    #[stat(
        desc = "Raw wakeup latency buckets, step after step (see lat_by_step)",
        _om_skip
    )]
    pub lat_hist: Vec<u64>,
    #[stat(desc = "Raw scan-length buckets, 0..63 then >= 64", _om_skip)]
    pub scan_hist: Vec<u64>,
    #[stat(
        desc = "Kernel BPF stats of each hot-path program (on while stats are read, as for ns)"
    )]
    pub progs: BTreeMap<String, ProgStats>,
    #[stat(
        desc = "ns of all hot-path BPF programs per select_cpu call (the path's cost per wakeup)"
    )]
    pub bpf_ns_per_wakeup: f64,
    #[stat(desc = "Kernel BPF stats: total ns spent in select_cpu", _om_skip)]
    pub prog_run_ns: u64,
    #[stat(desc = "Kernel BPF stats: select_cpu runs", _om_skip)]
    pub prog_run_cnt: u64,
}

/// How an interval is printed: the one-line summary, JSON, or the per-step table.
#[derive(Clone, Copy)]
pub enum Output {
    Line,
    Json,
    Detail,
}

/// The features that differ from this kernel's defaults, from the `features` text.
fn compact_features(f: &str) -> String {
    crate::features::changed(
        crate::features::from_text(f),
        crate::features::kernel_default_mask(),
    )
}

fn pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

impl Metrics {
    /// The BPF side's totals: every CPU's counters summed, histograms merged, the
    /// longest search kept.
    pub fn from_cpus(cpus: &[bpf_intf::sis_cpu_stats]) -> Self {
        use bpf_intf::*;
        let mut c = [0u64; sis_stat_NR_SIS_STATS as usize];
        let mut m = Metrics {
            lat_hist: vec![0; (lat_class_NR_LAT_CLASSES * hist_consts_NR_LAT_BUCKETS) as usize],
            scan_hist: vec![0; hist_consts_NR_SCAN_BUCKETS as usize],
            ..Default::default()
        };
        for st in cpus {
            c.iter_mut().zip(st.cnt).for_each(|(a, b)| *a += b);
            m.lat_hist
                .iter_mut()
                .zip(st.lat.iter().flatten())
                .for_each(|(a, b)| *a += b);
            m.scan_hist
                .iter_mut()
                .zip(st.scan_hist)
                .for_each(|(a, b)| *a += b);
            m.scan_max_ever = m.scan_max_ever.max(st.scan_max);
        }
        m.set_counters(&c);
        m
    }

    /// The ten placement steps; they sum to `select_cpu` exactly.
    #[cfg(test)]
    pub fn steps(&self) -> Vec<(&'static str, u64)> {
        STEPS
            .iter()
            .map(|st| (st.name, self.counter(st.idx)))
            .collect()
    }

    /// The change from `b` to `self`, with the derived figures computed on it.
    pub fn delta(&self, b: &Self) -> Self {
        let vsub = |x: &[u64], y: &[u64]| -> Vec<u64> {
            x.iter()
                .enumerate()
                .map(|(i, v)| v.wrapping_sub(y.get(i).copied().unwrap_or(0)))
                .collect()
        };
        let mut m = self.clone();
        m.sub_counters(b);
        // the loader's own counters
        m.features_changed = self.features_changed.wrapping_sub(b.features_changed);
        m.prog_run_ns = self.prog_run_ns.wrapping_sub(b.prog_run_ns);
        m.prog_run_cnt = self.prog_run_cnt.wrapping_sub(b.prog_run_cnt);
        m.interval_s = self.uptime_s - b.uptime_s;
        for (name, p) in m.progs.iter_mut() {
            if let Some(q) = b.progs.get(name) {
                p.run_ns = p.run_ns.wrapping_sub(q.run_ns);
                p.runs = p.runs.wrapping_sub(q.runs);
            }
        }
        m.lat_hist = vsub(&self.lat_hist, &b.lat_hist);
        m.scan_hist = vsub(&self.scan_hist, &b.scan_hist);
        m.finish();
        m
    }

    /// The figures of `derived::DERIVED`, 0 where a denominator is 0.
    fn set_derived(&mut self) {
        let vals: Vec<(&str, f64)> = {
            let get = |k: &str| self.counter_named(k).unwrap_or(0) as f64;
            DERIVED
                .iter()
                .map(|d| (d.name, derived::value(d, &get).unwrap_or(0.0)))
                .collect()
        };
        for (name, v) in vals {
            *self
                .derived_field(name)
                .expect("every DERIVED figure is a field") = v;
        }
    }

    /// The field that holds derived figure `name`.
    fn derived_field(&mut self, name: &str) -> Option<&mut f64> {
        Some(match name {
            "cut_pct" => &mut self.cut_pct,
            "sis_util_cut_pct" => &mut self.sis_util_cut_pct,
            "sis_avg_cpu_cut_pct" => &mut self.sis_avg_cpu_cut_pct,
            "sis_prop_cut_pct" => &mut self.sis_prop_cut_pct,
            "hint_fp_pct" => &mut self.hint_fp_pct,
            "lost_per_1k" => &mut self.lost_per_1k,
            "missed_idle_core_per_1k" => &mut self.missed_idle_core_per_1k,
            "missed_idle_cpu_per_1k" => &mut self.missed_idle_cpu_per_1k,
            "stacked_per_1k" => &mut self.stacked_per_1k,
            "idle_cpus_mean" => &mut self.idle_cpus_mean,
            _ => return None,
        })
    }

    /// Compute the percentiles and rates from the raw counters and buckets.
    pub fn finish(&mut self) {
        self.steps = STEPS.iter().map(|s| s.name).collect::<Vec<_>>().join(" ");
        let nb = self.lat_hist.len() / LAT_CLASSES.len();
        let mut all = vec![0u64; nb];
        self.lat_by_step.clear();
        for (i, name) in LAT_CLASSES.iter().enumerate() {
            let b = &self.lat_hist[i * nb..(i + 1) * nb];
            for (a, v) in all.iter_mut().zip(b) {
                *a += v;
            }
            self.lat_by_step
                .insert(name.to_string(), LatStats::from_buckets(b));
        }
        let l = LatStats::from_buckets(&all);
        self.lat_wakeups = l.wakeups;
        self.lat_p50_us = l.p50_us;
        self.lat_p90_us = l.p90_us;
        self.lat_p99_us = l.p99_us;
        self.lat_p999_us = l.p999_us;
        self.lat_max_us = l.max_us;
        self.scan_mean = hist::mean_scan(&self.scan_hist);
        self.scan_p99 = hist::scan_percentile(&self.scan_hist, 0.99);
        self.scan_max = hist::scan_max(&self.scan_hist);
        self.set_derived();
        self.scan_cost_ns = if self.scan_timed > 0 {
            self.scan_ns as f64 / self.scan_timed as f64
        } else {
            0.0
        };
        let mut all_ns = 0;
        for p in self.progs.values_mut() {
            p.ns_per_run = derived::ns_per_run(p.run_ns as f64, p.runs as f64).unwrap_or(0.0);
            all_ns += p.run_ns;
        }
        let wakeups = self.select_cpu as f64;
        self.bpf_ns_per_wakeup = derived::bpf_ns_per_wakeup(all_ns as f64, wakeups).unwrap_or(0.0);
        let (ns, runs) = (self.prog_run_ns as f64, self.prog_run_cnt as f64);
        self.select_ns = derived::ns_per_run(ns, runs).unwrap_or(0.0);
    }
}

pub fn server_data() -> StatsServerData<(), Metrics> {
    let open: Box<dyn StatsOpener<(), Metrics>> = Box::new(move |(req_ch, res_ch)| {
        req_ch.send(())?;
        let mut prev = res_ch.recv()?;
        let read: Box<dyn StatsReader<(), Metrics>> = Box::new(move |_args, (req_ch, res_ch)| {
            req_ch.send(())?;
            let cur = res_ch.recv()?;
            let delta = cur.delta(&prev);
            prev = cur;
            delta.to_json()
        });
        Ok(read)
    });
    StatsServerData::new()
        .add_meta(LatStats::meta())
        .add_meta(ProgStats::meta())
        .add_meta(Metrics::meta())
        .add_ops("top", StatsOps { open, close: None })
}

/// One interval as the user asked for it: a line, the detail table or JSON.
pub fn render(m: &Metrics, out: Output) -> Result<Vec<u8>> {
    let mut o = Vec::new();
    match out {
        Output::Line => m.format(&mut o)?,
        Output::Detail => m.format_detail(&mut o)?,
        Output::Json => writeln!(o, "{}", serde_json::to_string(m)?)?,
    }
    Ok(o)
}

pub fn print(m: &Metrics, out: Output) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(&render(m, out)?)?;
    o.flush()?;
    Ok(())
}

pub fn monitor(intv: Duration, shutdown: Arc<AtomicBool>, out: Output) -> Result<()> {
    scx_utils::monitor_stats::<Metrics>(
        &[],
        intv,
        || shutdown.load(Ordering::Relaxed),
        |m| print(&m, out),
    )
}
