// SPDX-License-Identifier: GPL-2.0-only
//! The calibration table: a kernel feature switched off beside scx_sis's counterpart,
//! each change with its interval.

use super::parse::{mean, Records};
use super::report::{num, ratio_cell, with_interval};
use super::stats::paired_ci;
use super::Plan;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A configuration with one feature off against its own default.
pub struct Pair {
    pub off: &'static str,
    pub on: &'static str,
}

/// The kernel's feature and scx_sis's for one step of fair.c, when both exist.
pub type Calibration = (&'static str, Pair, Option<Pair>);

/// The comparisons whose configurations a bench ran: every pair whose kernel side
/// (feature off and on) and scx_sis side, where it has one, are all among `scheds`.
pub fn calibration_pairs(scheds: &[String]) -> Vec<&'static Calibration> {
    let has = |c: &str| scheds.iter().any(|s| s == c);
    CALIBRATION
        .iter()
        .filter(|(_, k, sis)| {
            has(k.off) && has(k.on) && sis.as_ref().is_none_or(|p| has(p.off) && has(p.on))
        })
        .collect()
}

/// A kernel feature and scx_sis's feature of the same name, each off against its default.
const fn same(name: &'static str, k_off: &'static str, sis_off: &'static str) -> Calibration {
    (
        name,
        Pair {
            off: k_off,
            on: "eevdf",
        },
        Some(Pair {
            off: sis_off,
            on: "sis",
        }),
    )
}

/// Every comparison of a kernel switch with scx_sis's, the older ones kept for the
/// committed results that ran them.
pub const CALIBRATION: [Calibration; 8] = [
    same("SIS_UTIL (both)", "eevdf:NO_SIS_UTIL", "sis:NO_SIS_UTIL"),
    same("HRTICK (both)", "eevdf:NO_HRTICK", "sis:NO_HRTICK"),
    same("WA_IDLE (both)", "eevdf:NO_WA_IDLE", "sis:NO_WA_IDLE"),
    same("WA_WEIGHT (both)", "eevdf:NO_WA_WEIGHT", "sis:NO_WA_WEIGHT"),
    same("WA_BIAS (both)", "eevdf:NO_WA_BIAS", "sis:NO_WA_BIAS"),
    // before scx_sis had WA_WEIGHT (61f3b0c): its wake_affine() was WA_IDLE's half
    same(
        "WA_IDLE (kernel) / WAKE_AFFINE (scx_sis)",
        "eevdf:NO_WA_IDLE",
        "sis:NO_WAKE_AFFINE",
    ),
    same(
        "wake_affine(): WA_IDLE+WA_WEIGHT (kernel) / WAKE_AFFINE (scx_sis), two LLCs",
        "eevdf:NO_WA_IDLE+NO_WA_WEIGHT",
        "sis:NO_WAKE_AFFINE",
    ),
    (
        "DELAY_DEQUEUE (EEVDF only)",
        Pair {
            off: "eevdf:NO_DELAY_DEQUEUE",
            on: "eevdf",
        },
        None,
    ),
];

/// Per run k, `off_k / on_k` of one side: that side's change, paired by round.
fn per_run(r: &Records, suite: &str, p: &Pair, load: u32, metric: &str) -> BTreeMap<u32, f64> {
    let get = |c: &str| r.get(&(suite.into(), c.into(), load, metric.into()));
    let (Some(off), Some(on)) = (get(p.off), get(p.on)) else {
        return BTreeMap::new();
    };
    off.iter()
        .filter_map(|(k, x)| on.get(k).filter(|y| **y > 0.0).map(|y| (*k, x / y)))
        .collect()
}

/// The kernel's change over scx_sis's, paired by round: 1 where the two agree.
fn ratio_of_ratios(r: &Records, suite: &str, k: &Pair, sis: &Pair, load: u32, m: &str) -> String {
    let (num, den) = (
        per_run(r, suite, k, load, m),
        per_run(r, suite, sis, load, m),
    );
    let bare = |v: &BTreeMap<u32, f64>| mean(v).filter(|x| *x > 0.0);
    let plain = bare(&num).zip(bare(&den)).map(|(a, b)| a / b);
    with_interval(paired_ci(&num, &den), plain)
}

/// "Turning X off": per suite, metric and load, the kernel's figure with the feature
/// on and off and their ratio, beside scx_sis's, and the kernel's change over scx_sis's
/// paired by round (`kernel/sis`): the kernel's own A/B is the reference a fidelity
/// claim is read against, and that last column tests the difference of the two.
pub fn calibration(r: &Records, plan: &Plan, pairs: &[&Calibration]) -> String {
    let avg = |s: &str, c: &str, l: u32, m: &str| {
        r.get(&(s.into(), c.into(), l, m.into())).and_then(mean)
    };
    let cell = |x: Option<f64>| x.map_or("-".into(), num);
    let mut out = String::from(
        "## Turning one step off: the kernel's change beside scx_sis's\n(mean of the runs; off / on with its 95 % interval; kernel/sis: the kernel's off/on over scx_sis's, paired by round, 1 where they agree; ~: the interval includes 1, ?: no interval)\n",
    );
    for (name, k, sis) in pairs {
        let _ = writeln!(out, "\n### {name}");
        let _ = writeln!(
            out,
            "{:<34} {:>5} {:>9} {:>9}  {:<24} {:>9} {:>9}  {:<24} {:<24}",
            "metric",
            "load",
            "eevdf on",
            "off",
            "off/on [95% CI]",
            "sis on",
            "off",
            "off/on [95% CI]",
            "kernel/sis [95% CI]"
        );
        for (s, loads) in &plan.suites {
            let shown = s.metrics.iter().filter(|m| s.calibrate.contains(&m.key));
            for m in shown {
                for &l in loads {
                    let (kon, koff) = (avg(s.name, k.on, l, m.key), avg(s.name, k.off, l, m.key));
                    if kon.is_none() && koff.is_none() {
                        continue;
                    }
                    let (son, soff, sr, rr) = match sis {
                        Some(p) => (
                            avg(s.name, p.on, l, m.key),
                            avg(s.name, p.off, l, m.key),
                            ratio_cell(r, (s.name, p.off, l, m.key), p.on),
                            ratio_of_ratios(r, s.name, k, p, l, m.key),
                        ),
                        None => (None, None, "-".into(), "-".into()),
                    };
                    let line = format!(
                        "{:<34} {:>5} {:>9} {:>9}  {:<24} {:>9} {:>9}  {:<24} {:<24}",
                        format!("{} {}", s.name, m.key),
                        l,
                        cell(kon),
                        cell(koff),
                        ratio_cell(r, (s.name, k.off, l, m.key), k.on),
                        cell(son),
                        cell(soff),
                        sr,
                        rr,
                    );
                    let _ = writeln!(out, "{}", line.trim_end());
                }
            }
        }
    }
    out
}
