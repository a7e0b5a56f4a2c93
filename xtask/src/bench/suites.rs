// SPDX-License-Identifier: GPL-2.0-only
//! The bench suites: their loads and the metrics each reports.

use anyhow::{Context, Result};

/// One metric of a suite.
#[derive(Debug)]
pub struct Metric {
    pub key: &'static str,
    pub label: &'static str,
    pub higher_is_better: bool,
}

#[derive(Debug)]
pub struct Suite {
    pub name: &'static str,
    pub load: &'static str,
    /// The metrics shown as tables; the first one is plotted and summarised.
    pub metrics: &'static [Metric],
}

pub const fn m(key: &'static str, label: &'static str, higher_is_better: bool) -> Metric {
    Metric {
        key,
        label,
        higher_is_better,
    }
}

pub const SUITES: &[Suite] = &[
    Suite {
        name: "tbench",
        load: "clients",
        metrics: &[m("mb_s", "tbench MB/s", true)],
    },
    Suite {
        name: "wakeup",
        load: "workers",
        metrics: &[
            m("lat_p99_us", "wakeup latency p99 us (trace)", false),
            m("lat_p50_us", "wakeup latency p50 us (trace)", false),
            m("lat_p90_us", "wakeup latency p90 us (trace)", false),
            m("lat_p999_us", "wakeup latency p99.9 us (trace)", false),
            m("schbench_p99_us", "schbench p99 us", false),
            m(
                "bpf_ns_per_wakeup",
                "ns of scx_sis's BPF programs per select_cpu (BPF stats)",
                false,
            ),
        ],
    },
    Suite {
        name: "hackbench",
        load: "groups",
        metrics: &[m("secs", "hackbench time s", false)],
    },
    Suite {
        name: "pipe",
        load: "pairs",
        metrics: &[m("usecs_op", "perf bench sched pipe usecs/op", false)],
    },
    Suite {
        name: "cost",
        load: "hog CPUs",
        metrics: &[
            m("select_ns", "ns per select_cpu (BPF stats)", false),
            m("scan_mean", "CPUs scanned per select_cpu", false),
            m("scan_max", "most CPUs scanned by one call", false),
        ],
    },
    Suite {
        name: "placement",
        load: "workers",
        metrics: &[
            m(
                "missed_idle_core_per_1k",
                "missed an idle core /1000 (trace)",
                false,
            ),
            m(
                "missed_idle_cpu_per_1k",
                "missed an idle CPU /1000 (trace)",
                false,
            ),
            m(
                "stacked_per_1k",
                "stacked on a busy CPU /1000 (trace)",
                false,
            ),
            m("idle_cpus_mean", "idle CPUs at wakeup, mean (trace)", true),
            m(
                "sis_missed_idle_core_per_1k",
                "missed an idle core /1000 (scx_sis's own count)",
                false,
            ),
        ],
    },
];

pub fn suite(name: &str) -> Result<&'static Suite> {
    SUITES.iter().find(|s| s.name == name).with_context(|| {
        let all: Vec<_> = SUITES.iter().map(|s| s.name).collect();
        format!("unknown suite '{name}' (one of {})", all.join(", "))
    })
}

/// Default load points for a guest with `n` CPUs.
pub fn default_loads(suite: &str, n: u32) -> Vec<u32> {
    let doubling = |from: u32| {
        let mut v = vec![];
        let mut l = from.max(1);
        while l <= 2 * n {
            v.push(l);
            l *= 2;
        }
        v
    };
    match suite {
        "tbench" => doubling(1),
        "wakeup" | "placement" => doubling(n / 4),
        "hackbench" => vec![1, 2, 4],
        "pipe" => vec![1],
        "cost" => vec![0, n / 2, n],
        _ => vec![1],
    }
}
