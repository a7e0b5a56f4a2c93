// SPDX-License-Identifier: GPL-2.0-only
//! Where a scheduler's BPF time goes, op by op.

use super::parse::{mean, Records};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The sched_ext ops in the order a wakeup meets them; the ops table's columns.
pub const OPS: [&str; 8] = [
    "select_cpu",
    "enqueue",
    "dispatch",
    "runnable",
    "running",
    "stopping",
    "tick",
    "update_idle",
];

/// Where a scheduler's BPF time goes: each op's ns per select_cpu call (the guest's
/// `op_NAME_ns`, from the kernel's statistics of the scheduler's programs), the mean
/// over the runs of a cell; the ops outside `OPS` summed as `other`. Empty when no run
/// of the suite carries them (EEVDF, or a suite that keeps the statistics off).
pub fn ops_table(r: &Records, suite: &str, scheds: &[String], loads: &[u32]) -> String {
    let ops_of = |c: &str, l: u32| -> BTreeMap<String, f64> {
        r.iter()
            .filter(|((s, cc, ll, m), _)| s == suite && cc == c && *ll == l && m.starts_with("op_"))
            .filter_map(|((_, _, _, m), runs)| {
                let op = m.strip_prefix("op_")?.strip_suffix("_ns")?;
                let op = if OPS.contains(&op) { op } else { "other" };
                Some((op.to_string(), mean(runs)?))
            })
            .fold(BTreeMap::new(), |mut acc, (op, v)| {
                *acc.entry(op).or_default() += v;
                acc
            })
    };
    let mut out = String::new();
    for c in scheds {
        for &l in loads {
            let ops = ops_of(c, l);
            if ops.is_empty() {
                continue;
            }
            let _ = write!(out, "{c:<24} {l:>5}");
            for op in OPS.iter().copied().chain(["other"]) {
                let _ = write!(
                    out,
                    " {:>11}",
                    ops.get(op).map_or("-".into(), |v| format!("{v:.0}"))
                );
            }
            let _ = writeln!(out, " {:>9.0}", ops.values().sum::<f64>());
        }
    }
    if out.is_empty() {
        return out;
    }
    let mut head = format!("{:<24} {:>5}", "sched", "load");
    for op in OPS.iter().copied().chain(["other"]) {
        let _ = write!(head, " {op:>11}");
    }
    format!(
        "\n## {suite}: where the BPF time goes: ns of each op per select_cpu call (BPF stats of the scheduler's struct_ops programs, and since f88d2f7 of the programs sharing their maps, under other; mean of the runs; -: the scheduler has no such program)\n{head} {:>9}\n{out}",
        "all"
    )
}
