// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask bench`: every configuration of one comparison inside one guest boot,
//! interleaved run by run; tables in the shape of the 2016 select_idle_sibling
//! threads (value per run, average, ratio to the first configuration), CSV, JSON and
//! one SVG plot per suite under target/bench/.

use crate::{build_probe, build_scheduler, repo_root, setup, vm, GuestOpts};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args)]
pub struct BenchOpts {
    /// Suites, comma-separated: tbench, wakeup, hackbench, pipe, cost, placement.
    suite: String,
    /// Configurations: eevdf (the kernel's own scheduler), sis, sis:NO_X+NO_Y, or a peer
    /// sched_ext scheduler from crates.io (scx_cosmos, scx_bpfland, ...).
    #[arg(
        long,
        default_value = "eevdf,sis,sis:NO_IDLE_CORE,sis:NO_SIS_UTIL,scx_cosmos"
    )]
    sched: String,
    /// Runs of every configuration, interleaved.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    runs: u32,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=120))]
    secs: u32,
    /// Load points (tbench clients, workers, hackbench groups, hog CPUs), comma-separated;
    /// default: each suite's own range, from a quarter (or one) to twice the CPUs.
    #[arg(long, alias = "clients")]
    loads: Option<String>,
    /// A second configuration to give a ratio column against.
    #[arg(long)]
    vs: Option<String>,
    /// Where the CSV, JSON and SVG files go.
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    #[command(flatten)]
    guest: GuestOpts,
}

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

const fn m(key: &'static str, label: &'static str, higher_is_better: bool) -> Metric {
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

/// Every figure: (suite, sched, load, metric) -> value per run.
pub type Records = BTreeMap<(String, String, u32, String), BTreeMap<u32, f64>>;

fn kv(s: &str) -> BTreeMap<&str, &str> {
    s.split_whitespace()
        .filter_map(|t| t.split_once('='))
        .collect()
}

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
            for k in [
                "prog_run_ns",
                "prog_run_cnt",
                "scanned",
                "select_cpu",
                "scan_calls",
                "sis_util_cut",
                "q_wakeups",
                "q_missed_core",
                "q_missed_cpu",
                "q_stacked",
            ] {
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
                (format!("bpf_{name}_ns"), (runs > 0.0).then(|| ns / runs))
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
        if bpf_ns > 0.0 && calls > 0.0 {
            put("bpf_ns_per_wakeup", Some(bpf_ns / calls));
        }
        for (k, x) in progs {
            put(&k, x);
        }
        if s == "cost" {
            put("select_ns", ratio("prog_run_ns", "prog_run_cnt", 1.0));
            put("scan_mean", ratio("scanned", "select_cpu", 1.0));
            put("scan_max", v.get("scan_max").copied());
            put(
                "sis_util_cut_pct",
                ratio("sis_util_cut", "scan_calls", 100.0),
            );
            put("select_cpu_calls", v.get("select_cpu").copied());
        } else {
            put(
                "sis_missed_idle_core_per_1k",
                ratio("q_missed_core", "q_wakeups", 1000.0),
            );
            put(
                "sis_missed_idle_cpu_per_1k",
                ratio("q_missed_cpu", "q_wakeups", 1000.0),
            );
            put(
                "sis_stacked_per_1k",
                ratio("q_stacked", "q_wakeups", 1000.0),
            );
        }
    }
    r
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

fn num(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn opt_ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.3}"))
}

/// The seed's table for one metric: a block per configuration, a line per load with
/// every run's value, the average, the ratio to the first configuration and, with
/// `vs`, a second ratio against that one.
pub fn table(
    r: &Records,
    suite: &str,
    metric: &str,
    scheds: &[String],
    loads: &[u32],
    runs: u32,
    vs: Option<&str>,
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
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Ratios of the first metric to the first configuration: a line per load.
pub fn summary(r: &Records, s: &Suite, scheds: &[String], loads: &[u32]) -> String {
    let metric = s.metrics[0].key;
    let avg = |c: &str, l: u32| {
        r.get(&(s.name.into(), c.into(), l, metric.into()))
            .and_then(mean)
    };
    let mut out = format!("{:<8}", s.load.split(' ').next().unwrap_or("load"));
    for c in scheds {
        let _ = write!(out, " {c:>20}");
    }
    out.push('\n');
    for &l in loads {
        let _ = write!(out, "{l:<8}");
        for c in scheds {
            let _ = write!(
                out,
                " {:>20}",
                opt_ratio(ratio(avg(c, l), avg(&scheds[0], l)))
            );
        }
        out.push('\n');
    }
    out
}

/// The issue's targets, checked from the averages: one line each, MET or MISSED.
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
                        "target {c}: ns/select_cpu at full load <= 1.5 x idle: MET ({x:.2})"
                    ),
                    Some(x) => format!(
                        "target {c}: ns/select_cpu at full load <= 1.5 x idle: MISSED ({x:.2})"
                    ),
                    None => continue,
                }
            }
            _ => continue,
        };
        out.push(line);
    }
    out
}

fn format_target(c: &str, want: &str, bad: &[String]) -> String {
    if bad.is_empty() {
        format!("target {c}: {want}: MET")
    } else {
        format!("target {c}: {want}: MISSED at {}", bad.join(", "))
    }
}

/// A peer scheduler's binary, installed from crates.io into the cache on first use.
fn peer(name: &str) -> Result<PathBuf> {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        bail!("'{name}' is not a crate name");
    }
    let kernels = crate::kernel::cache_dir();
    let root = kernels.parent().unwrap_or(&kernels).join("peers");
    let bin = root.join("bin").join(name);
    if bin.exists() {
        return Ok(bin);
    }
    println!(
        "bench: installing {name} from crates.io into {} (a few minutes)",
        root.display()
    );
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["install", "--locked", "--root"])
        .arg(&root)
        .arg(name);
    if std::env::var_os("BPF_CLANG").is_none() {
        cmd.env("BPF_CLANG", "clang-19");
    }
    let st = cmd.status().context("running cargo install")?;
    anyhow::ensure!(st.success() && bin.exists(), "cargo install {name} failed");
    Ok(bin)
}

fn parse_loads(s: &str) -> Result<Vec<u32>> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .with_context(|| format!("--loads: '{x}' is not a number"))
        })
        .collect()
}

pub struct Plan {
    pub suites: Vec<(&'static Suite, Vec<u32>)>,
    pub scheds: Vec<String>,
    pub runs: u32,
    pub secs: u32,
}

impl Plan {
    /// The guest command.
    fn command(&self) -> String {
        let plan: Vec<String> = self
            .suites
            .iter()
            .map(|(s, l)| {
                let l: Vec<String> = l.iter().map(|x| x.to_string()).collect();
                format!("{}={}", s.name, l.join(","))
            })
            .collect();
        format!(
            "sh /tests/bench.sh {} {} '{}' '{}'",
            self.runs,
            self.secs,
            self.scheds.join(","),
            plan.join(" ")
        )
    }

    /// Rough guest time: every measurement plus a scheduler start and stop.
    fn timeout_s(&self) -> u64 {
        let per = self.secs as u64 * 3 + 15;
        let n: usize = self.suites.iter().map(|(_, l)| l.len() + 1).sum();
        300 + per * n as u64 * self.scheds.len() as u64 * self.runs as u64
    }
}

pub fn run(o: BenchOpts) -> Result<i32> {
    let cpus = o.guest.topology.cpus();
    let suites = o
        .suite
        .split(',')
        .map(|name| {
            let s = suite(name.trim())?;
            let loads = match &o.loads {
                Some(l) => parse_loads(l)?,
                None => default_loads(s.name, cpus),
            };
            Ok((s, loads))
        })
        .collect::<Result<Vec<_>>>()?;
    setup::ensure()?;
    if !o.guest.no_build {
        build_scheduler()?;
    }
    let probe = build_probe()?;
    let mut cfg = o.guest.config(true)?;
    cfg.with.push(probe);
    let mut scheds = vec![];
    for c in o.sched.split(',').map(str::trim) {
        if c == "eevdf" || c == "sis" || c.starts_with("sis:") {
            scheds.push(c.to_string());
            continue;
        }
        match peer(c) {
            Ok(bin) => {
                cfg.with.push(bin);
                scheds.push(c.to_string());
            }
            Err(e) => println!("bench: {c} left out: {e:#}"),
        }
    }
    anyhow::ensure!(!scheds.is_empty(), "--sched: nothing to run");
    let plan = Plan {
        suites,
        scheds,
        runs: o.runs,
        secs: o.secs,
    };
    cfg.timeout = cfg
        .timeout
        .max(std::time::Duration::from_secs(plan.timeout_s()));
    let mode = if cfg.tcg_multi { "multi" } else { "single" };
    let header = format!(
        "{} guest ({cpus} vCPUs), kernel {}, TCG thread={mode}, {} run(s) x {} s, {}",
        o.guest.topology,
        cfg.kernel.version,
        plan.runs,
        plan.secs,
        today()
    );
    println!("bench: {header}");
    let res = vm::run(&cfg, &plan.command())?;
    if let Some(f) = &res.failure {
        println!("{}", vm::relevant_lines(&res.output));
        bail!("the bench guest failed: {f}");
    }
    let mut errors = 0;
    for l in res.output.lines() {
        if l.starts_with("bench-error") || l.starts_with("bench-skip") {
            println!("{l}");
        }
        errors += l.starts_with("bench-error") as usize;
    }
    let faults = vm::kernel_faults(&res.output);
    for f in &faults {
        println!("bench: kernel fault report: {f}");
    }
    anyhow::ensure!(
        res.output.contains("bench-done"),
        "the bench guest stopped before the end (exit {})",
        res.code
    );
    let records = parse(&res.output);
    let out = if o.out.is_absolute() {
        o.out.clone()
    } else {
        repo_root().join(&o.out)
    };
    report(&records, &plan, o.vs.as_deref(), cpus, &header, &out)?;
    // an ejection, a failed start or a kernel fault makes the whole comparison suspect
    if errors > 0 || !faults.is_empty() {
        println!(
            "bench: {errors} bench error(s), {} kernel fault report(s): figures written, exit 1",
            faults.len()
        );
        return Ok(1);
    }
    Ok(0)
}

fn today() -> String {
    Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Print the tables and write CSV, JSON and SVG files per suite.
pub fn report(
    r: &Records,
    plan: &Plan,
    vs: Option<&str>,
    cpus: u32,
    header: &str,
    out: &Path,
) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for (s, loads) in &plan.suites {
        let mut text = String::new();
        for m in s.metrics {
            let t = table(r, s.name, m.key, &plan.scheds, loads, plan.runs, vs);
            if t.is_empty() {
                continue;
            }
            let better = if m.higher_is_better {
                "higher"
            } else {
                "lower"
            };
            let _ = writeln!(
                text,
                "\n## {}: {} by {} ({better} is better)\n{t}",
                s.name, m.label, s.load
            );
        }
        let _ = writeln!(
            text,
            "## {} summary: {} ratio to {}\n{}",
            s.name,
            s.metrics[0].label,
            plan.scheds[0],
            summary(r, s, &plan.scheds, loads)
        );
        for t in targets(r, s.name, &plan.scheds, loads, cpus) {
            let _ = writeln!(text, "{t}");
        }
        println!("# {header}{text}");
        let base = out.join(s.name);
        std::fs::write(base.with_extension("txt"), format!("# {header}\n{text}"))
            .context("writing the table")?;
        write_csv(r, s.name, &base.with_extension("csv"))?;
        write_json(r, s, plan, header, cpus, &base.with_extension("json"))?;
        crate::plot::svg(
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

fn write_csv(r: &Records, suite: &str, path: &Path) -> Result<()> {
    let mut s = String::from("suite,sched,load,run,metric,value\n");
    for ((su, c, l, m), vals) in r.iter().filter(|(k, _)| k.0 == suite) {
        for (run, v) in vals {
            let _ = writeln!(s, "{su},{c},{l},{run},{m},{v}");
        }
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}

fn write_json(
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
        let base = r
            .get(&(su.clone(), plan.scheds[0].clone(), *l, m.clone()))
            .and_then(mean);
        results.push(serde_json::json!({
            "sched": c, "load": l, "metric": m,
            "runs": vals.iter().map(|(run, v)| serde_json::json!({"run": run, "value": v})).collect::<Vec<_>>(),
            "avg": avg, "ratio": ratio(avg, base),
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
        "targets": targets(r, s.name, &plan.scheds, loads, cpus),
    });
    std::fs::write(path, serde_json::to_string_pretty(&doc)?)
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> Records {
        // the 2016 thread's tbench figures: master, and masterx NO_IDLE_CORE
        let out = "\
bench: suite=tbench sched=master run=1 load=1 mb_s=524
bench: suite=tbench sched=master run=2 load=1 mb_s=524
bench: suite=tbench sched=master run=3 load=1 mb_s=523
bench: suite=tbench sched=masterx run=1 load=1 mb_s=500
bench: suite=tbench sched=masterx run=2 load=1 mb_s=520
bench: suite=tbench sched=masterx run=3 load=1 mb_s=510
bench: suite=tbench sched=master run=1 load=128 mb_s=23248
bench: suite=tbench sched=master run=2 load=128 mb_s=23136
bench: suite=tbench sched=master run=3 load=128 mb_s=23133
bench: suite=tbench sched=masterx run=1 load=128 mb_s=11624
bench: suite=tbench sched=masterx run=2 load=128 mb_s=11568
bench: suite=tbench sched=masterx run=3 load=128 mb_s=nan
";
        parse(out)
    }

    #[test]
    fn averages_and_ratios() {
        let r = seed();
        let avg = |c: &str, l| mean(&r[&("tbench".into(), c.into(), l, "mb_s".into())]).unwrap();
        assert!((avg("master", 1) - 523.667).abs() < 0.001);
        assert_eq!(avg("masterx", 1), 510.0);
        // a run that printed nan is left out, not counted as 0
        assert_eq!(avg("masterx", 128), 11596.0);
        let x = ratio(Some(avg("masterx", 128)), Some(avg("master", 128))).unwrap();
        assert!((x - 0.5004).abs() < 0.0001, "{x}");
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
    }

    #[test]
    fn seed_table_shape() {
        let r = seed();
        let scheds = vec!["master".to_string(), "masterx".to_string()];
        let t = table(&r, "tbench", "mb_s", &scheds, &[1, 128], 3, Some("masterx"));
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("master ") && lines[0].ends_with("/masterx"),
            "{t}"
        );
        let f: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            f,
            ["1", "524", "524", "523", "524", "1.000", "1.027"],
            "{t}"
        );
        let f: Vec<&str> = lines[5].split_whitespace().collect();
        assert_eq!(
            f,
            ["128", "11624", "11568", "-", "11596", "0.500", "1.000"],
            "{t}"
        );
        let s = summary(&r, suite("tbench").unwrap(), &scheds, &[1, 128]);
        assert!(s.lines().nth(2).unwrap().ends_with("0.500"), "{s}");
    }

    #[test]
    fn targets_report_misses() {
        let out = "\
bench: suite=tbench sched=eevdf run=1 load=1 mb_s=100
bench: suite=tbench sched=eevdf run=1 load=16 mb_s=100
bench: suite=tbench sched=sis run=1 load=1 mb_s=99
bench: suite=tbench sched=sis run=1 load=16 mb_s=90
";
        let r = parse(out);
        let s = vec!["eevdf".to_string(), "sis".to_string()];
        let t = targets(&r, "tbench", &s, &[1, 16], 8);
        assert_eq!(
            t,
            ["target sis: >= 0.98 x eevdf at every client count: MISSED at 16: 0.900"]
        );
    }

    #[test]
    fn monitor_samples_are_summed() {
        let out = r#"bench-mon: suite=cost sched=sis run=1 load=0 {"prog_run_ns":1000,"prog_run_cnt":10,"scanned":5,"select_cpu":10,"scan_max":3}
bench-mon: suite=cost sched=sis run=1 load=0 {"prog_run_ns":3000,"prog_run_cnt":10,"scanned":15,"select_cpu":10,"scan_max":7}
bench-mon: suite=placement sched=sis run=2 load=4 {"q_wakeups":200,"q_missed_core":50}
bench-mon: suite=wakeup sched=sis run=1 load=2 {"select_cpu":10,"progs":{"running":{"run_ns":300,"runs":3},"select_cpu":{"run_ns":700,"runs":10}}}
"#;
        let r = parse(out);
        let get = |s: &str, l, m: &str, run| r[&(s.into(), "sis".into(), l, m.into())][&run];
        assert_eq!(get("cost", 0, "select_ns", 1), 200.0);
        assert_eq!(get("cost", 0, "scan_mean", 1), 1.0);
        assert_eq!(get("cost", 0, "scan_max", 1), 7.0);
        assert_eq!(get("placement", 4, "sis_missed_idle_core_per_1k", 2), 250.0);
        assert_eq!(get("wakeup", 2, "bpf_running_ns", 1), 100.0);
        assert_eq!(get("wakeup", 2, "bpf_select_cpu_ns", 1), 70.0);
        // (300 + 700) ns of BPF over 10 select_cpu calls
        assert_eq!(get("wakeup", 2, "bpf_ns_per_wakeup", 1), 100.0);
    }

    #[test]
    fn default_load_ranges() {
        assert_eq!(default_loads("tbench", 8), [1, 2, 4, 8, 16]);
        assert_eq!(default_loads("wakeup", 8), [2, 4, 8, 16]);
        assert_eq!(default_loads("cost", 8), [0, 4, 8]);
        assert!(suite("nope").unwrap_err().to_string().contains("tbench"));
    }
}
