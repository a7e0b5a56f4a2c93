// SPDX-License-Identifier: GPL-2.0-only
//! Counters exported through scx_stats: totals from BPF, per-interval deltas, the
//! readable line, and `--monitor`.

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
        desc = "Refusals by task_hot() in the busy balance: a task that ran within 0.5 ms left where it was"
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
        desc = "Newidle walks begun under avg_idle's budget: a CPU's own queues had nothing for it (kicked CPUs walk ungated, uncounted)"
    )]
    pub ni_runs: u64,
    #[stat(
        desc = "... stopped before a level by avg_idle's budget (avg_idle < cost so far + the level's max_newidle_lb_cost)"
    )]
    pub ni_cost_cut: u64,
    #[stat(desc = "Levels NI_RANDOM passed over (sampled at their success rate)")]
    pub ni_random_skip: u64,
    #[stat(desc = "Wakeups that preempted the running task of their CPU (wakeup_preempt_fair)")]
    pub wakeup_preempt: u64,
    #[stat(desc = "... of which a SCHED_IDLE task, preempted by a wakee of another policy")]
    pub preempt_idle: u64,
    #[stat(
        desc = "... of which past the running task's protection by a shorter request (PREEMPT_SHORT)"
    )]
    pub preempt_short: u64,
    #[stat(desc = "Picks that passed over earlier deadlines not yet eligible (pick_eevdf)")]
    pub pick_ineligible: u64,
    #[stat(desc = "Wakeups placed on a CPU that ran only SCHED_IDLE tasks (choose_idle_cpu)")]
    pub sched_idle: u64,
    #[stat(
        desc = "Tasks queued for half the watchdog's timeout, handed to the global DSQ (not fair.c)"
    )]
    pub starved: u64,
    #[stat(desc = "Runs the HRTICK timer ended on time, before the tick")]
    pub hrtick: u64,

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

/// The BPF counters: each `Metrics` field filled from one `enum sis_stat` index of
/// intf.h. Declared once here: decoding, `delta` and the tests read this list, and a
/// unit test fails when an index of intf.h is missing from it.
macro_rules! counter_table {
    ($($field:ident = $idx:ident),* $(,)?) => {
        impl Metrics {
            /// Fill the counter fields from the per-CPU sums, indexed by `enum sis_stat`.
            pub fn set_counters(&mut self, c: &[u64]) {
                $( self.$field = c.get(bpf_intf::$idx as usize).copied().unwrap_or(0); )*
            }

            /// Subtract `b`'s BPF counters from ours.
            fn sub_counters(&mut self, b: &Self) {
                $( self.$field = self.$field.wrapping_sub(b.$field); )*
            }

            /// A BPF counter by its field name (the names `derived.rs` uses).
            pub fn counter_named(&self, name: &str) -> Option<u64> {
                $( if name == stringify!($field) { return Some(self.$field); } )*
                None
            }

            /// A BPF counter by its `enum sis_stat` index.
            pub fn counter(&self, idx: u32) -> u64 {
                $( if idx == bpf_intf::$idx as u32 { return self.$field; } )*
                0
            }
        }

        #[cfg(test)]
        const COUNTER_INDEXES: &[u32] = &[$(bpf_intf::$idx as u32),*];
    };
}

counter_table! {
    select_cpu = sis_stat_STAT_SELECT,
    current_cpu = sis_stat_STAT_CURRENT_CPU,
    target = sis_stat_STAT_TARGET,
    prev = sis_stat_STAT_PREV,
    kthread = sis_stat_STAT_KTHREAD,
    recent = sis_stat_STAT_RECENT,
    idle_core = sis_stat_STAT_IDLE_CORE,
    idle_smt = sis_stat_STAT_IDLE_SMT,
    idle_cpu = sis_stat_STAT_IDLE_CPU,
    fallback = sis_stat_STAT_FALLBACK,
    idlest = sis_stat_STAT_IDLEST,
    fork_loaded = sis_stat_STAT_FORK_LOADED,
    fork_numa_local = sis_stat_STAT_FORK_NUMA_LOCAL,
    lost_claims = sis_stat_STAT_LOST_CLAIM,
    scanned = sis_stat_STAT_SCANNED,
    scan_calls = sis_stat_STAT_SCAN_CALLS,
    sis_util_cut = sis_stat_STAT_SIS_UTIL_CUT,
    sis_avg_cpu_cut = sis_stat_STAT_SIS_AVG_CPU_CUT,
    sis_prop_cut = sis_stat_STAT_SIS_PROP_CUT,
    scan_timed = sis_stat_STAT_SCAN_TIMED,
    scan_ns = sis_stat_STAT_SCAN_NS,
    hint_set = sis_stat_STAT_HINT_SET,
    hint_true = sis_stat_STAT_HINT_TRUE,
    hint_false = sis_stat_STAT_HINT_FALSE,
    direct = sis_stat_STAT_DIRECT,
    shared = sis_stat_STAT_SHARED,
    pinned = sis_stat_STAT_PINNED,
    steals = sis_stat_STAT_STEAL,
    steals_remote = sis_stat_STAT_STEAL_REMOTE,
    queued_wakeup = sis_stat_STAT_QUEUED_WAKEUP,
    cpu_queued = sis_stat_STAT_CPU_QUEUED,
    pulls = sis_stat_STAT_PULL,
    tick_kicks = sis_stat_STAT_TICK_KICK,
    idle_kicks = sis_stat_STAT_IDLE_KICK,
    reenq = sis_stat_STAT_REENQ,
    lb_smt = sis_stat_STAT_LB_SMT,
    lb_llc = sis_stat_STAT_LB_LLC,
    lb_node = sis_stat_STAT_LB_NODE,
    lb_sys = sis_stat_STAT_LB_SYS,
    lb_runs = sis_stat_STAT_LB_RUNS,
    lb_hot = sis_stat_STAT_LB_HOT,
    nohz_kicks = sis_stat_STAT_NOHZ_KICK,
    lb_active = sis_stat_STAT_LB_ACTIVE,
    ni_runs = sis_stat_STAT_NI_RUNS,
    ni_cost_cut = sis_stat_STAT_NI_COST,
    ni_random_skip = sis_stat_STAT_NI_RANDOM,
    wakeup_preempt = sis_stat_STAT_WAKEUP_PREEMPT,
    preempt_idle = sis_stat_STAT_PREEMPT_IDLE,
    preempt_short = sis_stat_STAT_PREEMPT_SHORT,
    pick_ineligible = sis_stat_STAT_PICK_INELIGIBLE,
    sched_idle = sis_stat_STAT_SCHED_IDLE,
    starved = sis_stat_STAT_STARVED,
    hrtick = sis_stat_STAT_HRTICK,
    migrations = sis_stat_STAT_MIGRATE,
    migrations_llc = sis_stat_STAT_MIGRATE_LLC,
    wake_affine = sis_stat_STAT_WAKE_AFFINE,
    wa_weight = sis_stat_STAT_WA_WEIGHT,
    wake_wide = sis_stat_STAT_WAKE_WIDE,
    wake_far = sis_stat_STAT_WAKE_FAR,
    q_wakeups = sis_stat_STAT_Q_WAKEUPS,
    q_idle_core = sis_stat_STAT_Q_IDLE_CORE,
    q_missed_core = sis_stat_STAT_Q_MISSED_CORE,
    q_missed_core_early = sis_stat_STAT_Q_MISSED_CORE_EARLY,
    q_idle_cpu = sis_stat_STAT_Q_IDLE_CPU,
    q_missed_cpu = sis_stat_STAT_Q_MISSED_CPU,
    q_stacked = sis_stat_STAT_Q_STACKED,
    q_nr_idle = sis_stat_STAT_Q_NR_IDLE,
}

/// One placement step of select_cpu: its name in JSON and tables, its short name in the
/// stats line, its counter. In fair.c's order; they sum to `select_cpu` exactly.
pub struct Step {
    pub name: &'static str,
    pub short: &'static str,
    pub idx: u32,
}

pub const STEPS: [Step; bpf_intf::sis_steps_NR_STEPS as usize] = [
    Step {
        name: "current_cpu",
        short: "cur",
        idx: bpf_intf::sis_stat_STAT_CURRENT_CPU,
    },
    Step {
        name: "target",
        short: "tgt",
        idx: bpf_intf::sis_stat_STAT_TARGET,
    },
    Step {
        name: "prev",
        short: "prev",
        idx: bpf_intf::sis_stat_STAT_PREV,
    },
    Step {
        name: "kthread",
        short: "kth",
        idx: bpf_intf::sis_stat_STAT_KTHREAD,
    },
    Step {
        name: "recent",
        short: "rec",
        idx: bpf_intf::sis_stat_STAT_RECENT,
    },
    Step {
        name: "idle_core",
        short: "core",
        idx: bpf_intf::sis_stat_STAT_IDLE_CORE,
    },
    Step {
        name: "idle_smt",
        short: "smt",
        idx: bpf_intf::sis_stat_STAT_IDLE_SMT,
    },
    Step {
        name: "idle_cpu",
        short: "cpu",
        idx: bpf_intf::sis_stat_STAT_IDLE_CPU,
    },
    Step {
        name: "fallback",
        short: "fb",
        idx: bpf_intf::sis_stat_STAT_FALLBACK,
    },
    Step {
        name: "idlest",
        short: "fork",
        idx: bpf_intf::sis_stat_STAT_IDLEST,
    },
];

// STEPS follows intf.h's counters one for one: a step added there fails the build here.
const _: () = {
    let mut i = 0;
    while i < STEPS.len() {
        assert!(STEPS[i].idx == bpf_intf::sis_steps_FIRST_STEP + i as u32);
        i += 1;
    }
};

/// Wakeup latency of the wakeups one step placed.
#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
pub struct LatStats {
    #[stat(desc = "Wakeups measured")]
    pub wakeups: u64,
    #[stat(desc = "p50, us")]
    pub p50_us: f64,
    #[stat(desc = "p90, us")]
    pub p90_us: f64,
    #[stat(desc = "p99, us")]
    pub p99_us: f64,
    #[stat(desc = "p99.9, us")]
    pub p999_us: f64,
    #[stat(desc = "max (bucket upper edge), us")]
    pub max_us: f64,
}

/// The kernel's run-time statistics of one BPF program of ours.
#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
pub struct ProgStats {
    #[stat(desc = "ns spent in the program")]
    pub run_ns: u64,
    #[stat(desc = "Times it ran")]
    pub runs: u64,
    #[stat(desc = "Mean ns per run")]
    pub ns_per_run: f64,
}

const NR_LAT: usize = bpf_intf::lat_class_NR_LAT_CLASSES as usize;

/// Each latency class's name beside its enum lat_class value.
const LAT_CLASS_IDS: [(u32, &str); NR_LAT] = [
    (bpf_intf::lat_class_LAT_IDLE_CORE, "idle_core"),
    (bpf_intf::lat_class_LAT_IDLE_SMT, "idle_smt"),
    (bpf_intf::lat_class_LAT_IDLE_CPU, "idle_cpu"),
    (
        bpf_intf::lat_class_LAT_TARGET_PREV_RECENT,
        "target_prev_recent",
    ),
    (bpf_intf::lat_class_LAT_FALLBACK, "fallback"),
    (bpf_intf::lat_class_LAT_NO_SELECT, "no_select"),
    (bpf_intf::lat_class_LAT_QUEUED, "queued"),
];

/// Names of the latency classes, indexed by enum lat_class: a class added to intf.h,
/// or two reordered, fails the build here.
pub const LAT_CLASSES: [&str; NR_LAT] = {
    let mut names = [""; NR_LAT];
    let mut i = 0;
    while i < NR_LAT {
        assert!(LAT_CLASS_IDS[i].0 == i as u32);
        names[i] = LAT_CLASS_IDS[i].1;
        i += 1;
    }
    names
};

impl LatStats {
    fn from_buckets(b: &[u64]) -> Self {
        LatStats {
            wakeups: b.iter().sum(),
            p50_us: hist::lat_percentile(b, 0.50),
            p90_us: hist::lat_percentile(b, 0.90),
            p99_us: hist::lat_percentile(b, 0.99),
            p999_us: hist::lat_percentile(b, 0.999),
            max_us: hist::lat_max(b),
        }
    }
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
            p.ns_per_run = if p.runs > 0 {
                p.run_ns as f64 / p.runs as f64
            } else {
                0.0
            };
            all_ns += p.run_ns;
        }
        self.bpf_ns_per_wakeup = if self.select_cpu > 0 {
            all_ns as f64 / self.select_cpu as f64
        } else {
            0.0
        };
        self.select_ns = if self.prog_run_cnt > 0 {
            self.prog_run_ns as f64 / self.prog_run_cnt as f64
        } else {
            0.0
        };
    }

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
            "  queueing: direct {} cpu_queued {} shared {} pinned {} reenq {}  balance: pulls {} steals {} (remote node {}) tick_kicks {} idle_kicks {}  newidle: runs {} cost_cut {} random_skip {}  busy balance: runs {} moved smt {} llc {} node {} sys {} hot {}  idle balance: nohz_kicks {} active {}  fork_loaded {} fork_numa_local {}",
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
            "  eevdf: wakeup_preempt {} (of SCHED_IDLE {}, short {}) pick_ineligible {} sched_idle {} starved {} hrtick {}",
            self.wakeup_preempt,
            self.preempt_idle,
            self.preempt_short,
            self.pick_ineligible,
            self.sched_idle,
            self.starved,
            self.hrtick
        )?;
        Ok(())
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

#[cfg(test)]
mod tests {
    /// Every derived figure names counters that exist and has a field to go to.
    #[test]
    fn derived_figures_are_fields_of_counters() {
        let mut m = super::Metrics::default();
        for d in super::DERIVED {
            for c in d.num.iter().chain(d.den) {
                assert!(m.counter_named(c).is_some(), "{}: no counter {c}", d.name);
            }
            assert!(m.derived_field(d.name).is_some(), "{}: no field", d.name);
        }
    }

    use super::*;

    #[test]
    fn delta_subtracts_counters_and_keeps_gauges() {
        let a = Metrics {
            select_cpu: 10,
            target: 4,
            fallback: 6,
            scan_max_ever: 7,
            features: "X".into(),
            ..Default::default()
        };
        let b = Metrics {
            select_cpu: 25,
            target: 9,
            fallback: 16,
            scan_max_ever: 9,
            features: "Y".into(),
            ..Default::default()
        };
        let d = Metrics {
            uptime_s: 7.5,
            ..b.clone()
        }
        .delta(&Metrics {
            uptime_s: 5.0,
            ..a.clone()
        });
        assert_eq!(d.interval_s, 2.5);
        assert_eq!((d.select_cpu, d.target, d.fallback), (15, 5, 10));
        assert_eq!(d.scan_max_ever, 9);
        assert_eq!(d.features, "Y");
        assert_eq!(d.steps().iter().map(|s| s.1).sum::<u64>(), d.select_cpu);
    }

    /// Every counter must be in delta's list: set each integer field to 7 after and 5
    /// before, and every one must come out as 2, except gauges and figures derived again.
    #[test]
    fn delta_subtracts_every_counter() {
        let with = |v: u64| -> Metrics {
            let mut j = serde_json::to_value(Metrics::default()).unwrap();
            for (_, x) in j.as_object_mut().unwrap().iter_mut() {
                if x.is_u64() {
                    *x = v.into();
                }
            }
            serde_json::from_value(j).unwrap()
        };
        let d = serde_json::to_value(with(7).delta(&with(5))).unwrap();
        let not_counters = [
            "scan_max_ever",
            "lat_wakeups",
            "scan_p99",
            "scan_max",
            "restarts",
            "pelt_nr_runnable",
            "pelt_load_avg",
        ];
        for (k, x) in d.as_object().unwrap() {
            if x.is_u64() && !not_counters.contains(&k.as_str()) {
                assert_eq!(
                    x.as_u64(),
                    Some(2),
                    "{k} is not subtracted by Metrics::delta"
                );
            }
        }
    }

    #[test]
    fn from_cpus_sums_and_keeps_the_longest_search() {
        let zero = vec![0u8; std::mem::size_of::<bpf_intf::sis_cpu_stats>()];
        let mut a: bpf_intf::sis_cpu_stats = bpf_intf::from_bytes(&zero).unwrap();
        let mut b = a;
        a.cnt[bpf_intf::sis_stat_STAT_SELECT as usize] = 3;
        b.cnt[bpf_intf::sis_stat_STAT_SELECT as usize] = 4;
        b.cnt[bpf_intf::sis_stat_STAT_PULL as usize] = 2;
        a.lat[1][5] = 1;
        b.lat[1][5] = 2;
        a.scan_max = 9;
        b.scan_max = 4;
        let m = Metrics::from_cpus(&[a, b]);
        assert_eq!((m.select_cpu, m.pulls, m.scan_max_ever), (7, 2, 9));
        assert_eq!(
            m.lat_hist[bpf_intf::hist_consts_NR_LAT_BUCKETS as usize + 5],
            3
        );
    }

    /// Every index of intf.h's enum sis_stat is decoded into exactly one field.
    #[test]
    fn every_bpf_counter_has_a_field() {
        let n = bpf_intf::sis_stat_NR_SIS_STATS;
        for i in 0..n {
            let uses = COUNTER_INDEXES.iter().filter(|&&x| x == i).count();
            assert_eq!(uses, 1, "enum sis_stat index {i} is decoded {uses} times");
        }
        assert_eq!(COUNTER_INDEXES.len() as u32, n);
        let mut m = Metrics::default();
        m.set_counters(&(1..=n as u64).collect::<Vec<_>>());
        assert_eq!(m.counter(bpf_intf::sis_stat_STAT_SELECT), m.select_cpu);
        assert_eq!(m.select_cpu, bpf_intf::sis_stat_STAT_SELECT as u64 + 1);
    }

    #[test]
    fn delta_computes_percentiles_per_step() {
        let nb = 32;
        let mut before = Metrics {
            lat_hist: vec![0; LAT_CLASSES.len() * nb],
            scan_hist: vec![0; 65],
            ..Default::default()
        };
        before.lat_hist[3] = 5; // idle_core, [4,8) us, already counted
        let mut after = before.clone();
        after.lat_hist[3] += 10; // idle_core: 10 new wakeups in [4,8) us
        after.lat_hist[4 * nb + 10] = 10; // fallback: 10 in [512,1024) us
        after.scan_hist[2] = 19;
        after.scan_hist[8] = 1;
        after.select_cpu = 20;
        after.lost_claims = 1;
        let d = after.delta(&before);
        assert_eq!(d.lat_wakeups, 20);
        assert_eq!(d.lat_by_step["idle_core"].wakeups, 10);
        assert_eq!(d.lat_by_step["idle_core"].p50_us, 6.0); // rank 5 of 10 in [4,8)
        assert_eq!(d.lat_by_step["fallback"].p99_us, 1024.0);
        assert_eq!(d.lat_p50_us, 8.0); // rank 10: the last idle_core sample
        assert_eq!(d.lat_max_us, 1024.0);
        assert_eq!((d.scan_p99, d.scan_max), (8, 8));
        assert_eq!(d.lost_per_1k, 50.0);
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["lat_by_step"]["fallback"]["wakeups"], 10);
    }

    #[test]
    fn prog_costs_are_per_interval() {
        let prog = |run_ns, runs| ProgStats {
            run_ns,
            runs,
            ..Default::default()
        };
        let before = Metrics {
            select_cpu: 10,
            progs: [
                ("select_cpu".into(), prog(1000, 10)),
                ("running".into(), prog(500, 10)),
            ]
            .into(),
            ..Default::default()
        };
        let after = Metrics {
            select_cpu: 30,
            progs: [
                ("select_cpu".into(), prog(5000, 30)),
                ("running".into(), prog(1500, 30)),
            ]
            .into(),
            ..Default::default()
        };
        let d = after.delta(&before);
        assert_eq!(d.progs["select_cpu"].ns_per_run, 200.0);
        assert_eq!(d.progs["running"].runs, 20);
        // (4000 + 1000) ns of BPF over 20 select_cpu calls
        assert_eq!(d.bpf_ns_per_wakeup, 250.0);
    }

    #[test]
    fn format_is_one_line() {
        let line = |m: &Metrics| {
            let mut out = Vec::new();
            m.format(&mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let m = Metrics {
            select_cpu: 100,
            idle_core: 50,
            fallback: 50,
            interval_s: 1.0,
            features: crate::features::format(crate::features::kernel_default_mask()),
            ..Default::default()
        };
        let s = line(&m);
        assert_eq!(s.lines().count(), 1);
        assert!(s.contains("core 50"), "{s}");
        assert!(s.trim_end().ends_with("feat default"), "{s}");
        let off = Metrics {
            features: crate::features::format(
                crate::features::parse(
                    "NO_IDLE_CORE,NO_SIS_UTIL",
                    crate::features::kernel_default_mask(),
                )
                .unwrap(),
            ),
            features_changed: 1,
            ..m
        };
        let s = line(&off);
        assert!(s.contains("feat NO_IDLE_CORE,NO_SIS_UTIL [changed]"), "{s}");
        assert!(s.len() <= 240, "{} chars: {s}", s.len());
        assert!(!s.contains(" kth "), "{s}");
        // an interval with kthread stackings shows them, beside its other steps
        let kth = Metrics {
            kthread: 5,
            fallback: 45,
            features: crate::features::format(crate::features::kernel_default_mask()),
            features_changed: 0,
            ..off
        };
        let s = line(&kth);
        assert!(s.contains("prev 0 kth 5 rec 0"), "{s}");
        assert!(!s.contains(" cur "), "{s}");
        assert!(s.len() <= 240, "{} chars: {s}", s.len());
        // and WF_CURRENT_CPU wakeups, first in fair.c's order
        let cur = Metrics {
            current_cpu: 7,
            ..kth
        };
        let s = line(&cur);
        assert!(s.contains("cur 7 tgt 0 prev 0 kth 5"), "{s}");
        assert!(s.len() <= 240, "{} chars: {s}", s.len());
    }
}
