// SPDX-License-Identifier: GPL-2.0-only
//! The guest's `bench:` and `bench-mon:` lines into records, and their averages.

use std::collections::BTreeMap;

/// scx_sis's derived figures, the one definition its stats use too.
#[path = "../../../src/derived.rs"]
mod derived;

/// Every figure: (suite, sched, load, metric) -> value per run.
pub type Records = BTreeMap<(String, String, u32, String), BTreeMap<u32, f64>>;

pub fn kv(s: &str) -> BTreeMap<&str, &str> {
    s.split_whitespace()
        .filter_map(|t| t.split_once('='))
        .collect()
}

/// The figures the tracer (sis-probe trace) prints under the names scx_sis's stats use:
/// scx_sis's own go into the records as `sis_NAME`.
const TRACER_NAMES: &[&str] = &[
    "missed_idle_core_per_1k",
    "missed_idle_cpu_per_1k",
    "stacked_per_1k",
    "idle_cpus_mean",
];

/// Parse the guest's `bench:` and `bench-mon:` lines.
pub fn parse(output: &str) -> Records {
    let mut r = Records::new();
    // scx_sis's own counters, summed over the per-second samples of one measurement
    let mut mon: BTreeMap<(String, String, u32, u32), BTreeMap<String, f64>> = BTreeMap::new();
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("bench: ") {
            let f = kv(rest);
            let (Some(s), Some(c), Some(run), Some(load)) =
                (f.get("suite"), f.get("sched"), f.get("run"), f.get("load"))
            else {
                continue;
            };
            let (Ok(run), Ok(load)) = (run.parse(), load.parse()) else {
                continue;
            };
            for (k, v) in &f {
                if let Ok(v) = v.parse::<f64>() {
                    if v.is_finite() && !["run", "load"].contains(k) {
                        r.entry((s.to_string(), c.to_string(), load, k.to_string()))
                            .or_default()
                            .insert(run, v);
                    }
                }
            }
        } else if let Some(rest) = line.strip_prefix("bench-mon: ") {
            let Some(brace) = rest.find('{') else {
                continue;
            };
            let f = kv(&rest[..brace]);
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&rest[brace..]) else {
                continue;
            };
            let (Some(s), Some(c), Some(Ok(run)), Some(Ok(load))) = (
                f.get("suite"),
                f.get("sched"),
                f.get("run").map(|v| v.parse()),
                f.get("load").map(|v| v.parse()),
            ) else {
                continue;
            };
            let sums = mon
                .entry((s.to_string(), c.to_string(), load, run))
                .or_default();
            let counters = derived::DERIVED
                .iter()
                .flat_map(|d| d.num.iter().chain(d.den));
            let own = ["prog_run_ns", "prog_run_cnt", "scanned", "select_cpu"];
            let keys: std::collections::BTreeSet<&str> = counters.copied().chain(own).collect();
            for k in keys {
                *sums.entry(k.to_string()).or_default() += json[k].as_f64().unwrap_or(0.0);
            }
            let mx = json["scan_max"].as_f64().unwrap_or(0.0);
            let e = sums.entry("scan_max".into()).or_default();
            *e = e.max(mx);
            // each BPF program's cost: "prog ns" and "prog runs" summed per program
            if let Some(progs) = json["progs"].as_object() {
                for (name, p) in progs {
                    for (k, f) in [("ns", "run_ns"), ("runs", "runs")] {
                        *sums.entry(format!("{name} {k}")).or_default() +=
                            p[f].as_f64().unwrap_or(0.0);
                    }
                }
            }
        }
    }
    for ((s, c, load, run), v) in mon {
        let bpf_ns: f64 = v
            .iter()
            .filter(|(k, _)| k.ends_with(" ns"))
            .map(|(_, x)| x)
            .sum();
        let progs: Vec<(String, Option<f64>)> = v
            .keys()
            .filter_map(|k| k.strip_suffix(" ns"))
            .map(|name| {
                let runs = v.get(&format!("{name} runs")).copied().unwrap_or(0.0);
                let ns = v.get(&format!("{name} ns")).copied().unwrap_or(0.0);
                (format!("bpf_{name}_ns"), derived::ns_per_run(ns, runs))
            })
            .collect();
        let ratio = |n: &str, d: &str, scale: f64| {
            let d = v.get(d).copied().unwrap_or(0.0);
            (d > 0.0).then(|| v.get(n).copied().unwrap_or(0.0) / d * scale)
        };
        let mut put = |k: &str, x: Option<f64>| {
            if let Some(x) = x {
                r.entry((s.clone(), c.clone(), load, k.to_string()))
                    .or_default()
                    .insert(run, x);
            }
        };
        let calls = v.get("select_cpu").copied().unwrap_or(0.0);
        if bpf_ns > 0.0 {
            put(
                "bpf_ns_per_wakeup",
                derived::bpf_ns_per_wakeup(bpf_ns, calls),
            );
        }
        for (k, x) in progs {
            put(&k, x);
        }
        if s == "cost" {
            let get = |k: &str| v.get(k).copied().unwrap_or(0.0);
            put(
                "select_ns",
                derived::ns_per_run(get("prog_run_ns"), get("prog_run_cnt")),
            );
            put("scan_max", v.get("scan_max").copied());
            put("select_cpu_calls", v.get("select_cpu").copied());
        }
        // mean CPUs tested per wakeup, exact (the stats line's comes from a histogram)
        put("scan_mean", ratio("scanned", "select_cpu", 1.0));
        let get = |k: &str| v.get(k).copied().unwrap_or(0.0);
        for d in derived::DERIVED {
            // the tracer's figures carry the plain names; scx_sis's own are sis_*
            let name = if TRACER_NAMES.contains(&d.name) {
                format!("sis_{}", d.name)
            } else {
                d.name.to_string()
            };
            put(&name, derived::value(d, &get));
        }
    }
    conditional_rates(&mut r);
    r
}

/// The tracer's miss rates over the wakeups where an idle core (CPU) existed, from its
/// rates over all wakeups: `missed_given_{core,cpu}_per_1k`, for every run that has
/// the counts (also runs read back from a results folder).
pub fn conditional_rates(r: &mut Records) {
    let mut add = Vec::new();
    for ((s, c, l, m), runs) in r.iter() {
        let Some(kind) = m
            .strip_prefix("missed_idle_")
            .and_then(|k| k.strip_suffix("_per_1k"))
        else {
            continue;
        };
        let get = |k: &str| r.get(&(s.clone(), c.clone(), *l, k.to_string()));
        let (Some(wakeups), Some(existed)) =
            (get("q_wakeups"), get(&format!("idle_{kind}_existed")))
        else {
            continue;
        };
        let out: BTreeMap<u32, f64> = runs
            .iter()
            .filter_map(|(run, per_1k)| {
                let (w, e) = (wakeups.get(run)?, existed.get(run)?);
                (*e > 0.0).then(|| (*run, per_1k * w / e))
            })
            .collect();
        if !out.is_empty() {
            let key = format!("missed_given_{kind}_per_1k");
            add.push(((s.clone(), c.clone(), *l, key), out));
        }
    }
    r.extend(add);
}

pub fn mean(v: &BTreeMap<u32, f64>) -> Option<f64> {
    (!v.is_empty()).then(|| v.values().sum::<f64>() / v.len() as f64)
}

/// avg(a) / avg(b), when both exist and b is not 0.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}

#[cfg(test)]
mod schbench_tests {
    use std::process::Command;

    /// tests/guest/schbench.awk on a two-interval schbench report in v1.0's format: the
    /// last Wakeup block's p50/p99/p99.9, never the "99.0th:" label or the request block.
    #[test]
    fn schbench_awk_reads_the_last_wakeup_block() {
        let root = crate::repo_root().join("tests/guest");
        let out = Command::new("awk")
            .arg("-f")
            .arg(root.join("schbench.awk"))
            .arg(root.join("testdata/schbench-format.txt"))
            .output()
            .expect("running awk");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.trim(),
            "schbench_p50_us=8 schbench_p99_us=175 schbench_p999_us=909"
        );
        let kv = super::kv(text.trim());
        assert_eq!(kv.get("schbench_p99_us"), Some(&"175"));
    }
}
