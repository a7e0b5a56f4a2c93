// SPDX-License-Identifier: GPL-2.0-only
//! The kernel fault reports that fail a guest test, and the console lines worth
//! showing for a failed guest.

/// Kernel reports that fail the test whose guest printed them (guests boot with
/// loglevel=5, so warnings reach the console): WARN splats, BUG reports, soft
/// lockups, hung tasks, lockdep and RCU stall reports, and a BPF scheduler's ejection.
const FAULTS: &[&str] = &[
    "WARNING:",
    "BUG:",
    "soft lockup",
    "hard LOCKUP",
    "blocked for more than",
    "possible circular locking",
    "possible recursive locking",
    "inconsistent lock state",
    "detected stalls",
    "self-detected stall",
    "disabled (runtime error)",
    "runnable task stall",
    // sched_ext names a deprecated interface once per load: none may be used
    "deprecated",
    "sched_ext: WARNING",
];

/// Known, harmless matches: (pattern, why allowed).
const FAULT_ALLOW: &[(&str, &str)] = &[
    // errors.sh ejects scx_sis on purpose to test that the loader reports it
    ("--test-runtime-error", "the deliberate error of errors.sh"),
];

/// Each kernel fault report in a guest's console, with the line after it (the
/// sched_ext reason follows its "disabled" line); empty when there is none.
pub fn kernel_faults(output: &str) -> Vec<String> {
    let v: Vec<&str> = output.lines().collect();
    let mut found = Vec::new();
    for (i, l) in v.iter().enumerate() {
        if !FAULTS.iter().any(|f| l.contains(f)) {
            continue;
        }
        let next = v.get(i + 1).copied().unwrap_or("");
        if FAULT_ALLOW
            .iter()
            .any(|(a, _)| l.contains(a) || next.contains(a))
        {
            continue;
        }
        found.push(format!("{l}\n    {next}"));
    }
    found
}

/// The console lines worth showing for a failed guest: the last few, plus any
/// panic/Oops region.
pub fn relevant_lines(output: &str) -> String {
    let v: Vec<&str> = output.lines().collect();
    let start = v
        .iter()
        .position(|l| {
            l.contains("Kernel panic") || l.contains("Oops:") || l.contains("BUG: kernel")
        })
        .map(|i| i.saturating_sub(5))
        .unwrap_or(v.len().saturating_sub(30));
    v[start..v.len().min(start + 40)].join("\n")
}
