// SPDX-License-Identifier: GPL-2.0-only
//! The kernel interfaces scx_sis uses where the running kernel has them, and what it
//! does where it does not: declared once here, printed at start-up and in status.json,
//! and checked against README's kernel table (`cargo xtask doc --check`).

use anyhow::{Context, Result};

/// One interface newer than the oldest supported kernel line (6.16).
pub struct Cap {
    pub name: &'static str,
    /// The first kernel line that has it.
    pub since: (u32, u32),
    /// What scx_sis uses it for.
    pub what: &'static str,
    /// What scx_sis does on a kernel without it.
    pub without: &'static str,
    /// The kernel symbols (BTF names), any of which present is the test.
    ksyms: &'static [&'static str],
    /// Also require the line `since` (the BPF side gates on the version too).
    by_version: bool,
}

#[cfg(test)]
pub const SET_SLICE: usize = 0;
pub const REENQ_ANYWHERE: usize = 1;
#[cfg(test)]
pub const DSQ_PEEK: usize = 2;

pub const CAPS: &[Cap] = &[
    Cap {
        name: "scx_bpf_task_set_slice",
        since: (6, 19),
        what: "scx_bpf_task_set_slice() / scx_bpf_task_set_dsq_vtime() set a task's slice and vtime (7.1 and 7.2 log a deprecation for direct writes)",
        without: "writes p->scx.slice and p->scx.dsq_vtime directly",
        ksyms: &["scx_bpf_task_set_slice"],
        by_version: false,
    },
    Cap {
        name: "reenqueue_from_sched_switch",
        since: (6, 19),
        what: "a sched_switch tracepoint re-enqueues a CPU's local tasks when an RT or deadline task takes it, and wakes an idle CPU to pull the task it preempted (ops.cpu_release is deprecated from 6.19)",
        without: "ops.cpu_release does that re-enqueue; ops.stopping clears the slice of the task an RT task preempts, so that it goes through ops.enqueue as on 6.19, and wakes an idle CPU to pull it",
        // the compat wrapper prefers the generic re-enqueue (7.1+) where it exists
        ksyms: &["scx_bpf_reenqueue_local___v2", "scx_bpf_dsq_reenq"],
        by_version: false,
    },
    Cap {
        name: "scx_bpf_dsq_peek",
        since: (7, 1),
        what: "scx_bpf_dsq_peek() reads a queue's head without locking (6.19 and 7.0 have it, but it can miss a FIFO queue's head)",
        without: "reads a queue's head through a DSQ iterator",
        ksyms: &["scx_bpf_dsq_peek"],
        by_version: true,
    },
];

/// The running kernel's release and (major, minor).
pub fn release() -> Result<(String, (u32, u32))> {
    let rel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .context("reading /proc/sys/kernel/osrelease")?;
    let rel = rel.trim().to_string();
    let line = parse_line(&rel).with_context(|| format!("kernel release '{rel}'"))?;
    Ok((rel, line))
}

/// "6.18.15+deb13-cloud-amd64" -> (6, 18).
pub fn parse_line(rel: &str) -> Result<(u32, u32)> {
    let mut it = rel.split(|c: char| !c.is_ascii_digit());
    let major = it.next().and_then(|s| s.parse().ok());
    let minor = it.next().and_then(|s| s.parse().ok());
    match (major, minor) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => anyhow::bail!("no MAJOR.MINOR in the kernel release"),
    }
}

/// Which of CAPS the running kernel has, in CAPS's order.
pub fn probe() -> Result<Vec<bool>> {
    let (_, line) = release()?;
    CAPS.iter()
        .map(|c| {
            let mut sym = false;
            for k in c.ksyms {
                sym |= scx_utils::compat::ksym_exists(k)
                    .with_context(|| format!("looking up {k} in the kernel's BTF"))?;
            }
            Ok(sym && (!c.by_version || line >= c.since))
        })
        .collect()
}

/// The start-up line's account of what this kernel lacks.
pub fn describe(rel: &str, have: &[bool]) -> String {
    let missing: Vec<String> = CAPS
        .iter()
        .zip(have)
        .filter(|(_, h)| !**h)
        .map(|(c, _)| {
            format!(
                "no {} ({}.{}+): {}",
                c.name, c.since.0, c.since.1, c.without
            )
        })
        .collect();
    if missing.is_empty() {
        format!("kernel {rel}: every interface scx_sis uses is present")
    } else {
        format!("kernel {rel}: {}", missing.join("; "))
    }
}

/// `--kernel-interfaces`: one tab-separated line per interface.
pub fn table() -> String {
    CAPS.iter()
        .map(|c| {
            format!(
                "{}\t{}.{}\t{}\t{}\n",
                c.name, c.since.0, c.since.1, c.what, c.without
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn sis_pc_in_task(pc: u32, new_layout: i32) -> i32;
    }

    /// sis.bpf.h's in_task() against include/linux/preempt.h's two layouts: to 7.2 a
    /// hard irq at bit 16 and an NMI at 20; in 7.3 a count of hard irq disabling at 16,
    /// a hard irq at 24 and an NMI at 28.
    #[test]
    fn in_task_reads_both_preempt_count_layouts() {
        let in_task = |pc: u32, new: bool| unsafe { sis_pc_in_task(pc, new as i32) } != 0;
        for new in [false, true] {
            assert!(
                in_task(0, new) && in_task(2, new),
                "task context, layout {new}"
            );
            assert!(!in_task(1 << 8, new), "serving a softirq, layout {new}");
        }
        assert!(!in_task(1 << 16, false), "a hard irq to 7.2");
        assert!(!in_task(1 << 24, true), "a hard irq in 7.3");
        assert!(in_task(1 << 16, true), "7.3: irqs disabled in task context");
        assert!(!in_task((1 << 20) | (1 << 16), false), "an NMI to 7.2");
        assert!(!in_task((1 << 28) | (1 << 24), true), "an NMI in 7.3");
    }

    #[test]
    fn lines_parse() {
        assert_eq!(parse_line("6.18.15+deb13-cloud-amd64").unwrap(), (6, 18));
        assert_eq!(parse_line("7.3.4").unwrap(), (7, 3));
        assert!(parse_line("linux").is_err());
    }

    #[test]
    fn description_names_what_is_missing() {
        let d = describe("6.18.15", &[false, false, false]);
        assert!(
            d.contains("no scx_bpf_task_set_slice (6.19+): writes p->scx.slice"),
            "{d}"
        );
        assert!(d.contains("no scx_bpf_dsq_peek (7.1+)"), "{d}");
        assert_eq!(
            describe("7.3.4", &[true, true, true]),
            "kernel 7.3.4: every interface scx_sis uses is present"
        );
        assert_eq!(CAPS[SET_SLICE].name, "scx_bpf_task_set_slice");
        assert_eq!(
            CAPS[REENQ_ANYWHERE].ksyms[0],
            "scx_bpf_reenqueue_local___v2"
        );
        assert!(CAPS[DSQ_PEEK].by_version && !CAPS[SET_SLICE].by_version);
        assert_eq!(CAPS[DSQ_PEEK].since, (7, 1));
    }
}
