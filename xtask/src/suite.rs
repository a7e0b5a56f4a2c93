// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask test`: host unit tests, host CLI tests, and the VM integration tests.
//!
//! A VM test boots one guest and runs a script from tests/guest/ that prints one line
//! per check: `ok NAME` or `not ok NAME: why`. A guest that does not boot, hangs or
//! panics is a failure, never a skip.

use crate::kernel::{self, Kernel};
use crate::vm::{self, Topology};
use crate::{build_scheduler, repo_root, scx_sis_bin, setup};
use anyhow::{Context, Result};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone)]
struct VmTest {
    name: String,
    kernel: Kernel,
    topo: String,
    numa: bool,
    cmd: String,
    /// The guest command's expected exit status.
    rc: i32,
    timeout: u64,
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
}

impl Tally {
    fn check(&mut self, name: &str, ok: bool, why: impl FnOnce() -> String) {
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

/// Kernels to test on: every shipped one, or the default one when none is shipped.
fn test_kernels() -> Result<Vec<Kernel>> {
    let mut ks = kernel::kernels_in(&kernel::shared_dir(&repo_root()));
    if ks.is_empty() {
        ks = kernel::kernels_in(&kernel::cache_dir());
    }
    if ks.is_empty() {
        ks.push(kernel::resolve(&repo_root(), None)?);
    }
    for k in &ks {
        kernel::verify_config(k)?;
    }
    Ok(ks)
}

/// One `# suite:` line of a guest script: a VM test, declared beside the checks it runs.
/// `# suite: NAME TOPOLOGY every|newest TIMEOUT_S [numa] [rc=N] [-- ARGS]` runs
/// `sh /tests/SCRIPT ARGS` in a guest of that topology on every shipped kernel (named
/// NAME-VERSION) or on the newest one, expecting exit status N (default 0).
#[derive(Debug, PartialEq)]
struct Spec {
    name: String,
    topo: String,
    every_kernel: bool,
    timeout: u64,
    numa: bool,
    rc: i32,
    cmd: String,
}

fn parse_spec(script: &str, line: &str) -> Result<Spec, String> {
    let (head, args) = match line.split_once(" -- ") {
        Some((h, a)) => (h, format!(" {a}")),
        None => (line, String::new()),
    };
    let f: Vec<&str> = head.split_whitespace().collect();
    let [name, topo, kernels, timeout, rest @ ..] = f.as_slice() else {
        return Err(format!(
            "{script}: `# suite: {line}` needs NAME TOPOLOGY every|newest TIMEOUT_S"
        ));
    };
    topo.parse::<Topology>()
        .map_err(|e| format!("{script}: suite {name}: {e}"))?;
    let every_kernel = match *kernels {
        "every" => true,
        "newest" => false,
        k => {
            return Err(format!(
                "{script}: suite {name}: kernels '{k}' is not every or newest"
            ))
        }
    };
    let timeout = timeout
        .parse()
        .map_err(|_| format!("{script}: suite {name}: timeout '{timeout}' is not seconds"))?;
    let (mut numa, mut rc) = (false, 0);
    for opt in rest {
        match opt.strip_prefix("rc=") {
            Some(n) => {
                rc = n
                    .parse()
                    .map_err(|_| format!("{script}: suite {name}: bad {opt}"))?
            }
            None if *opt == "numa" => numa = true,
            None => return Err(format!("{script}: suite {name}: unknown option '{opt}'")),
        }
    }
    Ok(Spec {
        name: name.to_string(),
        topo: topo.to_string(),
        every_kernel,
        timeout,
        numa,
        rc,
        cmd: format!("sh /tests/{script}{args}"),
    })
}

/// Every `# suite:` line of tests/guest/*.sh: adding a guest test is adding a script.
fn specs() -> Result<Vec<Spec>> {
    let dir = repo_root().join("tests/guest");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    files.sort();
    let mut v = Vec::new();
    for f in files {
        let script = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?;
        for line in text.lines().filter_map(|l| l.strip_prefix("# suite: ")) {
            v.push(parse_spec(&script, line).map_err(anyhow::Error::msg)?);
        }
    }
    anyhow::ensure!(!v.is_empty(), "no `# suite:` lines in {}", dir.display());
    Ok(v)
}

fn vm_tests(kernels: &[Kernel]) -> Result<Vec<VmTest>> {
    let newest = kernels.last().context("at least one kernel")?;
    let mut v = Vec::new();
    for s in specs()? {
        let on: Vec<&Kernel> = if s.every_kernel {
            kernels.iter().collect()
        } else {
            vec![newest]
        };
        for k in on {
            v.push(VmTest {
                name: if s.every_kernel {
                    format!("{}-{}", s.name, k.version)
                } else {
                    s.name.clone()
                },
                kernel: k.clone(),
                topo: s.topo.clone(),
                numa: s.numa,
                cmd: s.cmd.clone(),
                rc: s.rc,
                timeout: s.timeout,
            });
        }
    }
    // longest first: the queue is popped from the end
    v.sort_by_key(|t| t.timeout);
    Ok(v)
}

/// A quiet single-threaded-TCG guest with scx_sis, sis-probe and tests/guest/.
fn test_guest(
    kernel: &Kernel,
    topology: Topology,
    numa: bool,
    probe: &std::path::Path,
    timeout_s: u64,
    idle_s: u64,
) -> vm::VmConfig {
    vm::VmConfig {
        kernel_args: String::new(),
        kernel: kernel.clone(),
        topology,
        numa,
        mem_mib: 2048,
        with: vec![scx_sis_bin(), probe.to_path_buf()],
        dirs: vec![(repo_root().join("tests/guest"), "/tests".into())],
        timeout: Duration::from_secs(timeout_s),
        idle_timeout: Duration::from_secs(idle_s),
        tcg_multi: false,
        stream: false,
    }
}

fn run_vm_test(t: &VmTest, probe: &std::path::Path, tally: &Mutex<Tally>) {
    let start = Instant::now();
    let topology = t.topo.parse::<Topology>().expect("valid test topology");
    let cfg = test_guest(&t.kernel, topology, t.numa, probe, t.timeout, 120);
    let res = vm::run(&cfg, &t.cmd);
    let mut tally = tally.lock().unwrap();
    println!(
        "# {} ({}, {}{}, {:.0}s)",
        t.name,
        t.kernel.version,
        t.topo,
        if t.numa { " numa" } else { "" },
        start.elapsed().as_secs_f64()
    );
    let r = match res {
        Ok(r) => r,
        Err(e) => {
            tally.check(&t.name, false, || {
                format!("could not start the guest: {e:#}")
            });
            return;
        }
    };
    if let Some(why) = &r.failure {
        tally.check(&t.name, false, || {
            format!("{why} (exit {})\n{}", r.code, vm::relevant_lines(&r.output))
        });
        return;
    }
    // `plan N [json]`: the checks the script will report, and whether it prints
    // `--monitor --json` intervals for the runner to verify
    let plan = r
        .output
        .lines()
        .find_map(|l| l.strip_prefix("plan "))
        .map(|p| {
            let mut w = p.split_whitespace();
            let n = w.next().and_then(|n| n.parse::<usize>().ok());
            (n, w.next() == Some("json"))
        });
    let json: Vec<&str> = r
        .output
        .lines()
        .filter_map(|l| l.strip_prefix("json "))
        .collect();
    if plan.is_some_and(|(_, j)| j) || !json.is_empty() {
        let bad: Vec<String> = json.iter().filter_map(|j| json_interval_error(j)).collect();
        tally.check(
            &format!("{}/json-intervals", t.name),
            json.len() >= 2 && bad.is_empty(),
            || {
                format!(
                    "{} intervals, {} bad: {}",
                    json.len(),
                    bad.len(),
                    bad.join("; ")
                )
            },
        );
    }
    let mut checks = 0;
    for line in r.output.lines() {
        if let Some(n) = line.strip_prefix("ok ") {
            checks += 1;
            tally.check(&format!("{}/{}", t.name, n.trim()), true, String::new);
        } else if let Some(rest) = line.strip_prefix("not ok ") {
            checks += 1;
            let (n, why) = rest.split_once(':').unwrap_or((rest, ""));
            let ctx = guest_context(&r.output, line);
            tally.check(&format!("{}/{}", t.name, n.trim()), false, || {
                format!("{}\n{ctx}", why.trim())
            });
        } else if line.starts_with("# ") || line.starts_with("| ") {
            println!("  {line}");
        }
    }
    let faults = vm::kernel_faults(&r.output);
    tally.check(&format!("{}/kernel-log", t.name), faults.is_empty(), || {
        format!(
            "{} kernel fault report(s):\n{}",
            faults.len(),
            faults.join("\n")
        )
    });
    let planned = plan.and_then(|(n, _)| n);
    tally.check(
        &format!("{}/exit-status", t.name),
        r.code == t.rc && planned == Some(checks),
        || {
            format!(
                "guest command exited {} (expected {}), {checks} checks reported, {} planned\n{}",
                r.code,
                t.rc,
                planned.map_or("none".into(), |n| n.to_string()),
                vm::relevant_lines(&r.output)
            )
        },
    );
}

/// Why one `--monitor --json` line is not a valid interval, if it is not: it must
/// parse as a JSON object whose placement steps sum to its select_cpu count.
fn json_interval_error(line: &str) -> Option<String> {
    let v: serde_json::Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Some(format!("not JSON ({e}): {line:.80}")),
    };
    let get = |k: &str| v.get(k).and_then(|x| x.as_u64());
    // the interval names its own step fields
    let steps: Vec<&str> = v["steps"]
        .as_str()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    if steps.is_empty() {
        return Some(format!("no step list: {line:.80}"));
    }
    let sum: Option<u64> = steps.iter().map(|k| get(k)).sum();
    match (sum, get("select_cpu")) {
        (Some(s), Some(n)) if s == n => None,
        (s, n) => Some(format!("steps sum {s:?} != select_cpu {n:?}")),
    }
}

/// The guest lines just before a failed check.
fn guest_context(output: &str, line: &str) -> String {
    let v: Vec<&str> = output.lines().collect();
    let i = v.iter().position(|l| *l == line).unwrap_or(0);
    v[i.saturating_sub(12)..i].join("\n")
}

fn unit_tests(tally: &mut Tally) -> Result<()> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["test", "--release", "--workspace"])
        .env(
            "BPF_CLANG",
            std::env::var("BPF_CLANG").unwrap_or_else(|_| "clang-19".into()),
        )
        .current_dir(repo_root())
        .output()
        .context("running cargo test")?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let (mut p, mut f) = (0, 0);
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("test result: ") {
            let num = |key: &str| {
                rest.split(';')
                    .find_map(|part| {
                        part.trim().strip_suffix(key).map(|n| {
                            n.trim()
                                .rsplit(' ')
                                .next()
                                .unwrap_or("0")
                                .parse::<usize>()
                                .unwrap_or(0)
                        })
                    })
                    .unwrap_or(0)
            };
            p += num("passed");
            f += num("failed");
        }
    }
    for l in text
        .lines()
        .filter(|l| l.contains("FAILED") || l.contains("panicked"))
    {
        println!("  {l}");
    }
    println!("# unit tests: {p} passed, {f} failed");
    tally.passed += p;
    for i in 0..f {
        tally.failed.push(format!("unit test failure {}", i + 1));
    }
    tally.check("unit-tests-ran", out.status.success() && p > 0, || {
        format!("cargo test exited {:?} with {p} passed", out.status.code())
    });
    Ok(())
}

/// The xtask CLI's own errors, run as a user would.
fn host_tests(tally: &mut Tally, kernels: &[Kernel]) -> Result<()> {
    let me = std::env::current_exe().context("locating the xtask binary")?;
    let run = |args: &[&str]| {
        Command::new(&me)
            .args(args)
            .env_remove("SCX_SIS_KERNEL")
            .output()
            .map(|o| {
                (
                    o.status.code().unwrap_or(-1),
                    String::from_utf8_lossy(&o.stderr).to_string(),
                )
            })
    };
    let (code, err) = run(&[
        "vm",
        "--no-build",
        "--kernel",
        "/nonexistent/vmlinuz-9.9",
        "--",
        "true",
    ])?;
    tally.check(
        "host/vm-kernel-path-missing",
        code == 2 && err.contains("/nonexistent/vmlinuz-9.9 does not exist"),
        || format!("exit {code}, stderr: {err}"),
    );

    let dir = vm::tempdir("xtask-nosched")?;
    let k = &kernels[0];
    std::os::unix::fs::symlink(&k.vmlinuz, dir.join("vmlinuz-0.1-nosched"))?;
    let cfg = std::fs::read_to_string(&k.config)?.replace(
        "CONFIG_SCHED_CLASS_EXT=y",
        "# CONFIG_SCHED_CLASS_EXT is not set",
    );
    std::fs::write(dir.join("config-0.1-nosched"), cfg)?;
    let path = dir.join("vmlinuz-0.1-nosched");
    let (code, err) = run(&[
        "vm",
        "--no-build",
        "--kernel",
        &path.to_string_lossy(),
        "--",
        "true",
    ])?;
    tally.check(
        "host/vm-kernel-without-sched_ext",
        code == 2 && err.contains("CONFIG_SCHED_CLASS_EXT"),
        || format!("exit {code}, stderr: {err}"),
    );
    let _ = std::fs::remove_dir_all(&dir);

    let (code, err) = run(&["vm", "--no-build", "--topology", "1:0:2", "--", "true"])?;
    tally.check(
        "host/vm-bad-topology",
        code == 2 && err.contains("topology '1:0:2' must be positive numbers"),
        || format!("exit {code}, stderr: {err}"),
    );

    guest_failure_tests(tally, &run, k)?;

    // The host kernel has no sched_ext: scx_sis must say so, in one line.
    if !std::path::Path::new("/sys/kernel/sched_ext").exists() {
        let o = Command::new(scx_sis_bin())
            .output()
            .context("running scx_sis on the host")?;
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let code = o.status.code().unwrap_or(-1);
        tally.check(
            "host/scx_sis-no-sched_ext",
            code != 0 && err.contains("sched_ext") && err.trim().lines().count() == 1,
            || format!("exit {code}, stderr: {err}"),
        );
    }
    Ok(())
}

/// Runs this xtask binary with arguments: (exit code, stderr).
type XtaskRun<'a> = dyn Fn(&[&str]) -> std::io::Result<(i32, String)> + 'a;

/// A guest that panics, hangs or never boots ends the run with its own exit code
/// and a one-line reason.
fn guest_failure_tests(tally: &mut Tally, run: &XtaskRun<'_>, k: &Kernel) -> Result<()> {
    let kernel = k.vmlinuz.to_string_lossy().to_string();
    let base = ["vm", "--no-build", "--kernel", kernel.as_str()];
    let cases: [(&str, Vec<&str>, i32, &str); 3] = [
        (
            "panic",
            vec!["--", "sh", "-c", "echo c > /proc/sysrq-trigger"],
            vm::EXIT_PANIC,
            "guest kernel panic",
        ),
        (
            "hang",
            vec!["--idle-timeout", "8", "--", "sleep", "600"],
            vm::EXIT_HANG,
            "guest hung: no console output",
        ),
        (
            "timeout",
            vec![
                "--timeout",
                "20",
                "--",
                "sh",
                "-c",
                "while :; do echo .; sleep 1; done",
            ],
            vm::EXIT_TIMEOUT,
            "guest run exceeded --timeout",
        ),
    ];
    for (name, extra, want, reason) in cases {
        let args: Vec<&str> = base.iter().copied().chain(extra).collect();
        let (code, err) = run(&args)?;
        tally.check(
            &format!("host/vm-guest-{name}"),
            code == want && err.contains(reason),
            || format!("exit {code} (want {want}), stderr: {err}"),
        );
    }
    // not a kernel at all: qemu cannot boot it
    let dir = vm::tempdir("xtask-noboot")?;
    std::fs::write(dir.join("vmlinuz-0.2-garbage"), vec![0u8; 4096])?;
    std::fs::copy(&k.config, dir.join("config-0.2-garbage"))?;
    let path = dir
        .join("vmlinuz-0.2-garbage")
        .to_string_lossy()
        .to_string();
    let (code, err) = run(&["vm", "--no-build", "--kernel", &path, "--", "true"])?;
    tally.check(
        "host/vm-guest-no-boot",
        code == vm::EXIT_NO_BOOT && err.contains("guest did not boot"),
        || format!("exit {code}, stderr: {err}"),
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Every bench suite, 1 run of 2 s, eevdf and sis, in one guest: each must leave a
/// CSV with rows for both, a JSON document with results, and an SVG plot.
fn bench_smoke(tally: &mut Tally, me: &std::path::Path, kernels: &[Kernel]) -> Result<()> {
    let out = repo_root().join("target/bench-smoke");
    let _ = std::fs::remove_dir_all(&out);
    let newest = kernels.last().context("no shipped kernel")?;
    let suites = crate::bench::SUITES
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>();
    let o = Command::new(me)
        .args(["bench", &suites.join(","), "--runs", "1", "--secs", "2"])
        .args(["--sched", "eevdf,sis", "--loads", "2", "--no-build"])
        .args(["--kernel", &newest.version, "--out"])
        .arg(&out)
        .output()
        .context("running xtask bench")?;
    let stdout = String::from_utf8_lossy(&o.stdout);
    tally.check("host/bench-smoke-exit", o.status.success(), || {
        format!(
            "exit {:?}: {}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stderr),
            stdout.lines().rev().take(20).collect::<Vec<_>>().join("\n")
        )
    });
    for s in suites {
        let read = |ext: &str| {
            std::fs::read_to_string(out.join(s).with_extension(ext)).unwrap_or_default()
        };
        let csv = read("csv");
        // cost times only scx_sis's own select_cpu: eevdf has none
        let want: &[&str] = if s == "cost" {
            &["sis"]
        } else {
            &["eevdf", "sis"]
        };
        let rows_ok = csv.starts_with("suite,sched,load,run,metric,value\n")
            && want.iter().all(|c| {
                csv.lines().skip(1).any(|l| {
                    let f: Vec<&str> = l.split(',').collect();
                    f.len() == 6 && f[1] == *c && f[5].parse::<f64>().is_ok()
                })
            });
        tally.check(&format!("host/bench-smoke-{s}-csv"), rows_ok, || {
            csv.clone()
        });
        let json: Option<serde_json::Value> = serde_json::from_str(&read("json")).ok();
        let results = json
            .as_ref()
            .and_then(|j| j["results"].as_array())
            .map_or(0, |r| r.len());
        tally.check(&format!("host/bench-smoke-{s}-json"), results > 0, || {
            format!(
                "{} results in {}",
                results,
                out.join(s).with_extension("json").display()
            )
        });
        let svg = read("svg");
        tally.check(
            &format!("host/bench-smoke-{s}-svg"),
            svg.contains("<svg") && svg.contains("</svg>") && svg.contains(s),
            || format!("{} bytes of SVG", svg.len()),
        );
    }
    Ok(())
}

/// The demo behind README's first command (`cargo xtask run` without sched_ext on the
/// host): both halves, live stats in each, the NO_IDLE_CORE flip visible in the
/// summary, exit 0 and the kernel back on its default scheduler.
fn demo_smoke(tally: &mut Tally, me: &std::path::Path, kernels: &[Kernel]) -> Result<()> {
    let newest = kernels.last().context("no shipped kernel")?;
    let o = Command::new(me)
        .args([
            "run",
            "--secs",
            "12",
            "--no-build",
            "--kernel",
            &newest.version,
        ])
        .env_remove("SCX_SIS_KERNEL")
        .output()
        .context("running xtask run")?;
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let tail = || out.lines().rev().take(30).collect::<Vec<_>>().join("\n");
    tally.check("host/demo-exit-0", o.status.success(), || {
        format!(
            "exit {:?}: {}\n{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stderr),
            tail()
        )
    });
    let lines = |feat: &str| {
        out.lines()
            .filter(|l| l.starts_with("[scx_sis]") && l.contains(&format!("| feat {feat}")))
            .count()
    };
    tally.check(
        "host/demo-both-halves",
        out.contains("demo: first half")
            && out.contains("demo: second half")
            && lines("default") >= 2
            && lines("NO_IDLE_CORE") >= 2,
        || {
            format!(
                "{} default and {} NO_IDLE_CORE stats lines\n{}",
                lines("default"),
                lines("NO_IDLE_CORE"),
                tail()
            )
        },
    );
    // `demo: % placed by idle_core   BEFORE   AFTER`: searched cores before, none after
    let row: Vec<f64> = out
        .lines()
        .find(|l| l.starts_with("demo: % placed by idle_core"))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    tally.check(
        "host/demo-flip-in-summary",
        row.len() == 2 && row[0] > 0.0 && row[1] == 0.0,
        || format!("idle_core row {row:?}\n{}", tail()),
    );
    tally.check(
        "host/demo-default-scheduler-after",
        out.contains("demo: scx_sis exit 0, sched_ext disabled"),
        tail,
    );
    Ok(())
}

pub fn run(filter: Option<&str>, jobs: usize, unit: bool) -> Result<i32> {
    let start = Instant::now();
    setup::ensure()?;
    build_scheduler()?;
    let probe = crate::build_probe()?;
    let kernels = test_kernels()?;
    let mut tally = Tally::default();
    if unit {
        unit_tests(&mut tally)?;
    }
    if filter.is_none() {
        host_tests(&mut tally, &kernels)?;
        let me = std::env::current_exe().context("locating the xtask binary")?;
        bench_smoke(&mut tally, &me, &kernels)?;
        demo_smoke(&mut tally, &me, &kernels)?;
    }
    let tests: Vec<VmTest> = vm_tests(&kernels)?
        .into_iter()
        .filter(|t| filter.is_none_or(|f| t.name.contains(f)))
        .collect();
    let queue = Arc::new(Mutex::new(tests));
    let tally = Arc::new(Mutex::new(tally));
    let workers: Vec<_> = (0..jobs.max(1))
        .map(|_| {
            let q = queue.clone();
            let t = tally.clone();
            let probe = probe.clone();
            std::thread::spawn(move || loop {
                let next = q.lock().unwrap().pop();
                match next {
                    Some(test) => run_vm_test(&test, &probe, &t),
                    None => break,
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let tally = tally.lock().unwrap();
    println!("# suite took {:.0}s", start.elapsed().as_secs_f64());
    let names: Vec<&str> = kernels.iter().map(|k| k.version.as_str()).collect();
    println!(
        "# kernels covered: {} ({})",
        names.join(", "),
        kernels[0]
            .vmlinuz
            .parent()
            .map_or("?".into(), |d| d.display().to_string())
    );
    if kernels.len() == 1 {
        println!(
            "# only one kernel was covered: the per-kernel tests ran on {} alone; put more vmlinuz-VER/config-VER pairs in {} to cover more",
            names[0],
            kernel::shared_dir(&repo_root()).display()
        );
    }
    for f in &tally.failed {
        println!("# FAILED {}", f.lines().next().unwrap_or(""));
    }
    println!("{} passed, {} failed", tally.passed, tally.failed.len());
    Ok(if tally.failed.is_empty() { 0 } else { 1 })
}

/// `cargo xtask verifier`: load scx_sis (without attaching) in a guest of every shipped
/// kernel and record each program's verified instructions as the suite's baseline.
pub fn verifier_baseline() -> Result<i32> {
    setup::ensure()?;
    build_scheduler()?;
    let probe = crate::build_probe()?;
    let kernels = test_kernels()?;
    let mut out = String::from(
        "# KERNEL PROGRAM VERIFIED_INSNS on a 1:4:2 guest (8 CPUs; the topology is in rodata, so the verifier's work depends on it), recorded by `cargo xtask verifier`;\n# tests/guest/verifier.sh holds each program to twice its figure (at least +20000, at most 250000).\n",
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

/// `cargo xtask soak`: one guest per kernel, side by side; prints each `soak:` line and
/// fails when a guest reports a failed check (an ejection, a dead loader, RSS growth).
/// Each guest's whole console goes to `target/soak/VERSION-SCHED.log`.
pub fn soak(minutes: u32, only: Option<&str>, sched: &str) -> Result<i32> {
    setup::ensure()?;
    build_scheduler()?;
    let probe = crate::build_probe()?;
    let kernels: Vec<Kernel> = test_kernels()?
        .into_iter()
        .filter(|k| only.is_none_or(|v| k.version == v))
        .collect();
    anyhow::ensure!(
        !kernels.is_empty(),
        "no shipped kernel {}",
        only.unwrap_or("")
    );
    let handles: Vec<_> = kernels
        .into_iter()
        .map(|k| {
            let probe = probe.clone();
            let sched = sched.to_string();
            std::thread::spawn(move || {
                let topology = "1:4:2".parse().expect("valid topology");
                let timeout = minutes as u64 * 60 + 900;
                let mut cfg = test_guest(&k, topology, false, &probe, timeout, 300);
                // Single-threaded TCG runs 8 vCPUs on one host thread at 2x overload:
                // the kernel's 21 s RCU stall timeout fires under EEVDF too (soak
                // --sched eevdf), and sched_ext ejects any BPF scheduler on an RCU stall.
                cfg.kernel_args = "rcupdate.rcu_cpu_stall_timeout=120".into();
                (
                    k.version,
                    vm::run(&cfg, &format!("sh /tests/soak.sh {minutes} {sched}")),
                )
            })
        })
        .collect();
    let mut failed = 0;
    let dir = repo_root().join("target").join("soak");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for h in handles {
        let (ver, res) = h.join().expect("soak thread");
        if let Ok(r) = &res {
            let log = dir.join(format!("{ver}-{sched}.log"));
            std::fs::write(&log, &r.output)
                .with_context(|| format!("writing {}", log.display()))?;
            println!("[{ver}] console: {}", log.display());
        }
        match res {
            Ok(r) if r.failure.is_none() => {
                let keep = |l: &&str| {
                    l.starts_with("soak")
                        || l.starts_with("# ")
                        || l.starts_with("ok ")
                        || l.starts_with("not ok")
                };
                for l in r.output.lines().filter(keep) {
                    println!("[{ver}] {l}");
                }
                if r.output.contains("not ok ") || r.code != 0 {
                    failed += 1;
                }
            }
            Ok(r) => {
                failed += 1;
                println!(
                    "[{ver}] guest failed: {:?}\n{}",
                    r.failure,
                    vm::relevant_lines(&r.output)
                );
            }
            Err(e) => {
                failed += 1;
                println!("[{ver}] could not start the guest: {e:#}");
            }
        }
    }
    println!("soak: {failed} kernel(s) failed");
    Ok(if failed == 0 { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_lines_parse() {
        let s = parse_spec(
            "topology.sh",
            "topology-1:4:1-exit7 1:4:1 newest 300 rc=7 -- 1 4 1; exit 7",
        )
        .unwrap();
        assert_eq!(
            (s.name.as_str(), s.every_kernel, s.rc, s.timeout),
            ("topology-1:4:1-exit7", false, 7, 300)
        );
        assert_eq!(s.cmd, "sh /tests/topology.sh 1 4 1; exit 7");
        let s = parse_spec("counters.sh", "counters 2:2:2 every 400 numa").unwrap();
        assert!(s.numa && s.every_kernel && s.cmd == "sh /tests/counters.sh");
        assert!(parse_spec("x.sh", "x 1:4:2 sometimes 10")
            .unwrap_err()
            .contains("every or newest"));
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
