// SPDX-License-Identifier: GPL-2.0-only
//! Tables in the seed's shape, the summary and the SVG plot of each suite (the CSV and
//! JSON files: files.rs).

use super::files::{write_csv, write_json};
use super::ops::ops_table;
use super::parse::{mean, ratio, Records};
use super::stats::{cell, paired_ci, ratio_ci, Ratio};
use super::suites::Suite;
use super::targets::targets;
use super::Plan;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

pub fn num(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn opt_ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.3}"))
}

/// The seed's table for one metric: a block per configuration, a line per load with
/// every run's value, the average, the ratio to the first configuration and, with
/// `vs`, a second ratio against that one; then the average of each `extras` metric
/// (key, heading), "-" where a configuration has none (EEVDF has no counters of ours).
#[allow(clippy::too_many_arguments)]
pub fn table(
    r: &Records,
    suite: &str,
    metric: &str,
    scheds: &[String],
    loads: &[u32],
    runs: u32,
    vs: Option<&str>,
    extras: &[(&str, &str)],
) -> String {
    let get = |c: &str, l: u32| r.get(&(suite.into(), c.into(), l, metric.into()));
    let mut out = String::new();
    let base = &scheds[0];
    for c in scheds {
        if !loads.iter().any(|&l| get(c, l).is_some()) {
            continue;
        }
        let mut head = format!("{c:<24}");
        for _ in 1..runs {
            head.push_str(&" ".repeat(9));
        }
        let _ = write!(head, "{:>9}{:>9}", "avg", format!("/{base}"));
        if let Some(v) = vs {
            let _ = write!(head, "  /{v}");
        }
        for (_, h) in extras {
            let _ = write!(head, " {h:>11}");
        }
        out.push_str(head.trim_end());
        out.push('\n');
        for &l in loads {
            let Some(vals) = get(c, l) else { continue };
            let mut line = format!("{l:<6}");
            for run in 1..=runs {
                let _ = write!(
                    line,
                    "{:>9}",
                    vals.get(&run).map_or("-".into(), |v| num(*v))
                );
            }
            let avg = mean(vals);
            let _ = write!(
                line,
                "{:>9}{:>9}",
                avg.map_or("-".into(), num),
                opt_ratio(ratio(avg, get(base, l).and_then(mean)))
            );
            if let Some(v) = vs {
                let _ = write!(
                    line,
                    "{:>9}",
                    opt_ratio(ratio(avg, get(v, l).and_then(mean)))
                );
            }
            for (k, _) in extras {
                let x = r.get(&(suite.into(), c.clone(), l, k.to_string()));
                let _ = write!(line, " {:>11}", x.and_then(mean).map_or("-".into(), num));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// `a / b` with its 95 % interval, `~` after the ratio when the interval includes 1;
/// `?` after a ratio that has no interval (a single run, no spread on either side, or
/// a zero mean): read it as "not judged".
pub fn ratio_cell(r: &Records, key_a: (&str, &str, u32, &str), b: &str) -> String {
    let (s, a, l, m) = key_a;
    if a == b {
        return "1.000".into();
    }
    let get = |c: &str| r.get(&(s.into(), c.into(), l, m.into())).and_then(cell);
    match (get(a), get(b)) {
        (Some(x), Some(y)) => with_interval(ratio_ci(&x, &y), ratio(Some(x.mean), Some(y.mean))),
        _ => "-".into(),
    }
}

/// A ratio with its interval and mark, or the bare ratio marked `?`.
pub fn with_interval(q: Option<Ratio>, bare: Option<f64>) -> String {
    match (q, bare) {
        (Some(q), _) => format!(
            "{:.3}{} [{:.3},{:.3}]",
            q.ratio,
            if q.significant { " " } else { "~" },
            q.lo,
            q.hi
        ),
        (None, Some(b)) if b.is_finite() => format!("{b:.3}?"),
        _ => "-".into(),
    }
}

/// `a / b` paired by run (`paired_ci`), formatted as `ratio_cell` does.
pub fn paired_cell(r: &Records, key_a: (&str, &str, u32, &str), b: &str) -> String {
    let (s, a, l, m) = key_a;
    if a == b {
        return "1.000".into();
    }
    let get = |c: &str| r.get(&(s.into(), c.into(), l, m.into()));
    match (get(a), get(b)) {
        (Some(x), Some(y)) => with_interval(paired_ci(x, y), ratio(mean(x), mean(y))),
        _ => "-".into(),
    }
}

/// The statistics layout: a block per configuration, a line per load with n, mean,
/// sd, min and max, the ratio to the first configuration (and to `vs`) with its 95 %
/// interval, then each `extras` metric's mean.
pub fn stats_table(
    r: &Records,
    suite: &str,
    metric: &str,
    scheds: &[String],
    loads: &[u32],
    vs: Option<&str>,
    extras: &[(&str, &str)],
) -> String {
    let get = |c: &str, l: u32| r.get(&(suite.into(), c.into(), l, metric.into()));
    let base = &scheds[0];
    let mut out = String::new();
    for c in scheds {
        if !loads.iter().any(|&l| get(c, l).is_some()) {
            continue;
        }
        let mut head = format!(
            "{c:<24}{:>3} {:>9} {:>8} {:>9} {:>9}  {:<25}",
            "n",
            "mean",
            "sd",
            "min",
            "max",
            format!("/{base} [95% CI]")
        );
        if let Some(v) = vs {
            let _ = write!(head, "{:<25}", format!("/{v} [95% CI]"));
        }
        for (_, h) in extras {
            let _ = write!(head, " {h:>11}");
        }
        out.push_str(head.trim_end());
        out.push('\n');
        for &l in loads {
            let Some(x) = get(c, l).and_then(cell) else {
                continue;
            };
            let mut line = format!(
                "{l:<24}{:>3} {:>9} {:>8} {:>9} {:>9}  {:<25}",
                x.n,
                num(x.mean),
                num(x.sd),
                num(x.min),
                num(x.max),
                ratio_cell(r, (suite, c, l, metric), base)
            );
            if let Some(v) = vs {
                let _ = write!(line, "{:<25}", ratio_cell(r, (suite, c, l, metric), v));
            }
            for (k, _) in extras {
                let e = r.get(&(suite.into(), c.clone(), l, k.to_string()));
                let _ = write!(line, " {:>11}", e.and_then(mean).map_or("-".into(), num));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Columns beside tbench's throughput: scx_sis's own counters over the same runs.
pub const TBENCH_EXTRAS: [(&str, &str); 4] = [
    ("scan_mean", "scan/wakeup"),
    ("cut_pct", "cut%"),
    ("bpf_ns_per_wakeup", "BPFns/wakeup"),
    ("bpf_all_ns_per_select", "allBPFns/sel"),
];

/// Ratios of the first metric to the first configuration, a line per load: each the
/// geometric mean of the per-run ratios (runs paired by round) with its 95 % interval.
pub fn summary(r: &Records, s: &Suite, scheds: &[String], loads: &[u32]) -> String {
    let metric = s.metrics[0].key;
    let mut out = format!("{:<8}", s.load.split(' ').next().unwrap_or("load"));
    for c in scheds {
        let _ = write!(out, " {c:>22}");
    }
    out.push('\n');
    for &l in loads {
        let _ = write!(out, "{l:<8}");
        for c in scheds {
            let cell = paired_cell(r, (s.name, c, l, metric), &scheds[0]);
            let _ = write!(out, " {cell:>22}");
        }
        out.push('\n');
    }
    out
}

/// The key prefix of the probe's waker-side latency histogram (bucket floor in us).
pub const HIST_PREFIX: &str = "probe_hist_us_";

/// Waker-side latency pooled over every run of one cell: (wakeups, p50, p99, p99.9),
/// each a bucket floor in us (exact below 16 us, then 8 buckets per power of two).
pub fn pooled(r: &Records, suite: &str, conf: &str, load: u32) -> Option<(u64, u64, u64, u64)> {
    let mut hist: BTreeMap<u64, u64> = BTreeMap::new();
    for ((s, c, l, m), runs) in r {
        let Some(b) = m.strip_prefix(HIST_PREFIX) else {
            continue;
        };
        if s == suite && c == conf && *l == load {
            let b: u64 = b.parse().ok()?;
            *hist.entry(b).or_default() += runs.values().sum::<f64>() as u64;
        }
    }
    let n: u64 = hist.values().sum();
    if n == 0 {
        return None;
    }
    // nearest rank, as the probe's own percentiles: the value at index q * (n - 1)
    let at = |q: f64| {
        let rank = (q * (n - 1) as f64) as u64;
        let mut seen = 0;
        hist.iter()
            .find(|(_, c)| {
                seen += **c;
                seen > rank
            })
            .map_or(0, |(b, _)| *b)
    };
    Some((n, at(0.5), at(0.99), at(0.999)))
}

/// The pooled table of a suite whose runs carry the probe's histogram.
fn pooled_table(r: &Records, suite: &str, scheds: &[String], loads: &[u32]) -> String {
    let mut out = String::new();
    for c in scheds {
        for &l in loads {
            if let Some((n, p50, p99, p999)) = pooled(r, suite, c, l) {
                let _ = writeln!(out, "{c:<34} {l:>5} {n:>9} {p50:>7} {p99:>7} {p999:>7}");
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    format!(
        "\n## {suite}: wakeup latency from the waker's clock, every run pooled (us, bucket floor: exact below 16, then 12.5 %)\n{:<34} {:>5} {:>9} {:>7} {:>7} {:>7}\n{out}",
        "sched", "load", "wakeups", "p50", "p99", "p99.9"
    )
}

/// One line per run whose trace lost events (the ring buffer overflowed): its
/// per-1000 figures and percentiles miss wakeups, so the run is marked, not hidden.
pub fn lost_marks(r: &Records, suite: &str) -> Vec<String> {
    r.iter()
        .filter(|((s, _, _, m), _)| s == suite && m == "lost_events")
        .flat_map(|((_, conf, load, _), runs)| {
            runs.iter()
                .filter(|(_, &v)| v > 0.0)
                .map(move |(run, v)| {
                    format!("MARKED: {conf} at {load}, run {run}: the trace lost {v:.0} events (figures from an incomplete trace)")
                })
        })
        .collect()
}

/// What a table shows: a metric's key, its heading's label, which way is better, and
/// the `extras` columns beside it.
struct Shown<'a> {
    key: &'a str,
    label: &'a str,
    higher_is_better: bool,
    extras: &'a [(&'a str, &'a str)],
}

impl<'a> Shown<'a> {
    /// The suite's metric @i; tbench's first also says how far each search went (the
    /// seed's question).
    fn metric(s: &'a Suite, i: usize) -> Self {
        let m = &s.metrics[i];
        let extras: &[(&str, &str)] = if s.name == "tbench" && i == 0 {
            &TBENCH_EXTRAS
        } else {
            &[]
        };
        Shown {
            key: m.key,
            label: m.label,
            higher_is_better: m.higher_is_better,
            extras,
        }
    }
}

/// One table with its heading, or None without data.
fn metric_table(
    r: &Records,
    plan: &Plan,
    s: &Suite,
    m: &Shown,
    loads: &[u32],
    vs: Option<&str>,
    seed_format: bool,
) -> Option<String> {
    // a --vs naming the first configuration repeats its column: printed once
    let vs = vs.filter(|v| *v != plan.scheds[0]);
    let t = if seed_format {
        table(
            r,
            s.name,
            m.key,
            &plan.scheds,
            loads,
            plan.runs,
            vs,
            m.extras,
        )
    } else {
        stats_table(r, s.name, m.key, &plan.scheds, loads, vs, m.extras)
    };
    if t.is_empty() {
        return None;
    }
    let how = if seed_format {
        "every run, average, ratio"
    } else {
        "mean, sd, min, max of n runs; ratio with 95 % CI, ~: the interval includes 1, ?: no interval"
    };
    let better = if m.higher_is_better {
        "higher"
    } else {
        "lower"
    };
    Some(format!(
        "\n## {}: {} by {} ({better} is better; {how})\n{t}\n",
        s.name, m.label, s.load
    ))
}

/// Is @key one op's ns per select_cpu (`op_NAME_ns`) that some run of @suite carries?
fn is_op_metric(r: &Records, suite: &str, key: &str) -> bool {
    key.starts_with("op_")
        && key.ends_with("_ns")
        && r.keys().any(|(s, _, _, m)| s == suite && m == key)
}

/// The tables of @keys only (`--part SUITE:KEY+KEY`), the suite's in its order, then
/// each op's (`op_NAME_ns`, any op a run carries) in the keys' order.
pub fn metric_tables(
    r: &Records,
    plan: &Plan,
    s: &Suite,
    loads: &[u32],
    vs: Option<&str>,
    keys: &[&str],
    seed_format: bool,
) -> Result<String> {
    for k in keys {
        anyhow::ensure!(
            s.metrics.iter().any(|m| m.key == *k) || is_op_metric(r, s.name, k),
            "{k}: not a metric of {} (its tables: {}; or op_NAME_ns of an op it ran)",
            s.name,
            s.metrics
                .iter()
                .map(|m| m.key)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut text: String = (0..s.metrics.len())
        .filter(|&i| keys.contains(&s.metrics[i].key))
        .filter_map(|i| metric_table(r, plan, s, &Shown::metric(s, i), loads, vs, seed_format))
        .collect();
    for k in keys
        .iter()
        .filter(|k| !s.metrics.iter().any(|m| m.key == **k))
    {
        // an op's ns per select_cpu call, as `ops_table` sums them
        let op = k.trim_start_matches("op_").trim_end_matches("_ns");
        let label = format!("ns of {op} per select_cpu call (BPF stats)");
        let m = Shown {
            key: k,
            label: &label,
            higher_is_better: false,
            extras: &[],
        };
        text.extend(metric_table(r, plan, s, &m, loads, vs, seed_format));
    }
    Ok(text.replace("\n\n\n", "\n\n"))
}

/// One suite's tables, as `report` prints them and `--from ... --part SUITE` shows them.
pub fn suite_text(
    r: &Records,
    plan: &Plan,
    s: &Suite,
    loads: &[u32],
    vs: Option<&str>,
    cpus: u32,
    seed_format: bool,
) -> String {
    let mut text: String = (0..s.metrics.len())
        .filter_map(|i| metric_table(r, plan, s, &Shown::metric(s, i), loads, vs, seed_format))
        .collect();
    let _ = writeln!(
        text,
        "## {} summary: {} ratio to {}, runs paired by round (geometric mean of the per-run ratios, 95 % CI; ~: includes 1, ?: no interval)\n{}",
        s.name,
        s.metrics[0].label,
        plan.scheds[0],
        summary(r, s, &plan.scheds, loads)
    );
    for t in targets(r, s.name, &plan.scheds, loads, cpus) {
        let _ = writeln!(text, "{t}");
    }
    text.push_str(&pooled_table(r, s.name, &plan.scheds, loads));
    text.push_str(&ops_table(r, s.name, &plan.scheds, loads));
    for l in lost_marks(r, s.name) {
        let _ = writeln!(text, "{l}");
    }
    text
}

/// Print the tables and write CSV, JSON and SVG files per suite.
pub fn report(
    r: &Records,
    plan: &Plan,
    vs: Option<&str>,
    cpus: u32,
    header: &str,
    out: &Path,
    seed_format: bool,
) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for (s, loads) in &plan.suites {
        let text = suite_text(r, plan, s, loads, vs, cpus, seed_format);
        println!("# {header}{text}");
        let base = out.join(s.name);
        std::fs::write(base.with_extension("txt"), format!("# {header}\n{text}"))
            .context("writing the table")?;
        write_csv(r, s.name, &base.with_extension("csv"))?;
        write_json(r, s, plan, header, cpus, &base.with_extension("json"))?;
        super::plot::svg(
            r,
            s,
            &plan.scheds,
            loads,
            header,
            &base.with_extension("svg"),
        )?;
        println!("bench: wrote {}.{{txt,csv,json,svg}}", base.display());
    }
    Ok(())
}
