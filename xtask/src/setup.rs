// SPDX-License-Identifier: GPL-2.0-only
//! The Debian packages scx_sis needs to build and to boot its test guests.

use anyhow::{bail, Context, Result};
use std::process::Command;

pub const PACKAGES: &[&str] = &[
    "qemu-system-x86",
    "busybox-static",
    "cpio",
    "clang-19",
    "llvm-19",
    "libelf-dev",
    "zlib1g-dev",
    "libzstd-dev",
    "pkg-config",
    "dbench",
    "rt-tests",
    "stress-ng",
    "linux-perf",
];

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

/// Install what is missing when root; otherwise print the exact command and fail.
pub fn ensure() -> Result<()> {
    let missing: Vec<&str> = PACKAGES.iter().copied().filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let line = format!("apt-get install -y {}", missing.join(" "));
    if unsafe { libc_geteuid() } != 0 {
        bail!("missing packages; run as root:\n  {line}");
    }
    eprintln!("xtask: installing {}", missing.join(" "));
    let env = [("DEBIAN_FRONTEND", "noninteractive")];
    let st = Command::new("apt-get")
        .args(["update", "-qq"])
        .envs(env)
        .status()
        .context("running apt-get update")?;
    if !st.success() {
        bail!("apt-get update failed");
    }
    let st = Command::new("apt-get")
        .args(["install", "-y", "-qq"])
        .args(&missing)
        .envs(env)
        .status()
        .context("running apt-get install")?;
    if !st.success() {
        bail!("{line} failed");
    }
    Ok(())
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}
