// SPDX-License-Identifier: GPL-2.0-only
//! The select_idle_sibling steps that can be switched off: name, default and meaning
//! are defined here once and drive `--features`, `--list-features`, `--help` and the
//! BPF flag word.

use crate::bpf_intf;
use anyhow::{bail, Result};
use std::fs;
use std::sync::OnceLock;

/// The running kernel's feature switches; a name it shares with ours is its counterpart.
const KERNEL_FEATURES: &str = "/sys/kernel/debug/sched/features";

pub struct Feature {
    pub name: &'static str,
    pub bit: u64,
    pub default: bool,
    pub desc: &'static str,
}

pub const FEATURES: &[Feature] = &[
    Feature {
        name: "WAKE_AFFINE",
        bit: bpf_intf::sis_feature_FEAT_WAKE_AFFINE as u64,
        default: true,
        desc: "wake_affine(): the waker's CPU may become target (by WA_IDLE, WA_WEIGHT); off: target = prev",
    },
    Feature {
        name: "WA_IDLE",
        bit: bpf_intf::sis_feature_FEAT_WA_IDLE as u64,
        default: true,
        desc: "wake_affine_idle(): the waker's CPU when it is idle and shares the LLC (prev if that is idle too), or on a sync wakeup when the waker runs alone there; prev when it is idle",
    },
    Feature {
        name: "WA_WEIGHT",
        bit: bpf_intf::sis_feature_FEAT_WA_WEIGHT as u64,
        default: true,
        desc: "wake_affine_weight(): when WA_IDLE decides nothing, the waker's CPU if its PELT load with the wakee (less a sync waker's) is below prev's without it",
    },
    Feature {
        name: "WA_BIAS",
        bit: bpf_intf::sis_feature_FEAT_WA_BIAS as u64,
        default: true,
        desc: "wake_affine_weight(): prev's load counts half the domain's imbalance_pct more (105% or 108%), favouring the waker's CPU",
    },
    Feature {
        name: "WAKE_WIDE",
        bit: bpf_intf::sis_feature_FEAT_WAKE_WIDE as u64,
        default: true,
        desc: "not a kernel switch: wake_wide(), always on in fair.c; a waker and wakee whose wakee_flips exceed the LLC size skip wake_affine (target = prev)",
    },
    Feature {
        name: "IDLE_CORE",
        bit: bpf_intf::sis_feature_FEAT_IDLE_CORE as u64,
        default: true,
        desc: "test_idle_cores(): with the per-LLC has_idle_cores hint set, select_idle_cpu looks for a whole idle core",
    },
    Feature {
        name: "IDLE_SMT",
        bit: bpf_intf::sis_feature_FEAT_IDLE_SMT as u64,
        default: true,
        desc: "select_idle_smt(): with no idle core, try an idle SMT sibling of prev first",
    },
    Feature {
        name: "RECENT_USED",
        bit: bpf_intf::sis_feature_FEAT_RECENT_USED as u64,
        default: true,
        desc: "p->recent_used_cpu: reuse the task's previous-but-one CPU when idle and in the target's LLC",
    },
    Feature {
        name: "SIS_UTIL",
        bit: bpf_intf::sis_feature_FEAT_SIS_UTIL as u64,
        default: true,
        desc: "bound the idle-CPU walk to nr_idle_scan CPUs from LLC utilisation; no scan at ~85% busy",
    },
    Feature {
        name: "IDLE_KICK",
        bit: bpf_intf::sis_feature_FEAT_IDLE_KICK as u64,
        default: false,
        desc: "not fair.c: a sched_ext habit; a wakeup that stacks (fallback, current_cpu, kthread, queued) waits on the LLC's shared queue and an idle CPU is kicked at once; off: it waits on target as in fair.c until target runs it or an idle balance pulls it",
    },
    Feature {
        name: "SIS_AVG_CPU",
        bit: bpf_intf::sis_feature_FEAT_SIS_AVG_CPU as u64,
        default: false,
        desc: "fair.c 4.13-5.11: skip the idle-CPU walk when the waking CPU's avg_idle / 512 < its LLC domain's avg_scan_cost + 1 (removed in 5.12)",
    },
    Feature {
        name: "SIS_PROP",
        bit: bpf_intf::sis_feature_FEAT_SIS_PROP as u64,
        default: false,
        desc: "fair.c 5.13-6.6 (4.13-5.12 had an avg_idle / 512 form): walk at most max(4, llc_weight * wake_avg_idle / avg_scan_cost) CPUs (SIS_UTIL, when on, overrides the count)",
    },
    Feature {
        name: "PLACE_LAG",
        bit: bpf_intf::sis_feature_FEAT_PLACE_LAG as u64,
        default: true,
        desc: "EEVDF place_entity(): a waking task keeps the lag it left with (inflated by (W + w) / W); off: it starts at V",
    },
    Feature {
        name: "PLACE_DEADLINE_INITIAL",
        bit: bpf_intf::sis_feature_FEAT_PLACE_DEADLINE_INITIAL as u64,
        default: true,
        desc: "EEVDF place_entity(): a new task's first deadline is half a request away",
    },
    Feature {
        name: "PLACE_REL_DEADLINE",
        bit: bpf_intf::sis_feature_FEAT_PLACE_REL_DEADLINE as u64,
        default: true,
        desc: "EEVDF: a task moved while runnable keeps its deadline relative to its vruntime; off: a new request",
    },
    Feature {
        name: "RUN_TO_PARITY",
        bit: bpf_intf::sis_feature_FEAT_RUN_TO_PARITY as u64,
        default: true,
        desc: "EEVDF set_protect_slice(): curr is not preempted before its deadline (or the shortest queued request); off: protected for the normalized base slice only",
    },
    Feature {
        name: "PREEMPT_SHORT",
        bit: bpf_intf::sis_feature_FEAT_PREEMPT_SHORT as u64,
        default: true,
        desc: "EEVDF wakeup_preempt_fair(): a wakee with a shorter request than curr's overrides curr's protection",
    },
    Feature {
        name: "WAKEUP_PREEMPTION",
        bit: bpf_intf::sis_feature_FEAT_WAKEUP_PREEMPTION as u64,
        default: true,
        desc: "wakeup_preempt_fair(): a wakee queued on a busy CPU preempts curr when EEVDF would pick it (or curr is SCHED_IDLE); off: it waits for curr's slice",
    },
    Feature {
        name: "DELAY_DEQUEUE",
        bit: bpf_intf::sis_feature_FEAT_DELAY_DEQUEUE as u64,
        default: true,
        desc: "EEVDF, emulated: a task that sleeps in debt (negative lag) has it paid down by V's progress on its rq while asleep, to 0 at most (DELAY_ZERO); off: the debt is kept",
    },
    Feature {
        name: "HRTICK",
        bit: bpf_intf::sis_feature_FEAT_HRTICK as u64,
        default: true,
        desc: "a per-CPU timer ends a request on time when tasks wait; off: at the next tick (HZ). The kernel's default is off before 7.1",
    },
    Feature {
        name: "NI_RANDOM",
        bit: bpf_intf::sis_feature_FEAT_NI_RANDOM as u64,
        default: true,
        desc: "sched_balance_newidle(): a level is balanced with probability (1 + newidle_ratio) / 1024, its recent success rate (successes per 1024 tries, halved every 512); off: every level avg_idle's budget allows. The kernel has it from 6.18.x and 7.0 (6.16 and 6.17 lack it: off there)",
    },
    Feature {
        name: "NI_RATE",
        bit: bpf_intf::sis_feature_FEAT_NI_RATE as u64,
        default: true,
        desc: "sched_balance_newidle(): newidle_ratio gains 1 per 4.2 ms its last 512 or so tries took, so a level that is rarely idle is sampled more. The kernel has it from 7.1 (off before)",
    },
];

/// Kernel switches newer than the oldest kernel we support: a kernel whose sched/features
/// lacks one predates it, and balances as with it off.
const NEWER_SWITCHES: &[&str] = &["NI_RANDOM", "NI_RATE"];

/// The table's defaults: the newest kernel's, for a feature it shares with us.
pub fn default_mask() -> u64 {
    FEATURES
        .iter()
        .filter(|f| f.default)
        .fold(0, |m, f| m | f.bit)
}

/// The defaults on this kernel: a feature the kernel's sched/features lists (SIS_UTIL,
/// the EEVDF rules, HRTICK) takes its state there, so that `sis` is compared with the
/// kernel as it runs; without debugfs, the table's. Read once: the stats line asks at
/// every interval.
pub fn kernel_default_mask() -> u64 {
    static MASK: OnceLock<u64> = OnceLock::new();
    *MASK.get_or_init(|| {
        fs::read_to_string(KERNEL_FEATURES).map_or(default_mask(), |t| with_kernel(&t))
    })
}

/// The table's defaults with the states `kernel` (sched/features' text) gives.
pub fn with_kernel(kernel: &str) -> u64 {
    let listed = |name: &str| {
        kernel
            .split_whitespace()
            .any(|t| t.trim_start_matches("NO_") == name)
    };
    let mask = kernel
        .split_whitespace()
        .fold(default_mask(), |m, tok| match switch(tok) {
            (Some(f), true) => m | f.bit,
            (Some(f), false) => m & !f.bit,
            (None, _) => m,
        });
    if kernel.trim().is_empty() {
        return mask;
    }
    FEATURES
        .iter()
        .filter(|f| NEWER_SWITCHES.contains(&f.name) && !listed(f.name))
        .fold(mask, |m, f| m & !f.bit)
}

/// One `NAME` or `NO_NAME` token (upper case): the feature it names, and on or off.
fn switch(tok: &str) -> (Option<&'static Feature>, bool) {
    let (name, on) = tok.strip_prefix("NO_").map_or((tok, true), |n| (n, false));
    (FEATURES.iter().find(|f| f.name == name), on)
}

fn valid_names() -> String {
    FEATURES
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Apply `NAME,NO_NAME,...` (the kernel's sched/features syntax) to `mask`.
pub fn parse(spec: &str, mut mask: u64) -> Result<u64> {
    for tok in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (found, on) = switch(&tok.to_ascii_uppercase());
        let Some(f) = found else {
            bail!(
                "unknown feature '{tok}' (valid: {}, each optionally NO_)",
                valid_names()
            );
        };
        mask = if on { mask | f.bit } else { mask & !f.bit };
    }
    Ok(mask)
}

/// `IDLE_CORE NO_SIS_UTIL ...`, as /sys/kernel/debug/sched/features prints them.
pub fn format(mask: u64) -> String {
    FEATURES
        .iter()
        .map(|f| {
            if mask & f.bit != 0 {
                f.name.to_string()
            } else {
                format!("NO_{}", f.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--list-features`: each feature's default on this kernel (`defaults`), its meaning.
pub fn list(defaults: u64) -> String {
    let mut s = String::new();
    for f in FEATURES {
        s += &format!(
            "{:<22} {:<4} {}\n",
            f.name,
            if defaults & f.bit != 0 { "on" } else { "off" },
            f.desc
        );
    }
    s
}

/// The features whose state differs from `base`, the defaults (`NO_IDLE_CORE,IDLE_KICK`),
/// or `default`: keeps the stats line one screen wide.
pub fn changed(mask: u64, base: u64) -> String {
    let v: Vec<String> = FEATURES
        .iter()
        .filter(|f| (mask ^ base) & f.bit != 0)
        .map(|f| {
            if mask & f.bit == 0 {
                format!("NO_{}", f.name)
            } else {
                f.name.to_string()
            }
        })
        .collect();
    if v.is_empty() {
        "default".into()
    } else {
        v.join(",")
    }
}

/// Parse the `format()` text back into a mask (unknown names are ignored).
pub fn from_text(text: &str) -> u64 {
    text.split_whitespace()
        .filter_map(|t| FEATURES.iter().find(|f| f.name == t))
        .fold(0, |m, f| m | f.bit)
}

/// For `--help`: the names with their defaults.
pub fn help() -> String {
    format!(
        "Features, kernel sched/features syntax (NAME or NO_NAME, comma-separated). Default: {}, where a feature the running kernel's sched/features lists takes its state there. See --list-features",
        format(default_mask())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_turns_features_off_and_on() {
        let all = default_mask();
        let m = parse("NO_IDLE_CORE", all).unwrap();
        assert_eq!(m & bpf_intf::sis_feature_FEAT_IDLE_CORE as u64, 0);
        assert_eq!(parse("IDLE_CORE", m).unwrap(), all);
        let m = parse("no_sis_util, NO_IDLE_SMT", all).unwrap();
        assert_eq!(
            format(m),
            "WAKE_AFFINE WA_IDLE WA_WEIGHT WA_BIAS WAKE_WIDE IDLE_CORE NO_IDLE_SMT RECENT_USED NO_SIS_UTIL NO_IDLE_KICK NO_SIS_AVG_CPU NO_SIS_PROP PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT WAKEUP_PREEMPTION DELAY_DEQUEUE HRTICK NI_RANDOM NI_RATE"
        );
        assert_eq!(from_text(&format(m)), m);
        assert_eq!(changed(m, all), "NO_IDLE_SMT,NO_SIS_UTIL");
        assert_eq!(changed(all, all), "default");
        let k = parse("IDLE_KICK", all).unwrap();
        assert_eq!(changed(k, all), "IDLE_KICK");
    }

    #[test]
    fn kernel_states_override_the_table() {
        // 6.18.15's sched/features, shortened: HRTICK off, SIS_UTIL on, no IDLE_CORE, no NI_RATE
        let k = with_kernel(
            "PLACE_LAG RUN_TO_PARITY NO_HRTICK NO_HRTICK_DL SIS_UTIL WA_IDLE NI_RANDOM",
        );
        assert_eq!(changed(k, default_mask()), "NO_HRTICK,NO_NI_RATE");
        assert_eq!(changed(default_mask(), k), "HRTICK,NI_RATE");
        let k = with_kernel("NO_SIS_UTIL SIS_PROP HRTICK NI_RANDOM NO_NI_RATE");
        assert_eq!(
            changed(k, default_mask()),
            "NO_SIS_UTIL,SIS_PROP,NO_NI_RATE"
        );
        // a kernel older than NI_RANDOM and NI_RATE balances as with them off
        let k = with_kernel("SIS_UTIL HRTICK");
        assert_eq!(changed(k, default_mask()), "NO_NI_RANDOM,NO_NI_RATE");
        assert_eq!(with_kernel(""), default_mask());
        let l = list(with_kernel("NO_HRTICK"));
        assert!(l.contains("\nHRTICK                 off  "), "{l}");
        assert!(list(default_mask()).contains("\nHRTICK                 on   "));
    }

    #[test]
    fn unknown_feature_lists_valid_ones() {
        let e = parse("NO_IDLE_CORES", default_mask())
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown feature 'NO_IDLE_CORES'"), "{e}");
        assert!(e.contains("IDLE_CORE, IDLE_SMT"), "{e}");
    }

    #[test]
    fn bits_are_distinct() {
        let mut seen = 0;
        for f in FEATURES {
            assert_eq!(seen & f.bit, 0, "{} overlaps", f.name);
            seen |= f.bit;
        }
        // today's fair.c on; the sched_ext habit and the bounds of earlier kernels off
        let off = bpf_intf::sis_feature_FEAT_IDLE_KICK
            | bpf_intf::sis_feature_FEAT_SIS_AVG_CPU
            | bpf_intf::sis_feature_FEAT_SIS_PROP;
        assert_eq!(default_mask(), seen & !(off as u64));
    }
}
