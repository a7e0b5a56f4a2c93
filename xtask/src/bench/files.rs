// SPDX-License-Identifier: GPL-2.0-only
//! A suite's results as files: the CSV every table is recomputed from, and the JSON.

use super::parse::{mean, ratio, Records};
use super::report::pooled;
use super::stats::{cell, ratio_ci};
use super::suites::Suite;
use super::targets::targets;
use super::Plan;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::Path;

/// Every value of `suite`, a row each.
pub fn write_csv(r: &Records, suite: &str, path: &Path) -> Result<()> {
    let mut s = String::from("suite,sched,load,run,metric,value\n");
    for ((su, c, l, m), vals) in r.iter().filter(|(k, _)| k.0 == suite) {
        for (run, v) in vals {
            let _ = writeln!(s, "{su},{c},{l},{run},{m},{v}");
        }
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}

/// The inverse of `write_csv`: every row into `r`; returns the highest run number.
pub fn read_csv(path: &Path, r: &mut Records) -> Result<u32> {
    let csv =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut runs = 0;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let bad = || anyhow::anyhow!("{}: bad row '{line}'", path.display());
        let [su, c, l, run, m, v] = f[..] else {
            return Err(bad());
        };
        let (Ok(l), Ok(run), Ok(v)) = (l.parse::<u32>(), run.parse::<u32>(), v.parse::<f64>())
        else {
            return Err(bad());
        };
        runs = runs.max(run);
        r.entry((su.to_string(), c.to_string(), l, m.to_string()))
            .or_default()
            .insert(run, v);
    }
    super::parse::conditional_rates(r);
    Ok(runs)
}

pub fn write_json(
    r: &Records,
    s: &Suite,
    plan: &Plan,
    header: &str,
    cpus: u32,
    path: &Path,
) -> Result<()> {
    let mut results = vec![];
    for ((su, c, l, m), vals) in r.iter().filter(|(k, _)| k.0 == s.name) {
        let avg = mean(vals);
        let base_vals = r.get(&(su.clone(), plan.scheds[0].clone(), *l, m.clone()));
        let base = base_vals.and_then(mean);
        let st = cell(vals);
        let ci = match (st, base_vals.and_then(cell)) {
            (Some(a), Some(b)) => ratio_ci(&a, &b),
            _ => None,
        };
        results.push(serde_json::json!({
            "sched": c, "load": l, "metric": m,
            "runs": vals.iter().map(|(run, v)| serde_json::json!({"run": run, "value": v})).collect::<Vec<_>>(),
            "avg": avg, "ratio": ratio(avg, base),
            "n": st.map(|x| x.n), "sd": st.map(|x| x.sd),
            "min": st.map(|x| x.min), "max": st.map(|x| x.max),
            "ratio_ci95": ci.map(|q| [q.lo, q.hi]),
            "ratio_significant": ci.map(|q| q.significant),
        }));
    }
    let (_, loads) = plan
        .suites
        .iter()
        .find(|(x, _)| x.name == s.name)
        .context("suite in plan")?;
    let doc = serde_json::json!({
        "suite": s.name, "setup": header, "cpus": cpus, "load": s.load,
        "scheds": plan.scheds, "loads": loads, "baseline": plan.scheds[0],
        "results": results,
        "pooled_waker_latency_us": plan.scheds.iter().flat_map(|c| loads.iter().filter_map(move |&l| {
            pooled(r, s.name, c, l).map(|(n, p50, p99, p999)| serde_json::json!({
                "sched": c, "load": l, "wakeups": n, "p50": p50, "p99": p99, "p999": p999}))
        })).collect::<Vec<_>>(),
        "targets": targets(r, s.name, &plan.scheds, loads, cpus),
    });
    std::fs::write(path, serde_json::to_string_pretty(&doc)?)
        .with_context(|| format!("writing {}", path.display()))
}
