// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask bench`: every configuration of one comparison inside one guest boot,
//! interleaved run by run; tables in the shape of the 2016 select_idle_sibling
//! threads (value per run, average, ratio to the first configuration), CSV, JSON and
//! one SVG plot per suite under target/bench/.

mod builds;
mod calibration;
mod files;
pub mod headline;
mod native;
mod ops;
pub mod parse;
mod plan;
mod plot;
mod report;
mod stats;
mod suites;
mod targets;

use builds::{peer, stage_build};
pub use calibration::*;
pub use files::*;
pub use parse::*;
pub use plan::*;
pub use report::*;
pub use stats::*;
pub use suites::*;

use crate::{build_probe, build_scheduler, repo_root, setup, vm, GuestOpts};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args)]
pub struct BenchOpts {
    /// Suites, comma-separated: tbench, tbench-bare, wakeup, latency, hackbench, pipe, nice,
    /// sched-idle, affine, cost, placement; or one preset: `seed` (the 2016 thread's tbench
    /// table with every scan bound) or `calibrate` (the kernel's own features switched off
    /// beside scx_sis's) or `llc`
    /// (wake_affine() on and off, both sides, on a 1:2:4:2 guest: two LLCs in a socket).
    suite: String,
    /// Configurations, each [LABEL=]SPEC: eevdf (the kernel's own scheduler),
    /// eevdf:NO_X+Y (with the kernel's sched features switched for the run, restored
    /// after), sis, sis:NO_X+Y (QUALITY among them: scx_sis's own placement
    /// classification on in every suite, not only in placement), LABEL=sis@PATH[:NO_X+Y]
    /// (another build of scx_sis, such as the one before a patch), or a peer sched_ext
    /// scheduler from crates.io (scx_cosmos,
    /// scx_bpfland, ...). Default: the preset's, else
    /// eevdf,sis,sis:NO_IDLE_CORE,sis:NO_SIS_UTIL,scx_cosmos.
    #[arg(long)]
    sched: Option<String>,
    /// Runs of every configuration, interleaved, in an order shuffled per run.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=20))]
    runs: u32,
    /// Seed of the run order (printed in every header; the same seed, the same order).
    /// Default: the current time.
    #[arg(long)]
    seed: Option<u64>,
    /// No discarded warm-up measurement per configuration and suite before the runs.
    #[arg(long)]
    no_warmup: bool,
    /// Table layout: `stats` (mean, sd, min-max, n, ratio with a 95 % interval, `~`
    /// where the interval includes 1) or `seed` (every run's value, the 2016 threads'
    /// layout).
    #[arg(long, default_value = "stats", value_parser = ["stats", "seed"])]
    format: String,
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
    /// No guest: print the tables again from a results folder a bench wrote (its
    /// SUITE.json for the configurations and loads, SUITE.csv for every run), in
    /// --format, with --vs; writes nothing.
    #[arg(long)]
    from: Option<PathBuf>,
    /// With --from: print one part only, a suite's tables (its name; SUITE:KEY+KEY for
    /// those metrics' tables alone) or `calibration`,
    /// as BENCHMARKS.md quotes it (`cargo xtask doc` regenerates those quotes).
    #[arg(long, requires = "from")]
    part: Option<String>,
    /// On a sched_ext host, run in a guest anyway (by default the bench runs natively
    /// there, on the host's own CPUs).
    #[arg(long, conflicts_with = "native")]
    guest_only: bool,
    /// Run natively or not at all: refuse in one line on a kernel without sched_ext
    /// (instead of falling back to a guest).
    #[arg(long)]
    native: bool,
    #[command(flatten)]
    guest: GuestOpts,
}

/// `--from DIR`: the tables of every suite of o.suite (or the preset's) from DIR's data.
/// A preset's suite that DIR lacks is passed over: the folder predates its joining.
fn from_data(o: &BenchOpts, dir: &std::path::Path) -> Result<i32> {
    let is_preset = preset(&o.suite).is_some();
    let names = preset(&o.suite).map_or(o.suite.clone(), |p| p.suites.to_string());
    let vs =
        o.vs.clone()
            .or_else(|| preset(&o.suite).and_then(|p| p.vs.map(str::to_string)));
    let mut records = Records::new();
    let mut suites = vec![];
    let (mut scheds, mut header, mut runs, mut cpus) = (vec![], String::new(), 1, 0);
    for name in names.split(',').map(str::trim) {
        let s = suite(name)?;
        let path = dir.join(name).with_extension("json");
        if is_preset && !path.exists() {
            continue;
        }
        let doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?,
        )
        .with_context(|| format!("parsing {}", path.display()))?;
        scheds = doc["scheds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        header = doc["setup"].as_str().unwrap_or("").to_string();
        cpus = doc["cpus"].as_u64().unwrap_or(0) as u32;
        let loads: Vec<u32> = doc["loads"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_u64().map(|v| v as u32))
            .collect();
        suites.push((s, loads));
        runs = runs.max(read_csv(
            &dir.join(name).with_extension("csv"),
            &mut records,
        )?);
    }
    anyhow::ensure!(!scheds.is_empty(), "{}: no configurations", dir.display());
    let plan = Plan {
        suites,
        specs: scheds.clone(),
        scheds,
        runs,
        secs: 0,
        seed: 0,
        warmup: false,
    };
    if let Some(part) = &o.part {
        let pairs = calibration_pairs(&plan.scheds);
        let text = match part.as_str() {
            "calibration" if !pairs.is_empty() => calibration(&records, &plan, &pairs),
            _ => {
                let (name, keys) = part.split_once(':').unwrap_or((part, ""));
                let (s, loads) = plan
                    .suites
                    .iter()
                    .find(|(s, _)| s.name == name)
                    .with_context(|| {
                        format!(
                            "--part {part}: not a suite of {} (nor calibration)",
                            o.suite
                        )
                    })?;
                let seed = o.format == "seed";
                if keys.is_empty() {
                    suite_text(&records, &plan, s, loads, vs.as_deref(), cpus, seed)
                } else {
                    let keys: Vec<&str> = keys.split('+').collect();
                    report::metric_tables(&records, &plan, s, loads, vs.as_deref(), &keys, seed)
                        .with_context(|| format!("--part {part}"))?
                }
            }
        };
        println!("# {header}\n{}", text.trim());
        return Ok(0);
    }
    let tmp = std::env::temp_dir().join(format!("scx_sis-bench-from-{}", std::process::id()));
    report(
        &records,
        &plan,
        vs.as_deref(),
        cpus,
        &header,
        &tmp,
        o.format == "seed",
    )?;
    let _ = std::fs::remove_dir_all(&tmp);
    let pairs = calibration_pairs(&plan.scheds);
    if !pairs.is_empty() {
        println!("{}", calibration(&records, &plan, &pairs));
    }
    Ok(0)
}

pub fn run(mut o: BenchOpts) -> Result<i32> {
    if let Some(dir) = o.from.clone() {
        return from_data(&o, &dir);
    }
    if o.native && !native::host_has_sched_ext() {
        bail!("--native: this kernel has no sched_ext (/sys/kernel/sched_ext is missing)");
    }
    let native = !o.guest_only && native::host_has_sched_ext();
    if native {
        native::preflight()?;
    }
    let preset = preset(&o.suite);
    if let Some(p) = preset.as_ref().filter(|_| !native) {
        if o.guest.topology.cpus() < p.min_cpus || o.guest.topology.llcs < p.min_llcs {
            println!(
                "bench {}: --topology {} ({} CPUs, {} LLCs per socket), the smallest guest this comparison means anything on",
                o.suite, p.topology, p.min_cpus, p.min_llcs
            );
            o.guest.topology = p.topology.parse().map_err(anyhow::Error::msg)?;
        }
    }
    if let Some(p) = &preset {
        o.sched.get_or_insert_with(|| p.sched.to_string());
        if o.vs.is_none() {
            o.vs = p.vs.map(str::to_string);
        }
    }
    let cpus = if native {
        std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
    } else {
        o.guest.topology.cpus()
    };
    let names = preset.as_ref().map_or(o.suite.as_str(), |p| p.suites);
    let suites = names
        .split(',')
        .map(|name| {
            let s = suite(name.trim())?;
            let loads = match (&o.loads, &preset) {
                (Some(l), _) => parse_loads(l)?,
                (None, Some(p)) => (p.loads)(s.name, cpus),
                (None, None) => default_loads(s.name, cpus),
            };
            Ok((s, loads))
        })
        .collect::<Result<Vec<_>>>()?;
    let confs = o
        .sched
        .as_deref()
        .unwrap_or("eevdf,sis,sis:NO_IDLE_CORE,sis:NO_SIS_UTIL,scx_cosmos")
        .split(',')
        .map(|c| parse_conf(c.trim()))
        .collect::<Result<Vec<_>>>()?;
    // natively with --no-build, scx_sis and sis-probe come from PATH
    let mut bins = Vec::new();
    if !(native && o.guest.no_build) {
        // a user's sched_ext host gets nothing installed: native::run names what is missing
        if !native {
            setup::ensure()?;
        }
        if !o.guest.no_build {
            build_scheduler()?;
        }
        if native {
            bins.push(crate::scx_sis_bin()); // a guest gets it from GuestOpts::config
        }
        bins.push(build_probe()?);
    }
    let (mut scheds, mut specs, mut builds) = (vec![], vec![], vec![]);
    for (i, (label, spec)) in confs.into_iter().enumerate() {
        let spec = match sis_at(&spec) {
            Some((path, rest)) => {
                let (bin, id) = stage_build(i, Path::new(path))?;
                bins.push(bin);
                builds.push(format!("{label} is scx_sis from {path} ({id})"));
                format!("sis@{i}{rest}")
            }
            None => spec,
        };
        let ours = spec == "eevdf" || spec.starts_with("eevdf:") || spec == "sis";
        if !ours && !spec.starts_with("sis:") && !spec.starts_with("sis@") {
            // a peer that cannot be installed is an error, never a missing column
            let bin = peer(&spec).with_context(|| format!("--sched {label}={spec}"))?;
            bins.push(bin);
        }
        anyhow::ensure!(
            !scheds.contains(&label),
            "--sched: label '{label}' given twice"
        );
        scheds.push(label);
        specs.push(spec);
    }
    anyhow::ensure!(!scheds.is_empty(), "--sched: nothing to run");
    let seed = o.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    let plan = Plan {
        suites,
        scheds,
        specs,
        runs: o.runs,
        secs: o.secs,
        seed,
        warmup: !o.no_warmup,
    };
    let runs = format!(
        "{} run(s) x {} s{}, order --seed {}, {}, at {}",
        plan.runs,
        plan.secs,
        if plan.warmup {
            " after a discarded warm-up"
        } else {
            ""
        },
        plan.seed,
        today(),
        commit()
    );
    let runs = std::iter::once(runs)
        .chain(builds)
        .collect::<Vec<_>>()
        .join("; ");
    let (res, header, mut errors) = if native {
        native::run_plan(&plan, &bins, &runs)?
    } else {
        let mut cfg = o.guest.config(true)?;
        cfg.with.extend(bins);
        cfg.timeout = cfg
            .timeout
            .max(std::time::Duration::from_secs(plan.timeout_s()));
        let mode = vm::tcg_mode(&cfg);
        let qemu = vm::qemu_version().map_or("?".into(), |(a, b)| format!("{a}.{b}"));
        let header = format!(
            "{} guest ({cpus} vCPUs), kernel {}, qemu {qemu} TCG {mode}, {runs}",
            o.guest.topology, cfg.kernel.version,
        );
        println!("bench: {header}");
        (vm::run(&cfg, &plan.command())?, header, 0)
    };
    if res.code == 130 && native {
        println!("bench: interrupted; sched_ext state {}", native::state());
        return Ok(130);
    }
    if let Some(l) = res.output.lines().find(|l| l.starts_with("bench-fatal: ")) {
        bail!("{}", &l["bench-fatal: ".len()..]);
    }
    // the guest's whole console beside the tables: the raw lines every figure came from
    let out = if o.out.is_absolute() {
        o.out.clone()
    } else {
        repo_root().join(&o.out)
    };
    let console = out.join("console.log");
    if let Some(f) = &res.failure {
        println!("{}", vm::relevant_lines(&res.output));
        // the runs done before the failure stay readable
        let kept =
            std::fs::create_dir_all(&out).and_then(|_| std::fs::write(&console, &res.output));
        let note = kept.map_or(String::new(), |_| {
            format!("; the runs before it are in {}", console.display())
        });
        bail!("the bench guest failed: {f}{note}");
    }
    // the kernel's own features during the EEVDF runs are part of every figure's conditions
    let kfeat = res
        .output
        .lines()
        .find_map(|l| l.strip_prefix("bench-kfeatures: "))
        .unwrap_or("unknown")
        .trim();
    // and they must be as found when the bench ends
    let kfeat_after = res
        .output
        .lines()
        .find_map(|l| l.strip_prefix("bench-kfeatures-after: "))
        .unwrap_or("unknown")
        .trim();
    let restored = kfeat_after == kfeat;
    if restored {
        println!("bench: the kernel's sched features are as found");
    } else {
        println!("bench-error: the kernel's sched features were not restored: before '{kfeat}', after '{kfeat_after}'");
    }
    let header =
        format!("{header}; EEVDF sched features as found (eevdf:X runs change X alone): {kfeat}");
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
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    std::fs::write(&console, &res.output)
        .with_context(|| format!("writing {}", console.display()))?;
    anyhow::ensure!(
        res.output.contains("bench-done"),
        "the bench guest stopped before the end (exit {})",
        res.code
    );
    let records = parse(&res.output);
    report(
        &records,
        &plan,
        o.vs.as_deref(),
        cpus,
        &header,
        &out,
        o.format == "seed",
    )?;
    let pairs = calibration_pairs(&plan.scheds);
    if !pairs.is_empty() {
        let text = calibration(&records, &plan, &pairs);
        println!("{text}");
        std::fs::write(out.join("calibration.txt"), format!("# {header}\n{text}"))
            .context("writing calibration.txt")?;
    }
    // an ejection, a failed start, a kernel fault or features left changed make the
    // whole comparison suspect
    let errors = errors + usize::from(!restored);
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

/// The commit the figures come from: its short hash, "with changes" when the files that
/// make them (the scheduler, the guest scripts, xtask) differ from it, "changes unknown"
/// when git cannot tell.
fn commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(repo_root())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(hash) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "no known commit".into();
    };
    let paths = [
        "src",
        "tests",
        "xtask",
        "build.rs",
        "Cargo.toml",
        "Cargo.lock",
    ];
    let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    status.extend(paths);
    match git(&status) {
        Some(s) if s.is_empty() => hash,
        Some(_) => format!("{hash} with changes"),
        None => format!("{hash}, changes unknown"),
    }
}

#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod tests;
