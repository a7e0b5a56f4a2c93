// SPDX-License-Identifier: GPL-2.0-only
//! The kernel's EEVDF parameters the BPF side needs: sysctl_sched_base_slice (the
//! request), its normalized value (NO_RUN_TO_PARITY's quantum) and TICK_NSEC.

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
}
