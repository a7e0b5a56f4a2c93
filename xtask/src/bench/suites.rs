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
    /// The metrics of the calibration table (`--part calibration`), the kernel's A/B
    /// beside scx_sis's, each one of `metrics`; a metric the kernel's side does not
    /// report (BPF time) prints no row.
    pub calibrate: &'static [&'static str],
}

pub const fn m(key: &'static str, label: &'static str, higher_is_better: bool) -> Metric {
    Metric {
        key,
        label,
        higher_is_better,
    }
}

/// What the CPUs did in tbench's timed phase, from /proc/stat: whether the policy left
/// them idle, and how often it switched for the work done.
const IDLE_PCT: &str = "% of the CPUs' time idle in tbench's timed phase (/proc/stat)";
const SW_PER_MB: &str =
    "context switches per MB (/proc/stat over tbench's timed phase, at its MB/s)";
const IPI_PER_MB: &str =
    "rescheduling and function call IPIs per MB (/proc/interrupts, tbench's timed phase)";
const TIMER_PER_MB: &str = "local timer interrupts per MB (/proc/interrupts, tbench's timed phase)";
const IWI_PER_MB: &str = "irq_work interrupts per MB (/proc/interrupts, tbench's timed phase)";

pub const SUITES: &[Suite] = &[
    Suite {
        name: "tbench",
        load: "clients",
        metrics: &[
            m("mb_s", "tbench MB/s", true),
            m(
                "bpf_cpu_pct",
                "% of the CPUs' time in the scheduler's BPF programs (BPF stats, any sched_ext scheduler)",
                false,
            ),
            m("idle_pct", IDLE_PCT, false),
            m("sw_per_mb", SW_PER_MB, false),
            m("ipi_per_mb", IPI_PER_MB, false),
            m("timer_per_mb", TIMER_PER_MB, false),
            m("iwi_per_mb", IWI_PER_MB, false),
        ],
        calibrate: &["mb_s", "idle_pct", "sw_per_mb"],
    },
    Suite {
        name: "tbench-bare",
        load: "clients",
        metrics: &[
            m("mb_s", "tbench MB/s (no BPF statistics or monitor)", true),
            m("idle_pct", IDLE_PCT, false),
            m("sw_per_mb", SW_PER_MB, false),
            m("ipi_per_mb", IPI_PER_MB, false),
            m("timer_per_mb", TIMER_PER_MB, false),
            m("iwi_per_mb", IWI_PER_MB, false),
        ],
        calibrate: &["mb_s", "idle_pct", "sw_per_mb"],
    },
    Suite {
        name: "wakeup",
        load: "workers",
        metrics: &[
            m("lat_p99_us", "wakeup latency p99 us (trace)", false),
            m("lat_p50_us", "wakeup latency p50 us (trace)", false),
            m("lat_p90_us", "wakeup latency p90 us (trace)", false),
            m("lat_p999_us", "wakeup latency p99.9 us (trace)", false),
            m(
                "lat_idle_cpu_p99_us",
                "wakeup latency p99 us of the wakeups onto a CPU idle at sched_wakeup (trace)",
                false,
            ),
            m(
                "lat_busy_cpu_p99_us",
                "wakeup latency p99 us of the wakeups onto a CPU running a task at sched_wakeup (trace)",
                false,
            ),
            m(
                "lat_over_250us_per_1k",
                "waits of 250 us or more /1000 wakeups (trace)",
                false,
            ),
            m(
                "probe_p99_us",
                "wakeup latency p99 us (waker's clock: from the send, so the IPI and idle exit count)",
                false,
            ),
            m("probe_p50_us", "wakeup latency p50 us (waker's clock)", false),
            m("probe_p999_us", "wakeup latency p99.9 us (waker's clock)", false),
            m("schbench_p99_us", "schbench p99 us", false),
            m(
                "bpf_all_ns_per_select",
                "ns of all the scheduler's BPF programs per select_cpu (BPF stats, any sched_ext scheduler)",
                false,
            ),
        ],
        calibrate: &["lat_p99_us", "lat_p50_us", "probe_p99_us"],
    },
    Suite {
        name: "latency",
        load: "workers",
        metrics: &[
            m(
                "probe_p99_us",
                "wakeup latency p99 us (waker's clock; no tracer, BPF statistics or monitor)",
                false,
            ),
            m("probe_p50_us", "wakeup latency p50 us (waker's clock, bare)", false),
            m("probe_p999_us", "wakeup latency p99.9 us (waker's clock, bare)", false),
        ],
        calibrate: &["probe_p99_us", "probe_p50_us", "probe_p999_us"],
    },
    Suite {
        name: "hackbench",
        load: "groups",
        metrics: &[m("secs", "hackbench time s", false)],
        calibrate: &["secs"],
    },
    Suite {
        name: "pipe",
        load: "pairs",
        metrics: &[m("usecs_op", "perf bench sched pipe usecs/op", false)],
        calibrate: &["usecs_op"],
    },
    Suite {
        name: "nice",
        load: "hackbench groups on the other CPUs",
        metrics: &[
            m(
                "nice_ratio",
                "CPU time of a nice -20 hog over a nice 0 hog's, both pinned to one CPU (weights 88761:1024: 86.7)",
                true,
            ),
            m(
                "pair_ms_per_s",
                "ms per s the two hogs ran together on their CPU",
                true,
            ),
        ],
        calibrate: &["nice_ratio"],
    },
    Suite {
        name: "sched-idle",
        load: "CPUs with a SCHED_IDLE hog",
        metrics: &[
            m(
                "nap_p90_us",
                "us late, p90, of a normal task's 2 ms naps on CPU 0 beside its SCHED_IDLE hog",
                false,
            ),
            m("nap_p50_us", "us late, p50, of the naps", false),
            m("nap_max_us", "us late, most, of the naps", false),
        ],
        calibrate: &["nap_p90_us", "nap_p50_us"],
    },
    Suite {
        name: "affine",
        load: "hogs on the wakee's CPU",
        metrics: &[
            m(
                "wake_p50_us",
                "us from the post to the wakee running, p50: woken from CPU 1, asleep beside the hogs (WA_WEIGHT's load)",
                false,
            ),
            m("wake_p90_us", "us from the post to the wakee running, p90", false),
            m(
                "on_waker_per_1k",
                "wakeups run on the waker's CPU /1000",
                true,
            ),
        ],
        calibrate: &["wake_p50_us", "wake_p90_us"],
    },
    Suite {
        name: "cost",
        load: "hog CPUs",
        metrics: &[
            m(
                "bpf_all_ns_per_select",
                "ns of all the scheduler's BPF programs per select_cpu (BPF stats, any sched_ext scheduler)",
                false,
            ),
            m("bpf_select_ns", "ns per select_cpu (BPF stats, any sched_ext scheduler)", false),
            m("scan_mean", "CPUs scanned per select_cpu", false),
            m("scan_max", "most CPUs scanned by one call", false),
        ],
        calibrate: &["bpf_all_ns_per_select"],
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
            m(
                "missed_given_core_per_1k",
                "missed an idle core /1000 wakeups that had one (trace)",
                false,
            ),
            m(
                "missed_given_cpu_per_1k",
                "missed an idle CPU /1000 wakeups that had one (trace)",
                false,
            ),
            m("idle_cpus_mean", "idle CPUs at wakeup, mean (trace)", true),
            m(
                "sis_missed_idle_core_per_1k",
                "missed an idle core /1000 (scx_sis's own count)",
                false,
            ),
            m(
                "sis_missed_idle_cpu_per_1k",
                "missed an idle CPU /1000 (scx_sis's own count)",
                false,
            ),
            m(
                "sis_stacked_per_1k",
                "stacked on a busy CPU /1000 (scx_sis's own count)",
                false,
            ),
            m(
                "ran_missed_idle_core_per_1k",
                "missed an idle core /1000, by where the task first ran (trace)",
                false,
            ),
            m(
                "ran_stacked_per_1k",
                "first ran on a CPU busy at the wakeup /1000 (trace)",
                false,
            ),
            m(
                "ran_moved_per_1k",
                "first ran elsewhere than the decision /1000 (trace)",
                false,
            ),
            m(
                "no_decision",
                "wakeups with no placement decision (no select_task_rq return; trace)",
                false,
            ),
        ],
        calibrate: &["missed_given_core_per_1k", "missed_given_cpu_per_1k", "stacked_per_1k"],
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
        "tbench" | "tbench-bare" => doubling(1),
        "wakeup" | "latency" | "placement" => doubling(n / 4),
        "hackbench" => vec![1, 2, 4],
        "pipe" => vec![1],
        "nice" => vec![2],
        "sched-idle" => vec![1],
        "affine" => vec![2],
        "cost" => vec![0, n / 2, n],
        _ => vec![1],
    }
}

/// A named comparison: its suites, configurations, guest and load points.
pub struct Preset {
    pub suites: &'static str,
    pub sched: &'static str,
    pub vs: Option<&'static str>,
    /// The guest it runs on when --topology gives fewer than `min_cpus`.
    pub topology: &'static str,
    pub min_cpus: u32,
    /// ... or fewer LLCs per socket than this.
    pub min_llcs: u32,
    pub loads: fn(&str, u32) -> Vec<u32>,
}

/// The seed's configurations: EEVDF in the role of the seed's `master` (the kernel of
/// the day), the unbounded search (`masterx`), the same without the idle-core search,
/// and each scan bound the kernel has shipped since, alone on the unbounded search.
pub const SEED_SCHED: &str = "eevdf,masterx=sis:NO_SIS_UTIL,masterx:NO_IDLE_CORE=sis:NO_SIS_UTIL+NO_IDLE_CORE,SIS_AVG_CPU=sis:NO_SIS_UTIL+SIS_AVG_CPU,SIS_PROP=sis:NO_SIS_UTIL+SIS_PROP,SIS_UTIL=sis";

/// The kernel's own features switched off beside the same switch in scx_sis.
pub const CALIBRATE_SCHED: &str = "eevdf,eevdf:NO_SIS_UTIL,eevdf:NO_WA_IDLE,eevdf:NO_WA_WEIGHT,eevdf:NO_WA_BIAS,eevdf:NO_DELAY_DEQUEUE,sis,sis:NO_SIS_UTIL,sis:NO_WA_IDLE,sis:NO_WA_WEIGHT,sis:NO_WA_BIAS";

/// wake_affine()'s switches on a guest with two LLCs in its socket, where its choice
/// between the waker's LLC and prev's matters most: each off on both sides.
pub const LLC_SCHED: &str = "eevdf,eevdf:NO_WA_IDLE,eevdf:NO_WA_WEIGHT,eevdf:NO_WA_BIAS,sis,sis:NO_WA_IDLE,sis:NO_WA_WEIGHT,sis:NO_WA_BIAS";

pub fn preset(name: &str) -> Option<Preset> {
    match name {
        "seed" => Some(Preset {
            suites: "tbench",
            sched: SEED_SCHED,
            vs: Some("masterx"),
            topology: "1:8:2",
            min_cpus: 16,
            min_llcs: 1,
            // the seed's client counts: doubling to 4x the CPUs (it went to 256 on 144)
            loads: |_, n| {
                std::iter::successors(Some(1), |l| Some(l * 2))
                    .take_while(|&l| l <= 4 * n)
                    .collect()
            },
        }),
        "calibrate" => Some(Preset {
            suites: "placement,wakeup,tbench,affine",
            sched: CALIBRATE_SCHED,
            vs: None,
            topology: "1:4:2",
            min_cpus: 8,
            min_llcs: 1,
            loads: |s, n| match s {
                "tbench" => vec![n / 2, n, 2 * n],
                "affine" => vec![2],
                _ => vec![n / 2, n],
            },
        }),
        "llc" => Some(Preset {
            suites: "placement,wakeup,tbench",
            sched: LLC_SCHED,
            vs: None,
            topology: "1:2:4:2",
            min_cpus: 16,
            min_llcs: 2,
            loads: |s, n| match s {
                "tbench" => vec![n / 2, n, 2 * n],
                _ => vec![n / 4, n / 2],
            },
        }),
        _ => None,
    }
}
