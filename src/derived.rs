// SPDX-License-Identifier: GPL-2.0-only
//! The figures derived from scx_sis's counters and BPF statistics, defined once: the
//! stats compute them per interval (`Metrics::finish`) and the bench per measurement
//! (xtask's bench/parse.rs includes this file), both through this file's functions.

/// A derived figure: `scale` × (sum of the `num` counters) / (sum of the `den` ones),
/// counters named as their stats fields.
pub struct Derived {
    pub name: &'static str,
    pub num: &'static [&'static str],
    pub den: &'static [&'static str],
    pub scale: f64,
}

const CUTS: &[&str] = &["sis_util_cut", "sis_avg_cpu_cut", "sis_prop_cut"];

pub const DERIVED: &[Derived] = &[
    Derived {
        name: "cut_pct",
        num: CUTS,
        den: &["scan_calls"],
        scale: 100.0,
    },
    Derived {
        name: "sis_util_cut_pct",
        num: &["sis_util_cut"],
        den: &["scan_calls"],
        scale: 100.0,
    },
    Derived {
        name: "sis_avg_cpu_cut_pct",
        num: &["sis_avg_cpu_cut"],
        den: &["scan_calls"],
        scale: 100.0,
    },
    Derived {
        name: "sis_prop_cut_pct",
        num: &["sis_prop_cut"],
        den: &["scan_calls"],
        scale: 100.0,
    },
    Derived {
        name: "hint_fp_pct",
        num: &["hint_false"],
        den: &["hint_true", "hint_false"],
        scale: 100.0,
    },
    Derived {
        name: "lost_per_1k",
        num: &["lost_claims"],
        den: &["select_cpu"],
        scale: 1000.0,
    },
    Derived {
        name: "missed_idle_core_per_1k",
        num: &["q_missed_core"],
        den: &["q_wakeups"],
        scale: 1000.0,
    },
    Derived {
        name: "missed_idle_cpu_per_1k",
        num: &["q_missed_cpu"],
        den: &["q_wakeups"],
        scale: 1000.0,
    },
    Derived {
        name: "stacked_per_1k",
        num: &["q_stacked"],
        den: &["q_wakeups"],
        scale: 1000.0,
    },
    Derived {
        name: "idle_cpus_mean",
        num: &["q_nr_idle"],
        den: &["q_wakeups"],
        scale: 1.0,
    },
];

/// The figure from the counters `get` gives; None when the denominator is 0.
pub fn value(d: &Derived, get: &dyn Fn(&str) -> f64) -> Option<f64> {
    let den: f64 = d.den.iter().map(|k| get(k)).sum();
    (den > 0.0).then(|| d.num.iter().map(|k| get(k)).sum::<f64>() / den * d.scale)
}

/// `bpf_ns_per_wakeup`: the run time of every BPF program over select_cpu's calls.
pub fn bpf_ns_per_wakeup(all_programs_ns: f64, select_cpu_calls: f64) -> Option<f64> {
    (select_cpu_calls > 0.0).then(|| all_programs_ns / select_cpu_calls)
}

/// `select_ns` and each program's ns per run: its run time over its runs.
pub fn ns_per_run(run_ns: f64, runs: f64) -> Option<f64> {
    (runs > 0.0).then(|| run_ns / runs)
}
