// SPDX-License-Identifier: GPL-2.0-only
//! One VM test: boot its guest, read its `ok`/`not ok` lines, its plan and its kernel log.

use super::{Tally, VmTest};
use crate::kernel::Kernel;
use crate::vm::{self, Topology};
use crate::{repo_root, scx_sis_bin};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A quiet single-threaded-TCG guest with scx_sis, sis-probe and tests/guest/.
pub(crate) fn test_guest(
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
        numa_distance: None,
        mem_mib: 2048,
        with: vec![scx_sis_bin(), probe.to_path_buf()],
        dirs: vec![(repo_root().join("tests/guest"), "/tests".into())],
        timeout: Duration::from_secs(timeout_s),
        idle_timeout: Duration::from_secs(idle_s),
        tcg_multi: false,
        icount: false,
        stream: false,
    }
}

/// A suite guest silent this long has hung. Single-threaded TCG runs every vCPU on one
/// host thread, so a 16- or 64-vCPU guest on a busy 2-core host can spend minutes in
/// one step (a scheduler load beside pinned spinners, 200 timer wakeups): 120 s was
/// passed that way while no guest had hung. Each test's own timeout still bounds it.
const SILENCE_S: u64 = 240;

/// A hung guest's reason, its last test lines and the kernel's dump (each CPU, the
/// tasks not idle), as `  | ` lines in the suite's log; the whole console goes to
/// target/hangs/NAME.log. Returns the kernel's fault reports from before the dump.
fn print_hang(name: &str, r: &vm::VmResult, again: bool) -> Vec<String> {
    let why = r.failure.clone().unwrap_or_default();
    let then = if again { "; running it once more" } else { "" };
    println!("# {name}: {why} ({:.0}s){then}", r.total_secs);
    let dir = crate::repo_root().join("target/hangs");
    let file = dir.join(format!("{}.log", name.replace('/', "_")));
    match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, &r.output)) {
        Ok(()) => println!("  | whole console: {}", file.display()),
        Err(e) => println!("  | could not write {}: {e}", file.display()),
    }
    let out: Vec<&str> = r.output.lines().collect();
    let dump = out
        .iter()
        .position(|l| *l == vm::HANG_DUMP)
        .unwrap_or(out.len());
    let keep = |l: &&&str| {
        let task = l.contains("task:") && !l.contains("state:I");
        task || ["Kernel panic", "CPU:", "RIP:", "# vCPUs", vm::HANG_DUMP]
            .iter()
            .any(|k| l.contains(k))
    };
    let shown: Vec<&&str> = out[dump.saturating_sub(8)..dump]
        .iter()
        .chain(out[dump..].iter().filter(keep).take(400))
        .collect();
    println!(
        "{}",
        shown
            .iter()
            .map(|l| format!("  | {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    crate::faults::kernel_faults(&out[..dump].join("\n"))
}

/// The guest stopped printing before its init ran (no `MARK_UP`).
fn stalled_before_init(r: &vm::VmResult) -> bool {
    r.code == vm::EXIT_NO_BOOT && r.boot_secs == 0.0 && r.failure.is_some()
}

pub(crate) fn run_vm_test(t: &VmTest, probe: &std::path::Path, tally: &Mutex<Tally>) {
    let start = Instant::now();
    let topology = t.topo.parse::<Topology>().expect("valid test topology");
    let mut cfg = test_guest(&t.kernel, topology, t.numa, probe, t.timeout, SILENCE_S);
    cfg.numa_distance = t.numa_distance;
    if let Some(n) = t.maxcpus {
        cfg.kernel_args = format!("maxcpus={n}");
    }
    // a `native` bench test runs this very xtask inside the guest, as on a user's host
    if t.cmd.contains("/tests/native_bench") {
        match std::env::current_exe() {
            Ok(me) => cfg.with.push(me),
            Err(e) => eprintln!("xtask: cannot locate itself for {}: {e}", t.name),
        }
    }
    let mut res = vm::run(&cfg, &t.cmd);
    // A guest that never reached init ran none of our code: qemu TCG stalls now and
    // then while it brings up its vCPUs (seen at 64 and at 8). Boot it once more, and say
    // so with where the vCPUs were.
    if let Ok(r) = &res {
        if stalled_before_init(r) && start.elapsed() < cfg.timeout / 2 {
            let why = r.failure.clone().unwrap_or_default();
            println!(
                "# {}: {why} after {:.0}s; booting the guest again",
                t.name, r.total_secs
            );
            for l in r.output.lines().filter(|l| l.starts_with("# vCPUs")) {
                println!("  {l}");
            }
            tally.lock().unwrap().rebooted.push(t.name.clone());
            cfg.timeout = cfg.timeout.saturating_sub(start.elapsed());
            res = vm::run(&cfg, &t.cmd);
        }
    }
    // A guest silent for SILENCE_S after init has hung (cause not known: the dump below
    // says where every task was). Run the test once more with its whole budget; the hang
    // is printed here and named in the summary.
    let mut hung_faults = None;
    if let Ok(r) = &res {
        if r.code == vm::EXIT_HANG {
            hung_faults = Some(print_hang(&t.name, r, true));
            tally.lock().unwrap().hung.push(t.name.clone());
            cfg.timeout = Duration::from_secs(t.timeout);
            res = vm::run(&cfg, &t.cmd);
            if let Some(r) = res.as_ref().ok().filter(|r| r.code == vm::EXIT_HANG) {
                print_hang(&t.name, r, false);
            }
        }
    }
    let mut tally = tally.lock().unwrap();
    // what the kernel reported before the hang counts, whatever the second run did
    if let Some(faults) = hung_faults {
        tally.check(
            &format!("{}/hung-run-kernel-log", t.name),
            faults.is_empty(),
            || {
                format!(
                    "{} kernel fault report(s) before the hang:\n{}",
                    faults.len(),
                    faults.join("\n")
                )
            },
        );
    }
    let took = start.elapsed().as_secs_f64();
    println!(
        "# {} ({}, {}{}, {took:.0}s of its {}s budget, {:.0}%)",
        t.name,
        t.kernel.version,
        t.topo,
        match (t.numa, t.numa_distance) {
            (true, Some(d)) => format!(" numa, distance {d}"),
            (true, None) => " numa".into(),
            _ => String::new(),
        },
        t.timeout,
        100.0 * took / t.timeout as f64
    );
    if took > t.timeout as f64 / 2.0 {
        tally
            .slow
            .push(format!("{} ({took:.0}s of {}s)", t.name, t.timeout));
    }
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
pub(crate) fn json_interval_error(line: &str) -> Option<String> {
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
pub(crate) fn guest_context(output: &str, line: &str) -> String {
    let v: Vec<&str> = output.lines().collect();
    let i = v.iter().position(|l| *l == line).unwrap_or(0);
    v[i.saturating_sub(12)..i].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(code: i32, boot_secs: f64, failure: Option<&str>) -> vm::VmResult {
        vm::VmResult {
            code,
            output: String::new(),
            failure: failure.map(str::to_string),
            boot_secs,
            total_secs: 120.0,
        }
    }

    #[test]
    fn a_hang_reports_the_faults_before_its_dump_only() {
        let mut r = result(vm::EXIT_HANG, 20.0, Some("guest hung"));
        r.output = [
            "ok first",
            "[ 9.0] WARNING: CPU: 1 PID: 5 at kernel/sched/ext.c:100 x",
            "[ 9.0] Modules linked in:",
            "# vCPUs at the hang, sample 1: cpu0 ffffffff81000000 HLT=1",
            vm::HANG_DUMP,
            "[ 9.1] Kernel panic - not syncing: NMI: Not continuing",
            "[ 9.2] WARNING: CPU: 0 PID: 0 at kernel/panic.c:1 y",
        ]
        .join("\n");
        let faults = print_hang("unit-hang", &r, true);
        assert_eq!(faults.len(), 1);
        assert!(faults[0].contains("ext.c:100"));
    }

    #[test]
    fn only_a_guest_that_never_reached_init_is_booted_again() {
        let stall = "guest did not boot: no console output";
        assert!(stalled_before_init(&result(
            vm::EXIT_NO_BOOT,
            0.0,
            Some(stall)
        )));
        let hang = "guest hung: no console output after boot";
        assert!(!stalled_before_init(&result(
            vm::EXIT_HANG,
            20.0,
            Some(hang)
        )));
        assert!(!stalled_before_init(&result(
            vm::EXIT_NO_BOOT,
            20.0,
            Some("stopped")
        )));
        assert!(!stalled_before_init(&result(1, 20.0, None)));
    }
}
