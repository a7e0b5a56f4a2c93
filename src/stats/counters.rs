// SPDX-License-Identifier: GPL-2.0-only
//! The BPF counters' table, the placement steps and the latency classes, each tied to
//! intf.h at compile time.

use super::Metrics;
use crate::bpf_intf;
use crate::hist;
use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};

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
            pub(super) fn sub_counters(&mut self, b: &Self) {
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

        pub(super) const COUNTER_INDEXES: &[u32] = &[$(bpf_intf::$idx as u32),*];
    };
}

// Every index of intf.h's enum sis_stat is decoded into exactly one field: a counter
// added there without a field here, or two fields on one index, fails the build.
const _: () = {
    let n = bpf_intf::sis_stat_NR_SIS_STATS;
    assert!(COUNTER_INDEXES.len() == n as usize);
    let mut i = 0;
    while i < n {
        let (mut j, mut uses) = (0, 0);
        while j < COUNTER_INDEXES.len() {
            uses += (COUNTER_INDEXES[j] == i) as u32;
            j += 1;
        }
        assert!(uses == 1);
        i += 1;
    }
};

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
    ni_numa_kept = sis_stat_STAT_NI_NUMA_KEPT,
    ni_hot = sis_stat_STAT_NI_HOT,
    wakeup_preempt = sis_stat_STAT_WAKEUP_PREEMPT,
    preempt_idle = sis_stat_STAT_PREEMPT_IDLE,
    preempt_short = sis_stat_STAT_PREEMPT_SHORT,
    fork_preempt = sis_stat_STAT_FORK_PREEMPT,
    place_lag = sis_stat_STAT_PLACE_LAG,
    deadline_initial = sis_stat_STAT_DEADLINE_INITIAL,
    rel_deadline = sis_stat_STAT_REL_DEADLINE,
    delay_paid = sis_stat_STAT_DELAY_PAID,
    protect_cut = sis_stat_STAT_PROTECT_CUT,
    pick_ineligible = sis_stat_STAT_PICK_INELIGIBLE,
    sched_idle = sis_stat_STAT_SCHED_IDLE,
    starved = sis_stat_STAT_STARVED,
    offline_kicks = sis_stat_STAT_OFFLINE_KICK,
    hrtick = sis_stat_STAT_HRTICK,
    hrtick_armed = sis_stat_STAT_HRTICK_ARMED,
    sums_retry = sis_stat_STAT_SUMS_RETRY,
    acct_races = sis_stat_STAT_ACCT_RACE,
    v_jumps = sis_stat_STAT_V_JUMP,
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
    pub(super) fn from_buckets(b: &[u64]) -> Self {
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
