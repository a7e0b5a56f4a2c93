// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask test`: host unit tests, host CLI tests, and the VM integration tests.
//!
//! A VM test boots one guest and runs a script from tests/guest/ that prints one line
//! per check: `ok NAME` or `not ok NAME: why`. A guest that does not boot, hangs or
//! panics is a failure, never a skip.

mod host;
mod registry;
mod runner;

use host::{
    bench_from_data, bench_kernel_features, bench_smoke, demo_smoke, doc_generated, host_tests,
    unit_tests,
};
use registry::vm_tests;
use runner::run_vm_test;
pub(crate) use runner::test_guest;

use crate::kernel::{self, Kernel};
use crate::vm::{self, Topology};
use crate::{build_scheduler, repo_root, setup};
use anyhow::{Context, Result};
use std::sync::{Arc, Mutex};
use std::time::Instant;
#[derive(Clone)]
pub(crate) struct VmTest {
    pub(crate) name: String,
    pub(crate) kernel: Kernel,
    pub(crate) topo: String,
    pub(crate) numa: bool,
    /// The distance between nodes (the suite's `numadist=N`), qemu's 20 when None.
    pub(crate) numa_distance: Option<u32>,
    /// CPUs brought online at boot, fewer than the topology's (the suite's `maxcpus=N`).
    pub(crate) maxcpus: Option<u32>,
    pub(crate) cmd: String,
    /// The guest command's expected exit status.
    pub(crate) rc: i32,
    pub(crate) timeout: u64,
}

#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) passed: usize,
    pub(crate) failed: Vec<String>,
    /// VM tests that used more than half their timeout: the margin a slower host eats
    pub(crate) slow: Vec<String>,
    /// VM tests whose first guest stalled before init and were booted again
    pub(crate) rebooted: Vec<String>,
    /// VM tests whose first guest hung after init and were run again
    pub(crate) hung: Vec<String>,
}

impl Tally {
    pub(crate) fn check(&mut self, name: &str, ok: bool, why: impl FnOnce() -> String) {
        if ok {
            self.passed += 1;
            println!("ok {name}");
        } else {
            let w = why();
            println!("not ok {name}: {w}");
            self.failed.push(format!("{name}: {w}"));
        }
    }
}

/// The kernels a suite run covers.
pub(crate) struct TestKernels {
    /// The full suite's (`every`): the LTS line's and the newest, newest last.
    pub(crate) full: Vec<Kernel>,
    /// Every supported line's (`lines`), oldest first.
    pub(crate) lines: Vec<Kernel>,
    /// Lines no kernel could be found for, and why (named in the summary).
    pub(crate) skipped: Vec<(String, String)>,
}

/// The full suite's kernels: the LTS line's and the newest line's (downloaded and
/// cached when neither ../shared/kernels nor the cache has them).
pub(crate) fn test_kernels() -> Result<Vec<Kernel>> {
    Ok(suite_kernels()?.full)
}

pub(crate) fn suite_kernels() -> Result<TestKernels> {
    let (lines, skipped) = kernel::line_kernels(&repo_root());
    let newest = kernel::LINES.last().map_or("", |(l, _)| *l);
    let full: Vec<Kernel> = lines
        .iter()
        .filter(|k| {
            let l = kernel::line_of(&k.version);
            l == kernel::LTS_LINE || l == newest
        })
        .cloned()
        .collect();
    // the full suite's two lines are not optional
    for want in [kernel::LTS_LINE, newest] {
        if let Some((_, why)) = skipped.iter().find(|(l, _)| l == want) {
            anyhow::bail!("no kernel for line {want}, which the full suite runs on: {why}");
        }
    }
    Ok(TestKernels {
        full,
        lines,
        skipped,
    })
}

/// The host CLI tests, the bench smoke boots, the generated documents and the demo: one
/// guest at a time, so the suite runs them in one worker's slot.
fn host_phase(tally: &mut Tally, kernels: &[Kernel]) -> Result<()> {
    host_tests(tally, kernels)?;
    let me = std::env::current_exe().context("locating the xtask binary")?;
    bench_smoke(tally, &me, kernels)?;
    bench_kernel_features(tally, &me, kernels)?;
    bench_from_data(tally, &me)?;
    doc_generated(tally, &me)?;
    demo_smoke(tally, &me, kernels)
}

/// Adds a finished part's results to the suite's.
fn merge(into: &mut Tally, part: Tally) {
    into.passed += part.passed;
    into.failed.extend(part.failed);
    into.slow.extend(part.slow);
    into.rebooted.extend(part.rebooted);
    into.hung.extend(part.hung);
}

pub fn run(filter: Option<&str>, jobs: usize, unit: bool) -> Result<i32> {
    let start = Instant::now();
    setup::ensure()?;
    build_scheduler()?;
    let probe = crate::build_probe()?;
    let ks = suite_kernels()?;
    let mut tally = Tally::default();
    let phase =
        move |what: &str| println!("# {what} done at {:.0}s", start.elapsed().as_secs_f64());
    phase("set-up and build");
    if unit {
        unit_tests(&mut tally)?;
        phase("unit tests");
    }
    let tests: Vec<VmTest> = vm_tests(&ks)?
        .into_iter()
        .filter(|t| filter.is_none_or(|f| t.name.contains(f)))
        .collect();
    // one line naming what to install, not one failure per multi-LLC guest
    for t in &tests {
        let topo: Topology = t.topo.parse().map_err(anyhow::Error::msg)?;
        vm::check_qemu_for(&topo).with_context(|| format!("VM test {}", t.name))?;
    }
    let queue = Arc::new(Mutex::new(tests));
    let tally = Arc::new(Mutex::new(tally));
    // the first worker runs the host phase before it takes VM tests, and returns its
    // results: the other workers start on the queue (longest first) meanwhile
    let workers: Vec<_> = (0..jobs.max(1))
        .map(|i| {
            let q = queue.clone();
            let t = tally.clone();
            let probe = probe.clone();
            let kernels = ks.full.clone();
            let with_host = i == 0 && filter.is_none();
            std::thread::spawn(move || {
                let host = with_host.then(|| {
                    let mut part = Tally::default();
                    let r = host_phase(&mut part, &kernels).map(|()| part);
                    phase("host tests and smoke boots");
                    r
                });
                loop {
                    let next = q.lock().unwrap().pop();
                    match next {
                        Some(test) => run_vm_test(&test, &probe, &t),
                        None => break,
                    }
                }
                host
            })
        })
        .collect();
    let mut host = None;
    for w in workers {
        if let Ok(Some(part)) = w.join() {
            host = Some(part);
        }
    }
    if let Some(part) = host {
        merge(&mut tally.lock().unwrap(), part?);
    }
    let tally = tally.lock().unwrap();
    println!("# suite took {:.0}s", start.elapsed().as_secs_f64());
    print_coverage(&ks);
    if !tally.slow.is_empty() {
        println!(
            "# {} VM test(s) used more than half their budget: {}",
            tally.slow.len(),
            tally.slow.join(", ")
        );
    }
    if !tally.rebooted.is_empty() {
        println!(
            "# {} guest(s) stalled before init and were booted again: {}",
            tally.rebooted.len(),
            tally.rebooted.join(", ")
        );
    }
    if !tally.hung.is_empty() {
        println!(
            "# {} guest(s) hung after init and were run again (dumps above): {}",
            tally.hung.len(),
            tally.hung.join(", ")
        );
    }
    for f in &tally.failed {
        println!("# FAILED {}", f.lines().next().unwrap_or(""));
    }
    println!("{} passed, {} failed", tally.passed, tally.failed.len());
    Ok(if tally.failed.is_empty() { 0 } else { 1 })
}

/// The summary's account of the kernels: what ran where, and what was refused.
fn print_coverage(ks: &TestKernels) {
    let names = |v: &[Kernel]| {
        v.iter()
            .map(|k| k.version.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("# full suite on: {}", names(&ks.full));
    println!("# compatibility tests on every line: {}", names(&ks.lines));
    for k in &ks.lines {
        if let Some(why) = kernel::refused(&k.version) {
            println!(
                "# {}: no sched_ext scheduler loads ({why}); its tests assert that refusal",
                k.version
            );
        }
    }
    for (line, why) in &ks.skipped {
        println!("# line {line} SKIPPED: no kernel found ({why})");
    }
    let dirs: Vec<String> = ks
        .lines
        .iter()
        .filter_map(|k| k.vmlinuz.parent().map(|d| d.display().to_string()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    println!("# kernels from: {}", dirs.join(", "));
}

/// The verifier budget per program: (factor, min_extra, max). max is a quarter of the
/// kernel's 1000000-instruction limit.
pub const VERIFIER_BUDGET: (u64, u64, u64) = (2, 20000, 250000);

/// `cargo xtask verifier`: load scx_sis (without attaching) in a guest of every shipped
/// kernel and record each program's verified instructions as the suite's baseline.
pub fn verifier_baseline() -> Result<i32> {
    setup::ensure()?;
    build_scheduler()?;
    let probe = crate::build_probe()?;
    // every line the scheduler loads on
    let kernels: Vec<Kernel> = suite_kernels()?
        .lines
        .into_iter()
        .filter(|k| kernel::refused(&k.version).is_none())
        .collect();
    let mut out = format!(
        "# KERNEL PROGRAM VERIFIED_INSNS on a 1:4:2 guest (8 CPUs; the topology is in rodata, so the verifier's work depends on it), recorded by `cargo xtask verifier`;\n# tests/guest/verifier.sh holds each program to the budget below: FACTOR times its figure, at least figure + MIN_EXTRA, at most MAX.\n# budget: {} {} {}\n",
        VERIFIER_BUDGET.0, VERIFIER_BUDGET.1, VERIFIER_BUDGET.2
    );
    for k in &kernels {
        let topo: Topology = "1:4:2".parse().map_err(anyhow::Error::msg)?;
        let cfg = test_guest(k, topo, false, &probe, 300, 120);
        let r = vm::run(&cfg, "scx_sis --verifier-report")?;
        if r.code != 0 || r.failure.is_some() {
            anyhow::bail!(
                "{}: scx_sis --verifier-report failed (exit {}): {}",
                k.version,
                r.code,
                vm::relevant_lines(&r.output)
            );
        }
        let mut n = 0;
        for l in r.output.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() == 3 && f[0] == "verified_insns" {
                println!("{:<28} {:<14} {:>8}", k.version, f[1], f[2]);
                out += &format!("{} {} {}\n", k.version, f[1], f[2]);
                n += 1;
            }
        }
        anyhow::ensure!(n > 0, "{}: no verified_insns lines", k.version);
    }
    let path = repo_root().join("tests/guest/verifier-baseline.txt");
    std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::registry::*;
    use super::runner::*;

    #[test]
    fn suite_lines_parse() {
        let s = parse_spec(
            "topology.sh",
            "topology-1:4:1-exit7 1:4:1 newest 300 rc=7 -- 1 4 1; exit 7",
        )
        .unwrap();
        assert_eq!(
            (s.name.as_str(), s.on, s.rc, s.timeout),
            ("topology-1:4:1-exit7", On::Newest, 7, 300)
        );
        assert_eq!(s.cmd, "sh /tests/topology.sh 1 4 1; exit 7");
        let s = parse_spec("big.sh", "big 1:4:2 newest 900 numa maxcpus=6").unwrap();
        assert_eq!((s.maxcpus, s.numa), (Some(6), true));
        assert!(parse_spec("big.sh", "big 1:4:2 newest 9 maxcpus=x").is_err());
        let s = parse_spec("f.sh", "far 2:2:2 newest 300 numa numadist=40").unwrap();
        assert_eq!((s.numa, s.numa_distance), (true, Some(40)));
        let e = parse_spec("f.sh", "far 2:2:2 newest 300 numadist=40").unwrap_err();
        assert!(e.contains("numadist= needs numa"), "{e}");
        let s = parse_spec("counters.sh", "counters 2:2:2 every 400 numa").unwrap();
        assert!(s.numa && s.on == On::Every && s.cmd == "sh /tests/counters.sh");
        assert_eq!(
            parse_spec("c.sh", "c 1:4:2 lines 300").unwrap().on,
            On::Lines
        );
        assert_eq!(
            parse_spec("c.sh", "c 1:4:2 others 300").unwrap().on,
            On::Others
        );
        assert!(parse_spec("x.sh", "x 1:4:2 sometimes 10")
            .unwrap_err()
            .contains("every, newest, lines or others"));
        assert!(parse_spec("x.sh", "x 1:0:2 every 10").is_err());
        assert!(parse_spec("x.sh", "x 1:4:2 every")
            .unwrap_err()
            .contains("needs NAME"));
        // the shipped scripts declare the suite: every name once
        let all = specs().unwrap();
        let mut names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len(), "a suite name is declared twice");
        assert!(names.contains(&"fidelity") && names.contains(&"hotplug-cycles"));
    }

    #[test]
    fn others_are_the_lines_outside_the_full_suite() {
        use crate::kernel::{refused, Kernel, LINES, LTS_LINE};
        let k = |v: &str| Kernel {
            version: v.to_string(),
            vmlinuz: "/k".into(),
            config: "/c".into(),
        };
        let lts = LINES.iter().find(|(l, _)| *l == LTS_LINE).unwrap().1;
        let newest = LINES.last().unwrap().1;
        let ks = super::TestKernels {
            full: vec![k(lts), k(newest)],
            lines: LINES.iter().map(|(_, v)| k(v)).collect(),
            skipped: Vec::new(),
        };
        let v = vm_tests(&ks).unwrap();
        let on = |prefix: &str| -> Vec<&str> {
            v.iter()
                .filter(|t| {
                    t.name
                        .strip_prefix(prefix)
                        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
                })
                .map(|t| t.kernel.version.as_str())
                .collect()
        };
        assert_eq!(on("hotplug-cycles-"), vec![lts, newest]);
        let short = on("hotplug-cycles-short-");
        assert_eq!(short.len(), LINES.len() - 2, "{short:?}");
        assert!(!short.contains(&lts) && !short.contains(&newest));
        // a refused line gets the one argument `refused`, in place of the spec's own
        for t in v
            .iter()
            .filter(|t| t.name.starts_with("hotplug-cycles-short-"))
        {
            let want = if refused(&t.kernel.version).is_some() {
                "sh /tests/hotplug_cycles.sh refused"
            } else {
                "sh /tests/hotplug_cycles.sh short"
            };
            assert_eq!(t.cmd, want, "{}", t.name);
        }
    }

    #[test]
    fn json_interval_identity() {
        let ok = r#"{"steps":"target prev recent idle_core idle_smt idle_cpu fallback idlest","select_cpu":10,"target":1,"prev":2,"recent":0,"idle_core":3,"idle_smt":0,"idle_cpu":1,"fallback":3,"idlest":0}"#;
        assert_eq!(json_interval_error(ok), None);
        let off = ok.replace("\"fallback\":3", "\"fallback\":2");
        assert!(json_interval_error(&off)
            .unwrap()
            .contains("steps sum Some(9)"));
        assert!(json_interval_error("{\"select_cpu\":")
            .unwrap()
            .starts_with("not JSON"));
    }
}
