// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask soak`: a long mixed load with CPU hotplug on every shipped kernel.

use crate::kernel::Kernel;
use crate::suite::{test_guest, test_kernels};
use crate::vm;
use crate::{build_scheduler, repo_root, setup};
use anyhow::{Context, Result};

/// `cargo xtask soak`: one guest per kernel, side by side; prints each `soak:` line and
/// fails when a guest reports a failed check (an ejection, a dead loader, RSS growth).
/// Each guest's whole console goes to `target/soak/VERSION-SCHED.log`.
pub fn soak(
    minutes: u32,
    only: Option<&str>,
    sched: &str,
    topology: vm::Topology,
    numa: bool,
) -> Result<i32> {
    setup::ensure()?;
    vm::check_qemu_for(&topology)?;
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
                let timeout = minutes as u64 * 60 + 900;
                let mut cfg = test_guest(&k, topology, numa, &probe, timeout, 300);
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
