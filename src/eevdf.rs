// SPDX-License-Identifier: GPL-2.0-only
//! The kernel's EEVDF parameters the BPF side needs: sysctl_sched_base_slice (the
//! request), its normalized value (NO_RUN_TO_PARITY's quantum), TICK_NSEC and the
//! preemption model that decides what resched_curr_lazy() does.

use std::fs;

/// fair.c: normalized_sysctl_sched_base_slice, 0.7 ms since 6.15 (0.75 ms before).
pub const NORMALIZED_BASE_SLICE_NS: u64 = 700_000;
/// CONFIG_HZ of Debian's kernels, used when the running kernel's config is unreadable.
pub const DEFAULT_HZ: u64 = 250;

/// get_update_sysctl_factor() for SCHED_TUNABLESCALING_LOG: 1 + ilog2(min(cpus, 8)).
pub fn sysctl_factor(online_cpus: usize) -> u64 {
    let n = online_cpus.clamp(1, 8) as u64;
    1 + n.ilog2() as u64
}

/// The kernel's base slice: /sys/kernel/debug/sched/base_slice_ns where debugfs is
/// mounted, else the default scaled for `online_cpus` as the kernel scales it.
pub fn base_slice_ns(online_cpus: usize) -> u64 {
    fs::read_to_string("/sys/kernel/debug/sched/base_slice_ns")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|&ns: &u64| ns > 0)
        .unwrap_or(NORMALIZED_BASE_SLICE_NS * sysctl_factor(online_cpus))
}

/// CONFIG_HZ from a kernel config text.
pub fn config_hz(config: &str) -> Option<u64> {
    config
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
        .filter(|&hz: &u64| hz > 0)
}

/// TICK_NSEC of the running kernel (`release`): /boot/config-RELEASE, else DEFAULT_HZ.
pub fn tick_ns(release: &str) -> u64 {
    let hz = fs::read_to_string(format!("/boot/config-{release}"))
        .ok()
        .and_then(|c| config_hz(&c))
        .unwrap_or(DEFAULT_HZ);
    1_000_000_000 / hz
}

/// The preemption model in force: debugfs's `sched/preempt` (the one in brackets),
/// else `preempt=` on the command line, else the Kconfig choice of the running kernel
/// (`release`); None when none of them says.
pub fn preempt_model(release: &str) -> Option<String> {
    let read = |p: &str| fs::read_to_string(p).ok();
    read("/sys/kernel/debug/sched/preempt")
        .and_then(|s| model_from_debugfs(&s))
        .or_else(|| read("/proc/cmdline").and_then(|s| model_from_cmdline(&s)))
        .or_else(|| read(&format!("/boot/config-{release}")).and_then(|s| model_from_config(&s)))
}

/// `none voluntary full (lazy)`: the model in brackets.
fn model_from_debugfs(s: &str) -> Option<String> {
    s.split_whitespace()
        .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
        .map(str::to_string)
}

/// `... preempt=full ...`: the model asked for at boot.
fn model_from_cmdline(s: &str) -> Option<String> {
    s.split_whitespace()
        .find_map(|w| w.strip_prefix("preempt="))
        .map(str::to_string)
}

/// The Kconfig preemption choice, the model a PREEMPT_DYNAMIC kernel boots with.
fn model_from_config(s: &str) -> Option<String> {
    [
        ("CONFIG_PREEMPT_LAZY=y", "lazy"),
        ("CONFIG_PREEMPT=y", "full"),
        ("CONFIG_PREEMPT_VOLUNTARY=y", "voluntary"),
        ("CONFIG_PREEMPT_NONE=y", "none"),
    ]
    .iter()
    .find(|(opt, _)| s.lines().any(|l| l.trim() == *opt))
    .map(|(_, m)| m.to_string())
}

/// Does resched_curr_lazy() leave curr running to a later preemption point? In every
/// model but `full`: lazy defers to the return to user space or the tick, none and
/// voluntary do not preempt the kernel at all. Unknown: as `full`. Read at load only.
pub fn resched_is_lazy(model: Option<&str>) -> bool {
    matches!(model, Some("lazy" | "none" | "voluntary"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_slice_scales_as_the_kernel() {
        // 1 CPU: 0.7 ms; 2: 1.4; 4: 2.1; 8 and more: 2.8 (the guest's debugfs figure)
        let f: Vec<u64> = [1, 2, 3, 4, 8, 16, 255]
            .iter()
            .map(|&n| sysctl_factor(n))
            .collect();
        assert_eq!(f, [1, 2, 2, 3, 4, 4, 4]);
        assert_eq!(NORMALIZED_BASE_SLICE_NS * sysctl_factor(8), 2_800_000);
    }

    #[test]
    fn hz_from_config() {
        assert_eq!(
            config_hz("# x\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"),
            Some(250)
        );
        assert_eq!(config_hz("CONFIG_HZ_1000=y\n"), None);
    }

    #[test]
    fn preempt_model_from_each_source() {
        assert_eq!(
            model_from_debugfs("none voluntary full (lazy)\n").as_deref(),
            Some("lazy")
        );
        assert_eq!(model_from_debugfs("(full) lazy\n").as_deref(), Some("full"));
        assert_eq!(model_from_debugfs("full lazy\n"), None);
        assert_eq!(
            model_from_cmdline("BOOT_IMAGE=/vmlinuz root=/dev/vda preempt=full quiet\n").as_deref(),
            Some("full")
        );
        assert_eq!(model_from_cmdline("root=/dev/vda preempt_x=1\n"), None);
        // Debian's 6.16-7.3 cloud kernels: PREEMPT_LAZY, with PREEMPT_DYNAMIC
        let debian = "CONFIG_PREEMPT_BUILD=y\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_LAZY=y\nCONFIG_PREEMPT_DYNAMIC=y\n";
        assert_eq!(model_from_config(debian).as_deref(), Some("lazy"));
        assert_eq!(
            model_from_config("CONFIG_PREEMPT=y\nCONFIG_PREEMPT_DYNAMIC=y\n").as_deref(),
            Some("full")
        );
        assert_eq!(
            model_from_config("# CONFIG_PREEMPT_LAZY is not set\n"),
            None
        );
    }

    #[test]
    fn only_full_preempts_at_once() {
        assert!(resched_is_lazy(Some("lazy")));
        assert!(resched_is_lazy(Some("voluntary")));
        assert!(resched_is_lazy(Some("none")));
        assert!(!resched_is_lazy(Some("full")));
        assert!(!resched_is_lazy(None));
    }
}
