// SPDX-License-Identifier: GPL-2.0-only
//! The targets the issues set, checked against a suite's runs.

use super::parse::{mean, ratio, Records};

/// The issues' targets, one line each, MET or MISSED by the means of the runs: a point
/// estimate with no interval, so a verdict near the bound is not a test of it.
pub fn targets(
    r: &Records,
    suite: &str,
    scheds: &[String],
    loads: &[u32],
    cpus: u32,
) -> Vec<String> {
    let avg =
        |c: &str, l: u32, m: &str| r.get(&(suite.into(), c.into(), l, m.into())).and_then(mean);
    let mut out = vec![];
    let sis = scheds.iter().filter(|c| c.starts_with("sis"));
    for c in sis {
        let line = match suite {
            "tbench" | "wakeup" if scheds[0] == "eevdf" => {
                let (m, want, cmp): (&str, &str, fn(f64) -> bool) = if suite == "tbench" {
                    ("mb_s", ">= 0.98 x eevdf at every client count", |x| {
                        x >= 0.98
                    })
                } else {
                    ("lat_p99_us", "p99 <= eevdf while workers <= CPUs", |x| {
                        x <= 1.0
                    })
                };
                let bad: Vec<String> = loads
                    .iter()
                    .filter(|&&l| suite == "tbench" || l <= cpus)
                    .filter_map(|&l| {
                        let x = ratio(avg(c, l, m), avg("eevdf", l, m))?;
                        (!cmp(x)).then(|| format!("{l}: {x:.3}"))
                    })
                    .collect();
                format_target(c, want, &bad)
            }
            "cost" if !c.contains("NO_SIS_UTIL") => {
                let (Some(&idle), Some(&full)) = (loads.first(), loads.last()) else {
                    continue;
                };
                match ratio(avg(c, full, "select_ns"), avg(c, idle, "select_ns")) {
                    Some(x) if x <= 1.5 => format!(
                        "target {c}: ns/select_cpu at full load <= 1.5 x idle: MET (means) ({x:.2})"
                    ),
                    Some(x) => format!(
                        "target {c}: ns/select_cpu at full load <= 1.5 x idle: MISSED (means) ({x:.2})"
                    ),
                    None => continue,
                }
            }
            _ => continue,
        };
        out.push(line);
    }
    // the cost target: all of scx_sis's BPF per select_cpu, against scx_cosmos's
    if matches!(suite, "cost" | "wakeup") && scheds.iter().any(|c| c == "scx_cosmos") {
        let m = "bpf_all_ns_per_select";
        let bad: Vec<String> = loads
            .iter()
            .filter_map(|&l| {
                let x = ratio(avg("sis", l, m), avg("scx_cosmos", l, m))?;
                (x > 1.0).then(|| format!("{l}: {x:.2}"))
            })
            .collect();
        if loads.iter().any(|&l| avg("sis", l, m).is_some()) {
            out.push(format_target(
                "sis",
                "all BPF ns per select_cpu <= scx_cosmos's at every load",
                &bad,
            ));
        }
    }
    out
}

/// One target's line: MET, or MISSED with the loads that miss it (by the means).
pub fn format_target(c: &str, want: &str, bad: &[String]) -> String {
    if bad.is_empty() {
        format!("target {c}: {want}: MET (means)")
    } else {
        format!("target {c}: {want}: MISSED (means) at {}", bad.join(", "))
    }
}
