// SPDX-License-Identifier: GPL-2.0-only
//! Tests that run on the host: unit tests, the xtask and scx_sis CLI, guest failures,
//! the bench smoke run and the demo.

use super::Tally;
use crate::kernel::Kernel;
use crate::vm;
use crate::{repo_root, scx_sis_bin};
use anyhow::{Context, Result};
use std::process::Command;

pub(crate) fn unit_tests(tally: &mut Tally) -> Result<()> {
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
pub(crate) fn host_tests(tally: &mut Tally, kernels: &[Kernel]) -> Result<()> {
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

    // a host without sched_ext: a native bench and the first check refuse in one line,
    // before building anything (on a sched_ext host they would run for real: the guest
    // tests native-check and native-bench cover them there)
    let natives: &[(&str, &[&str])] = if std::path::Path::new("/sys/kernel/sched_ext").exists() {
        println!("# host has sched_ext: the no-sched_ext refusals are not checked here");
        &[]
    } else {
        &[
            (
                "host/bench-native-no-sched_ext",
                &["bench", "wakeup", "--native"],
            ),
            ("host/check-no-sched_ext", &["check"]),
        ]
    };
    for &(name, args) in natives {
        let (code, err) = run(args)?;
        tally.check(
            name,
            code == 2
                && err.trim().lines().count() == 1
                && err.contains("this kernel has no sched_ext"),
            || format!("exit {code}, stderr: {err}"),
        );
    }

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
pub(crate) type XtaskRun<'a> = dyn Fn(&[&str]) -> std::io::Result<(i32, String)> + 'a;

/// A guest that panics, hangs or never boots ends the run with its own exit code
/// and a one-line reason.
pub(crate) fn guest_failure_tests(tally: &mut Tally, run: &XtaskRun<'_>, k: &Kernel) -> Result<()> {
    let kernel = k.vmlinuz.to_string_lossy().to_string();
    let base = ["vm", "--no-build", "--kernel", kernel.as_str()];
    let stuck = format!("echo {}3@@; sleep 600", vm::MARK_RC);
    let cases: [(&str, Vec<&str>, i32, &[&str]); 4] = [
        (
            "panic",
            vec!["--", "sh", "-c", "echo c > /proc/sysrq-trigger"],
            vm::EXIT_PANIC,
            &["guest kernel panic"],
        ),
        (
            "hang",
            vec!["--idle-timeout", "8", "--", "sleep", "600"],
            vm::EXIT_HANG,
            // where each vCPU was, from qemu's monitor, and the kernel's own dump
            &[
                "guest hung: no console output",
                "# vCPUs at the hang, sample 1: cpu0 ",
                "Kernel panic - not syncing: NMI: Not continuing",
            ],
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
            &["guest run exceeded --timeout"],
        ),
        (
            // status 3 reported as /init reports it, then silence, as from a power-off
            // that never ends: the status stands and the guest is stopped, not a hang
            "poweroff-stuck",
            vec!["--idle-timeout", "120", "--", "sh", "-c", &stuck],
            3,
            &[],
        ),
    ];
    for (name, extra, want, reason) in cases {
        let args: Vec<&str> = base.iter().copied().chain(extra).collect();
        let (code, err) = run(&args)?;
        tally.check(
            &format!("host/vm-guest-{name}"),
            code == want && reason.iter().all(|r| err.contains(r)),
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

/// The rows of a bench CSV (after its header) with a numeric value: (sched, metric, value).
fn csv_rows(csv: &str) -> impl Iterator<Item = (&str, &str, f64)> {
    csv.lines().skip(1).filter_map(|l| {
        let f: Vec<&str> = l.split(',').collect();
        let v = f.get(5)?.parse::<f64>().ok()?;
        (f.len() == 6).then_some((f[1], f[4], v))
    })
}

/// Every bench suite, 1 run of 2 s, eevdf and sis, in one guest: each must leave a
/// CSV with rows for both, a JSON document with results, and an SVG plot.
pub(crate) fn bench_smoke(
    tally: &mut Tally,
    me: &std::path::Path,
    kernels: &[Kernel],
) -> Result<()> {
    let out = repo_root().join("target/bench-smoke");
    let _ = std::fs::remove_dir_all(&out);
    let newest = kernels.last().context("no shipped kernel")?;
    let suites = crate::bench::SUITES
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>();
    let o = Command::new(me)
        .args([
            "bench",
            &suites.join(","),
            "--runs",
            "1",
            "--secs",
            "2",
            "--no-warmup",
        ])
        .args(["--sched", "eevdf,sis", "--loads", "2", "--no-build"])
        .args(["--kernel", &newest.version, "--out"])
        .arg(&out)
        .output()
        .context("running xtask bench")?;
    let stdout = String::from_utf8_lossy(&o.stdout);
    tally.check("host/bench-smoke-exit", o.status.success(), || {
        // the reasons first: bench errors and kernel fault reports, wherever printed
        let why: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("bench-error") || l.starts_with("bench: kernel fault"))
            .collect();
        format!(
            "exit {:?}: {}{}\n{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stderr),
            why.join("\n"),
            tail(&stdout, 20)
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
            && want
                .iter()
                .all(|c| csv_rows(&csv).any(|(sched, _, _)| sched == *c));
        tally.check(&format!("host/bench-smoke-{s}-csv"), rows_ok, || {
            csv.clone()
        });
        if s == "cost" {
            // 6.19+: scx_sis's sched_switch hook shares its maps, so bpfstats counts it (`other`)
            let hook = csv_rows(&csv).any(|r| r.0 == "sis" && r.1 == "op_other_ns" && r.2 > 0.0);
            tally.check("host/bench-smoke-cost-hook-counted", hook, || csv.clone());
        }
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

/// The kernel's own features as bench configurations: `eevdf:NO_WA_IDLE` runs with
/// WA_IDLE off and restores it, the tables name every configuration by its label and
/// state the kernel's features; an unknown kernel feature is a one-line error, non-zero exit.
pub(crate) fn bench_kernel_features(
    tally: &mut Tally,
    me: &std::path::Path,
    kernels: &[Kernel],
) -> Result<()> {
    let out = repo_root().join("target/bench-kfeat");
    let _ = std::fs::remove_dir_all(&out);
    let newest = kernels.last().context("no shipped kernel")?;
    let bench = |sched: &str| {
        Command::new(me)
            .args([
                "bench", "tbench", "--runs", "1", "--secs", "2", "--loads", "2",
            ])
            .args(["--sched", sched, "--no-build", "--kernel", &newest.version])
            .arg("--out")
            .arg(&out)
            .output()
            .context("running xtask bench")
    };
    let o = bench("eevdf:NO_WA_IDLE,prop=sis:NO_SIS_UTIL+SIS_PROP")?;
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let csv = std::fs::read_to_string(out.join("tbench.csv")).unwrap_or_default();
    let txt = std::fs::read_to_string(out.join("tbench.txt")).unwrap_or_default();
    tally.check(
        "host/bench-kfeat-runs",
        o.status.success()
            && csv.contains("tbench,eevdf:NO_WA_IDLE,2,1,mb_s,")
            && csv.contains("tbench,prop,2,1,mb_s,")
            && csv.contains("tbench,prop,2,1,scan_mean,"),
        || {
            format!(
                "exit {:?}
{csv}
{}",
                o.status.code(),
                tail(&stdout, 20)
            )
        },
    );
    // the warm-up ran (bench-warmup lines) and none of it reached the data
    tally.check(
        "host/bench-warmup-discarded",
        stdout.contains("bench-warmup: suite=tbench sched=prop run=0")
            && !csv.lines().any(|l| l.split(',').nth(3) == Some("0")),
        || format!("{csv}\n{}", tail(&stdout, 20)),
    );
    tally.check(
        "host/bench-kfeat-header",
        txt.lines().next().is_some_and(|h| {
            h.contains("EEVDF sched features as found") && h.contains(" WA_IDLE ")
        }),
        || txt.lines().next().unwrap_or("").to_string(),
    );
    tally.check(
        "host/bench-kfeat-restored",
        stdout.contains("bench: the kernel's sched features are as found"),
        || tail(&stdout, 20),
    );
    let o = bench("eevdf:NO_FOO")?;
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    tally.check(
        "host/bench-kfeat-unknown",
        o.status.code().is_some_and(|c| c != 0)
            && err.lines().last().is_some_and(|l| {
                l.starts_with(
                    "xtask: error: unknown kernel scheduler feature 'NO_FOO' in eevdf:NO_FOO",
                )
            }),
        || format!("exit {:?}: {err}", o.status.code()),
    );
    Ok(())
}

/// Published figures come back from the committed data alone: `bench seed --from` on
/// results/2026-11-30-seed prints the table docs/BENCHMARKS-HISTORY.md quotes (masterx at 64
/// clients: 36.7 MB/s, 0.825 of EEVDF, 16.9 CPUs scanned per wakeup).
pub(crate) fn bench_from_data(tally: &mut Tally, me: &std::path::Path) -> Result<()> {
    let o = Command::new(me)
        .args(["bench", "seed", "--from"])
        .arg(repo_root().join("results/2026-11-30-seed"))
        .output()
        .context("running xtask bench --from")?;
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let row = out
        .split("\nmasterx ")
        .nth(1)
        .and_then(|b| b.lines().find(|l| l.starts_with("64 ")))
        .unwrap_or("");
    let f: Vec<&str> = row.split_whitespace().collect();
    tally.check(
        "host/bench-from-committed-data",
        o.status.success()
            && f.get(2) == Some(&"36.7")
            && f.get(6) == Some(&"0.825~")
            && f.contains(&"16.9"),
        || {
            format!(
                "exit {:?}, masterx at 64: '{row}'\n{}",
                o.status.code(),
                tail(&out, 10)
            )
        },
    );
    Ok(())
}

/// Every table the documents quote is what `cargo xtask doc` generates from the code or
/// the committed results (none typed by hand, none stale), every prose figure of the
/// benchmark documents is printed by one, and every relative link finds its target.
pub(crate) fn doc_generated(tally: &mut Tally, me: &std::path::Path) -> Result<()> {
    let o = Command::new(me)
        .args(["doc", "--check"])
        .current_dir(repo_root())
        .output()
        .context("running xtask doc --check")?;
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    tally.check(
        "host/benchmarks-md-generated-from-results",
        o.status.success() && out.contains(" 0 stale") && !out.contains("doc: 0 generated"),
        || {
            format!(
                "exit {:?}: {}{}",
                o.status.code(),
                tail(&out, 10),
                String::from_utf8_lossy(&o.stderr)
            )
        },
    );
    Ok(())
}

fn tail(s: &str, n: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(n)..].join("\n")
}

/// The demo behind README's first command (`cargo xtask run` without sched_ext on the
/// host): both halves, live stats in each, the NO_IDLE_CORE flip visible in the
/// summary, exit 0 and the kernel back on its default scheduler.
pub(crate) fn demo_smoke(
    tally: &mut Tally,
    me: &std::path::Path,
    kernels: &[Kernel],
) -> Result<()> {
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
