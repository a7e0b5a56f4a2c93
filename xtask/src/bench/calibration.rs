// SPDX-License-Identifier: GPL-2.0-only
//! The calibration table: a kernel feature switched off beside scx_sis's counterpart,
//! each change with its interval.

use super::parse::{mean, Records};
use super::report::{num, ratio_cell};
use super::Plan;
use std::fmt::Write as _;

/// A configuration with one feature off against its own default.
pub struct Pair {
    pub off: &'static str,
    pub on: &'static str,
}

/// The kernel's feature and scx_sis's for one step of fair.c, when both exist.
pub type Calibration = (&'static str, Pair, Option<Pair>);

/// The comparisons a preset's calibration table shows, if it has one.
pub fn calibration_pairs(preset: &str) -> Option<&'static [Calibration]> {
    match preset {
        "calibrate" => Some(&CALIBRATION),
        "llc" => Some(&LLC_CALIBRATION),
        _ => None,
    }
}

/// wake_affine() across two LLCs of one socket (the `llc` preset).
const LLC_CALIBRATION: [Calibration; 1] = [(
    "wake_affine(): WA_IDLE+WA_WEIGHT (kernel) / WAKE_AFFINE (scx_sis), two LLCs",
    Pair {
        off: "eevdf:NO_WA_IDLE+NO_WA_WEIGHT",
        on: "eevdf",
    },
    Some(Pair {
        off: "sis:NO_WAKE_AFFINE",
        on: "sis",
    }),
)];

const CALIBRATION: [Calibration; 3] = [
    (
        "SIS_UTIL (both)",
        Pair {
            off: "eevdf:NO_SIS_UTIL",
            on: "eevdf",
        },
        Some(Pair {
            off: "sis:NO_SIS_UTIL",
            on: "sis",
        }),
    ),
    (
        "WA_IDLE (kernel) / WAKE_AFFINE (scx_sis)",
        Pair {
            off: "eevdf:NO_WA_IDLE",
            on: "eevdf",
        },
        Some(Pair {
            off: "sis:NO_WAKE_AFFINE",
            on: "sis",
        }),
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

/// "Turning X off": per suite, metric and load, the kernel's figure with the feature
/// on and off and their ratio, beside scx_sis's; the kernel's own A/B is the reference
/// a fidelity claim is read against.
pub fn calibration(r: &Records, plan: &Plan, pairs: &[Calibration]) -> String {
    let avg = |s: &str, c: &str, l: u32, m: &str| {
        r.get(&(s.into(), c.into(), l, m.into())).and_then(mean)
    };
    let cell = |x: Option<f64>| x.map_or("-".into(), num);
    let mut out = String::from(
        "## Turning one step off: the kernel's change beside scx_sis's\n(mean of the runs; off / on with its 95 % interval, ~: the interval includes 1, ?: no interval)\n",
    );
    for (name, k, sis) in pairs {
        let _ = writeln!(out, "\n### {name}");
        let _ = writeln!(
            out,
            "{:<34} {:>5} {:>9} {:>9}  {:<24} {:>9} {:>9}  {:<24}",
            "metric",
            "load",
            "eevdf on",
            "off",
            "off/on [95% CI]",
            "sis on",
            "off",
            "off/on [95% CI]"
        );
        for (s, loads) in &plan.suites {
            for m in s.metrics.iter().take(3) {
                for &l in loads {
                    let (kon, koff) = (avg(s.name, k.on, l, m.key), avg(s.name, k.off, l, m.key));
                    if kon.is_none() && koff.is_none() {
                        continue;
                    }
                    let (son, soff, sr) = match sis {
                        Some(p) => (
                            avg(s.name, p.on, l, m.key),
                            avg(s.name, p.off, l, m.key),
                            ratio_cell(r, (s.name, p.off, l, m.key), p.on),
                        ),
                        None => (None, None, "-".into()),
                    };
                    let line = format!(
                        "{:<34} {:>5} {:>9} {:>9}  {:<24} {:>9} {:>9}  {:<24}",
                        format!("{} {}", s.name, m.key),
                        l,
                        cell(kon),
                        cell(koff),
                        ratio_cell(r, (s.name, k.off, l, m.key), k.on),
                        cell(son),
                        cell(soff),
                        sr,
                    );
                    let _ = writeln!(out, "{}", line.trim_end());
                }
            }
        }
    }
    out
}
