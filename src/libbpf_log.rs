// SPDX-License-Identifier: GPL-2.0-only
//! libbpf's messages: kept in memory so a failed load can show the verifier's
//! verdict, and echoed to stderr with -v.

use libbpf_rs::PrintLevel;
use std::sync::Mutex;

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
static VERBOSE: Mutex<bool> = Mutex::new(false);

fn on_print(_level: PrintLevel, msg: String) {
    if *VERBOSE.lock().unwrap() {
        eprint!("{msg}");
    }
    let mut log = LOG.lock().unwrap();
    log.extend(msg.lines().map(str::to_string));
    let len = log.len();
    if len > 20_000 {
        log.drain(..len - 10_000);
    }
}

pub fn capture(verbose: bool) {
    *VERBOSE.lock().unwrap() = verbose;
    libbpf_rs::set_print(Some((PrintLevel::Debug, on_print)));
}

/// The last `n` lines of the last program load log libbpf printed.
pub fn verifier_tail(n: usize) -> Vec<String> {
    let log = LOG.lock().unwrap();
    tail_of_last_load_log(&log, n)
}

fn tail_of_last_load_log(log: &[String], n: usize) -> Vec<String> {
    let Some(begin) = log.iter().rposition(|l| l.contains("BEGIN PROG LOAD LOG")) else {
        return Vec::new();
    };
    let end = log[begin..]
        .iter()
        .position(|l| l.contains("END PROG LOAD LOG"))
        .map(|i| begin + i)
        .unwrap_or(log.len());
    let body: Vec<&String> = log[begin + 1..end]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .collect();
    // Newer verifiers append a "Causal path:" explanation; the verdict is above it,
    // right after the last instruction the verifier looked at.
    let verdict = body
        .iter()
        .position(|l| l.trim_start().starts_with("Causal path:"))
        .unwrap_or(body.len());
    let is_insn = |l: &str| {
        let t = l.trim_start();
        t.split_once(": (")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let start = body[..verdict]
        .iter()
        .rposition(|l| is_insn(l))
        .unwrap_or(verdict.saturating_sub(n));
    let mut out: Vec<String> = body[start..verdict.min(start + n)]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(p) = body[verdict..].iter().find(|l| l.starts_with("processed ")) {
        out.push(p.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_last_load_log() {
        let log: Vec<String> = [
            "libbpf: prog 'a': BEGIN PROG LOAD LOG --",
            "old",
            "-- END PROG LOAD LOG --",
            "libbpf: prog 'b': -- BEGIN PROG LOAD LOG --",
            "0: R1=ctx()",
            "7: (bf) r1 = (s32)r7",
            "8: (61) r6 = *(u32 *)(r1 +0)",
            "",
            "R2 invalid mem access 'scalar'",
            "Causal path:",
            "  sis_select_cpu @ main.bpf.c:364:5",
            "processed 8 insns (limit 1000000)",
            "-- END PROG LOAD LOG --",
            "libbpf: failed to load",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            tail_of_last_load_log(&log, 10),
            vec![
                "8: (61) r6 = *(u32 *)(r1 +0)",
                "R2 invalid mem access 'scalar'",
                "processed 8 insns (limit 1000000)"
            ]
        );
        assert_eq!(tail_of_last_load_log(&log, 1).len(), 2);
        assert!(tail_of_last_load_log(&log[..1], 5).is_empty());
    }
}
