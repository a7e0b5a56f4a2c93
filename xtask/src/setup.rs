// SPDX-License-Identifier: GPL-2.0-only
//! The Debian packages scx_sis needs to build and to boot its test guests.

use crate::vm::{self, QEMU_MIN_LLCS};
use anyhow::{bail, Context, Result};
use std::process::Command;

pub const PACKAGES: &[&str] = &[
    "qemu-system-x86",
    "busybox-static",
    "cpio",
    "zstd",
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

/// Where bookworm gets a qemu that can give a guest several LLCs per socket.
const BACKPORTS: &str = "bookworm-backports";
const BACKPORTS_SOURCE: &str = "/etc/apt/sources.list.d/scx-sis-bookworm-backports.sources";

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

/// The host's qemu cannot give a guest several LLCs (missing, or older than 9.2).
fn qemu_too_old() -> bool {
    vm::qemu_version().map_or(true, |v| v < QEMU_MIN_LLCS)
}

fn codename() -> String {
    std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .unwrap_or("")
        .trim_matches('"')
        .to_string()
}

fn apt(args: &[&str]) -> Result<()> {
    let st = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .with_context(|| format!("running apt-get {}", args.join(" ")))?;
    if !st.success() {
        bail!("apt-get {} failed", args.join(" "));
    }
    Ok(())
}

/// bookworm's own qemu is 7.2: add bookworm-backports (qemu 10) to apt's sources
/// unless a source names it already.
fn add_backports() -> Result<()> {
    let listed = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "grep -rqs '{BACKPORTS}' /etc/apt/sources.list /etc/apt/sources.list.d"
        ))
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if listed {
        return Ok(());
    }
    let text = format!(
        "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: {BACKPORTS}\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    );
    std::fs::write(BACKPORTS_SOURCE, text).with_context(|| format!("writing {BACKPORTS_SOURCE}"))
}

/// Install what is missing when root; otherwise print the exact command and fail.
/// qemu comes from bookworm-backports on bookworm: guests with several LLCs per
/// socket need 9.2 or newer (bookworm has 7.2; trixie's 10.0 needs nothing extra).
pub fn ensure() -> Result<()> {
    let mut missing: Vec<&str> = PACKAGES.iter().copied().filter(|p| !installed(p)).collect();
    let backports = codename() == "bookworm" && qemu_too_old();
    if backports {
        missing.retain(|p| *p != "qemu-system-x86");
    }
    if missing.is_empty() && !backports {
        return Ok(());
    }
    let mut lines = Vec::new();
    if !missing.is_empty() {
        lines.push(format!("apt-get install -y {}", missing.join(" ")));
    }
    if backports {
        lines.push(vm::QEMU_INSTALL.to_string());
    }
    if !is_root() {
        bail!("missing packages; run as root:\n  {}", lines.join("\n  "));
    }
    if backports {
        add_backports()?;
    }
    eprintln!("xtask: {}", lines.join("; "));
    apt(&["update", "-qq"])?;
    if !missing.is_empty() {
        let mut args = vec!["install", "-y", "-qq"];
        args.extend(&missing);
        apt(&args)?;
    }
    if backports {
        apt(&["install", "-y", "-qq", "-t", BACKPORTS, "qemu-system-x86"])?;
    }
    if qemu_too_old() {
        bail!(
            "qemu is still older than {}.{} after the install: {}",
            QEMU_MIN_LLCS.0,
            QEMU_MIN_LLCS.1,
            vm::QEMU_INSTALL
        );
    }
    Ok(())
}

/// Whether this process runs as root (it may install packages, load schedulers).
pub fn is_root() -> bool {
    unsafe { libc_geteuid() == 0 }
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}
