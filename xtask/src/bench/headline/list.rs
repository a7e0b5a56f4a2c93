// SPDX-License-Identifier: GPL-2.0-only
//! The primary A/Bs, named before their runs: what each compares, in which boots, at
//! which loads, and the equivalence margin of those that claim a sameness.

/// One primary comparison: `conf / base` of `metric` in `suite` (or, with `den`, that
/// ratio over the ratio of `den`'s pair in `den`'s suite: a ratio of ratios), in every
/// folder of `dirs` (one boot each), at `loads`.
pub struct Headline {
    pub title: &'static str,
    /// The A/B in a few words, for the summary's line.
    pub short: &'static str,
    pub suite: &'static str,
    pub metric: &'static str,
    pub label: &'static str,
    pub conf: &'static str,
    pub base: &'static str,
    pub den: Option<Pair>,
    pub loads: &'static [u32],
    pub dirs: &'static [&'static str],
    /// An equivalence margin named before the runs: `Some(m)` calls a boot's ratio the
    /// same when its whole interval lies within [1/m, m].
    pub margin: Option<f64>,
}

/// The denominator of a ratio of ratios: `conf / base` in `suite`.
pub struct Pair {
    pub suite: &'static str,
    pub conf: &'static str,
    pub base: &'static str,
}

const BOOTS: &[&str] = &["2026-12-07-headline-b1", "2026-12-07-headline-b2"];
/// tbench with and without the instruments, in one boot each.
const BARE_BOOTS: &[&str] = &["2026-12-04-bare-b1", "2026-12-04-bare-b2"];
/// The kernel's switch and ours in one boot each.
const CALIBRATE_BOOTS: &[&str] = &["2026-12-07-calibrate-b1", "2026-12-07-calibrate-b2"];
/// The wakeup suite (tracer) and the latency suite (bare) in one boot each.
const WAKEUP_BOOTS: &[&str] = &["2026-12-07-latency-b1", "2026-12-07-latency-b2"];
/// The same under multi-threaded TCG (--tcg-multi), one boot each.
const MULTI_BOOTS: &[&str] = &["2026-12-07-multi-latency-b1", "2026-12-07-multi-latency-b2"];
/// Issue 28's p99 target (within 20 %), named before the boots of MULTI_BOOTS.
const P99_MARGIN: Option<f64> = Some(1.2);
/// Issue 28's throughput target (within 5 %), named before the boots of 1d.
const TBENCH_MARGIN: Option<f64> = Some(1.05);

pub const HEADLINES: &[Headline] = &[
    Headline {
        title: "1. default against the kernel: throughput",
        short: "sis / eevdf, tbench MB/s",
        suite: "tbench",
        metric: "mb_s",
        label: "tbench MB/s (higher is better)",
        conf: "sis",
        base: "eevdf",
        den: None,
        loads: &[8, 16],
        dirs: BOOTS,
        margin: None,
    },
    Headline {
        title: "1b. the same, bare",
        short: "sis / eevdf, tbench MB/s, bare",
        suite: "tbench-bare",
        metric: "mb_s",
        label: "tbench MB/s; no BPF statistics or monitor (higher is better)",
        conf: "sis",
        base: "eevdf",
        den: None,
        loads: &[8, 16],
        dirs: BARE_BOOTS,
        margin: None,
    },
    Headline {
        title: "1c. what the instruments do to 1b",
        short: "1 over 1b: the instruments",
        suite: "tbench",
        metric: "mb_s",
        label: "(sis / eevdf with BPF statistics and monitors) / (sis / eevdf bare), tbench MB/s",
        conf: "sis",
        base: "eevdf",
        den: Some(Pair {
            suite: "tbench-bare",
            conf: "sis",
            base: "eevdf",
        }),
        loads: &[8, 16],
        dirs: BARE_BOOTS,
        margin: None,
    },
    Headline {
        title: "1d. 1b in instructions (qemu -icount)",
        short: "1b counted in instructions",
        suite: "tbench-bare",
        metric: "mb_s",
        label: "tbench MB per second of guest time, one ns per instruction; bare (higher is better)",
        conf: "sis",
        base: "eevdf",
        den: None,
        loads: &[8, 16],
        dirs: &["2026-12-07-icount-tbench-b1", "2026-12-07-icount-tbench-b2"],
        margin: TBENCH_MARGIN,
    },
    Headline {
        title: "2. default against the kernel: wakeup latency p99",
        short: "sis / eevdf, p99 wakeup, tracer",
        suite: "wakeup",
        metric: "lat_p99_us",
        label: "p99 us, tracer clock (lower is better)",
        conf: "sis",
        base: "eevdf",
        den: None,
        loads: &[4, 8],
        dirs: WAKEUP_BOOTS,
        margin: None,
    },
    Headline {
        title: "2b. the same from the waker's clock, bare",
        short: "sis / eevdf, p99 wakeup, waker, bare",
        suite: "latency",
        metric: "probe_p99_us",
        label: "p99 us, waker's clock; no tracer, BPF statistics or monitor (lower is better)",
        conf: "sis",
        base: "eevdf",
        den: None,
        loads: &[4, 8],
        dirs: WAKEUP_BOOTS,
        margin: None,
    },
    Headline {
        title: "2c. what the instruments do to 2b",
        short: "2b instrumented over 2b",
        suite: "wakeup",
        metric: "probe_p99_us",
        label: "(sis / eevdf under the tracer, BPF statistics and monitors) / (sis / eevdf bare), p99 us, waker's clock",
        conf: "sis",
        base: "eevdf",
        den: Some(Pair {
            suite: "latency",
            conf: "sis",
            base: "eevdf",
        }),
        loads: &[4, 8],
        dirs: WAKEUP_BOOTS,
        margin: None,
    },
    Headline {
        title: "2d. 2 under multi-threaded TCG",
        short: "2 under thread=multi",
        suite: "wakeup",
        metric: "lat_p99_us",
        label: "p99 us, tracer clock, qemu thread=multi (lower is better)",
        conf: "sis",
        base: "eevdf",
        den: None,
        loads: &[4, 8],
        dirs: MULTI_BOOTS,
        margin: P99_MARGIN,
    },
    Headline {
        title: "2e. 2b under multi-threaded TCG",
        short: "2b under thread=multi",
        suite: "latency",
        metric: "probe_p99_us",
        label: "p99 us, waker's clock, bare, qemu thread=multi (lower is better)",
        conf: "sis",
        base: "eevdf",
        den: None,
        loads: &[4, 8],
        dirs: MULTI_BOOTS,
        margin: P99_MARGIN,
    },
    Headline {
        title: "3. NO_IDLE_CORE against the default: idle cores missed",
        short: "NO_IDLE_CORE / sis, idle cores missed",
        suite: "placement",
        metric: "missed_given_core_per_1k",
        label: "missed an idle core /1000 wakeups that had one, tracer (lower is better)",
        conf: "sis:NO_IDLE_CORE",
        base: "sis",
        den: None,
        loads: &[8, 16],
        dirs: BOOTS,
        margin: None,
    },
    Headline {
        title: "3b. NO_IDLE_CORE against the default: throughput",
        short: "NO_IDLE_CORE / sis, tbench MB/s",
        suite: "tbench",
        metric: "mb_s",
        label: "tbench MB/s (higher is better)",
        conf: "sis:NO_IDLE_CORE",
        base: "sis",
        den: None,
        loads: &[8, 16],
        dirs: BOOTS,
        margin: None,
    },
    Headline {
        title: "4. NO_SIS_UTIL against the default: idle cores missed",
        short: "NO_SIS_UTIL / sis, idle cores missed",
        suite: "placement",
        metric: "missed_given_core_per_1k",
        label: "missed an idle core /1000 wakeups that had one, tracer (lower is better)",
        conf: "sis:NO_SIS_UTIL",
        base: "sis",
        den: None,
        loads: &[8, 16],
        dirs: BOOTS,
        margin: None,
    },
    Headline {
        title: "4b. NO_SIS_UTIL against the default: throughput",
        short: "NO_SIS_UTIL / sis, tbench MB/s",
        suite: "tbench",
        metric: "mb_s",
        label: "tbench MB/s (higher is better)",
        conf: "sis:NO_SIS_UTIL",
        base: "sis",
        den: None,
        loads: &[8, 16],
        dirs: BOOTS,
        margin: None,
    },
    Headline {
        title: "5. BPF cost per wakeup against scx_cosmos",
        short: "sis / scx_cosmos, BPF ns per wakeup",
        suite: "cost",
        metric: "bpf_all_ns_per_select",
        label: "ns of all BPF programs per select_cpu (lower is better)",
        conf: "sis",
        base: "scx_cosmos",
        den: None,
        loads: &[0],
        dirs: &["2026-12-07-cost-b1", "2026-12-07-cost-b2"],
        margin: None,
    },
    Headline {
        title: "5b. BPF instructions per wakeup against scx_cosmos (qemu -icount)",
        short: "5 counted in instructions",
        suite: "cost",
        metric: "bpf_all_ns_per_select",
        label: "instructions (icount ns) of all BPF programs per select_cpu (lower is better)",
        conf: "sis",
        base: "scx_cosmos",
        den: None,
        loads: &[0],
        dirs: &["2026-12-07-icount-cost-b1", "2026-12-07-icount-cost-b2"],
        margin: None,
    },
    Headline {
        title: "6. calibration: the kernel's NO_SIS_UTIL effect over scx_sis's",
        short: "NO_SIS_UTIL: eevdf's effect / sis's",
        suite: "tbench",
        metric: "mb_s",
        label: "(eevdf:NO_SIS_UTIL / eevdf) / (sis:NO_SIS_UTIL / sis), tbench MB/s",
        conf: "eevdf:NO_SIS_UTIL",
        base: "eevdf",
        den: Some(Pair {
            suite: "tbench",
            conf: "sis:NO_SIS_UTIL",
            base: "sis",
        }),
        loads: &[8, 16],
        dirs: CALIBRATE_BOOTS,
        // the 0.80-1.25 convention of bioequivalence, named before the boots of 2026-12-06
        margin: Some(1.25),
    },
];
