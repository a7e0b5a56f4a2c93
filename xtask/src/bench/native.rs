// SPDX-License-Identifier: GPL-2.0-only
//! `cargo xtask bench` on a sched_ext host: tests/guest/bench.sh run on the host's own
//! CPUs, as root, with the host described in every table header.

use super::Plan;
use crate::{repo_root, vm};
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SCX: &str = "/sys/kernel/sched_ext";

/// Is this host a sched_ext machine (so the bench runs natively)?
pub fn host_has_sched_ext() -> bool {
    Path::new(SCX).exists()
}

/// The one-line refusals: not root, another sched_ext scheduler loaded.
pub fn preflight() -> Result<()> {
    if !crate::setup::is_root() {
        bail!("the native bench loads schedulers and switches the kernel's sched features: run it as root");
    }
    let state = std::fs::read_to_string(format!("{SCX}/state")).unwrap_or_default();
    if state.trim() != "disabled" {
        let ops = std::fs::read_to_string(format!("{SCX}/root/ops")).unwrap_or_default();
        bail!(
            "another sched_ext scheduler is loaded ({}): stop it before the bench",
            ops.trim()
        );
    }
    Ok(())
}

/// The workloads the bench's suites call, with the Debian package of each.
const TOOLS: &[(&str, &str)] = &[
    ("tbench", "dbench"),
    ("tbench_srv", "dbench"),
    ("hackbench", "rt-tests"),
    ("stress-ng", "stress-ng"),
    ("perf", "linux-perf"),
    ("sis-probe", "cargo xtask builds it (drop --no-build)"),
    ("scx_sis", "cargo xtask builds it (drop --no-build)"),
];

fn which_in(path: &std::ffi::OsStr, bin: &str) -> bool {
    std::env::split_paths(path).any(|d| d.join(bin).is_file())
}

/// Run bench.sh natively; returns everything it printed (as the guest's console would).
pub fn run(script_dir: &Path, args: &[String], extra_path: &[PathBuf]) -> Result<(String, i32)> {
    let mut path: Vec<PathBuf> = extra_path.to_vec();
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(path).context("joining PATH")?;
    let missing: Vec<String> = TOOLS
        .iter()
        .filter(|(b, _)| !which_in(&path, b))
        .map(|(b, p)| format!("{b} ({p})"))
        .collect();
    if !missing.is_empty() {
        bail!("the bench needs {} on PATH", missing.join(", "));
    }
    let mark = format!("scx_sis-bench-{}", std::process::id());
    let _ = std::fs::write("/dev/kmsg", format!("{mark}\n"));
    let mut child = Command::new("sh")
        .arg(script_dir.join("bench.sh"))
        .args(args)
        .env("PATH", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting bench.sh")?;
    // Ctrl-C reaches bench.sh (same process group), which restores what it changed
    // and exits 130; we stay to read its last lines and check the kernel's state.
    unsafe { signal(2, 1) };
    let mut out = String::new();
    let stdout = child.stdout.take().context("bench.sh's stdout")?;
    for line in BufReader::new(stdout).lines() {
        let line = line.context("reading bench.sh's output")?;
        if line.starts_with("bench-") && !line.starts_with("bench-mon") {
            println!("{line}");
        }
        out.push_str(&line);
        out.push('\n');
    }
    let st = child.wait().context("waiting for bench.sh")?;
    unsafe { signal(2, 0) };
    out.push_str(&kernel_log_since(&mark));
    Ok((out, st.code().unwrap_or(130)))
}

/// The kernel log after our mark, for vm::kernel_faults.
fn kernel_log_since(mark: &str) -> String {
    let Ok(o) = Command::new("dmesg").output() else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&o.stdout);
    match text.find(mark) {
        Some(i) => text[i..].to_string(),
        None => String::new(),
    }
}

/// The state sched_ext is in now ("disabled" when the kernel's own scheduler runs).
pub fn state() -> String {
    std::fs::read_to_string(format!("{SCX}/state"))
        .unwrap_or_else(|_| "missing".into())
        .trim()
        .to_string()
}

fn read(p: &str) -> String {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The host as every table header names it: CPU model, topology as the kernel sees
/// it, SMT, kernel, cpufreq governor, and the load found before the start.
pub fn describe() -> String {
    let model = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = online_cpus();
    let attr = |c: u32, f: &str| read(&format!("/sys/devices/system/cpu/cpu{c}/{f}"));
    let sockets: BTreeSet<String> = cpus
        .iter()
        .map(|&c| attr(c, "topology/physical_package_id"))
        .collect();
    let cores: BTreeSet<(String, String)> = cpus
        .iter()
        .map(|&c| {
            (
                attr(c, "topology/physical_package_id"),
                attr(c, "topology/core_id"),
            )
        })
        .collect();
    let llcs: BTreeSet<String> = cpus
        .iter()
        .map(|&c| attr(c, "cache/index3/shared_cpu_list"))
        .collect();
    let smt = cores.len() < cpus.len();
    let governor = attr(
        cpus.first().copied().unwrap_or(0),
        "cpufreq/scaling_governor",
    );
    format!(
        "native host: {model}; {} CPUs in {} socket(s), {} LLC(s), {} cores, SMT {} (as the kernel sees it); kernel {}; cpufreq governor {}; other load before the start: {}",
        cpus.len(),
        sockets.len(),
        llcs.len(),
        cores.len(),
        if smt { "on" } else { "off" },
        read("/proc/sys/kernel/osrelease"),
        if governor.is_empty() { "none (no cpufreq)".into() } else { governor },
        busy_before()
    )
}

fn online_cpus() -> Vec<u32> {
    cpu_list(&read("/sys/devices/system/cpu/online"))
}

/// "0-3,8" -> [0, 1, 2, 3, 8].
pub fn cpu_list(s: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
            v.extend(a..=b);
        }
    }
    v
}

/// The CPUs' busy share over one second, and the load average.
fn busy_before() -> String {
    let sample = || {
        let l = read("/proc/stat");
        let f: Vec<u64> = l
            .lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
        (f.iter().sum::<u64>(), idle)
    };
    let (t0, i0) = sample();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (t1, i1) = sample();
    // iowait may go backwards (proc(5)): saturate rather than wrap
    let busy = if t1 > t0 {
        100.0 * (1.0 - i1.saturating_sub(i0) as f64 / (t1 - t0) as f64)
    } else {
        0.0
    };
    format!(
        "{busy:.0} % busy, loadavg {}",
        read("/proc/loadavg")
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// Mount debugfs for the run if it is not (the features are read there); returns
/// whether we did, so that `unmount_debugfs` puts it back as found.
pub fn mount_debugfs() -> bool {
    let mounted = read("/proc/mounts")
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/sys/kernel/debug"));
    !mounted
        && Command::new("mount")
            .args(["-t", "debugfs", "none", "/sys/kernel/debug"])
            .status()
            .is_ok_and(|s| s.success())
}

pub fn unmount_debugfs(ours: bool) {
    if ours {
        let _ = Command::new("umount").arg("/sys/kernel/debug").status();
    }
}

/// What the native run changed and must have put back, as read before and after.
pub fn settings() -> String {
    format!(
        "sched_features={} bpf_stats_enabled={}",
        read("/sys/kernel/debug/sched/features"),
        read("/proc/sys/kernel/bpf_stats_enabled")
    )
}

extern "C" {
    fn signal(sig: i32, handler: usize) -> usize;
}

/// bench.sh on this host's CPUs: the output as a guest's would be, the header, and the
/// errors found in what the run left behind (settings changed, a scheduler loaded).
pub fn run_plan(
    plan: &Plan,
    bins: &[PathBuf],
    runs: &str,
) -> Result<(vm::VmResult, String, usize)> {
    let header = format!("{}, {runs}", describe());
    println!("bench: {header}");
    let tests = std::env::var_os("SCX_SIS_TESTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("tests/guest"));
    let dirs: Vec<PathBuf> = bins
        .iter()
        .filter_map(|b| b.parent().map(std::path::Path::to_path_buf))
        .collect();
    let ours = mount_debugfs();
    let before = settings();
    let ran = run(&tests, &plan.args(), &dirs);
    let after = settings();
    unmount_debugfs(ours);
    let (output, code) = ran?;
    let mut errors = 0;
    if before != after {
        println!("bench-error: settings not restored: before '{before}', after '{after}'");
        errors += 1;
    } else {
        println!("bench: settings as found ({before})");
    }
    if state() != "disabled" {
        println!(
            "bench-error: sched_ext is {} after the bench, not disabled",
            state()
        );
        errors += 1;
    }
    let res = vm::VmResult {
        output,
        code,
        failure: None,
        boot_secs: 0.0,
        total_secs: 0.0,
    };
    Ok((res, header, errors))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(cpu_list("0-3,8"), [0, 1, 2, 3, 8]);
        assert_eq!(cpu_list("5"), [5]);
        assert!(cpu_list("").is_empty());
    }
}
