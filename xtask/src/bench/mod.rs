// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask bench`: every configuration of one comparison inside one guest boot,
//! interleaved run by run; tables in the shape of the 2016 select_idle_sibling
//! threads (value per run, average, ratio to the first configuration), CSV, JSON and
//! one SVG plot per suite under target/bench/.

mod parse;
mod plot;
mod report;
mod suites;

pub use parse::*;
pub use report::*;
pub use suites::*;

use crate::{build_probe, build_scheduler, repo_root, setup, vm, GuestOpts};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
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
