// SPDX-License-Identifier: GPL-2.0-only
//! A guest's CPU topology as `--topology` gives it, and the qemu it needs.

use anyhow::{bail, Context, Result};
use std::process::Command;

/// SOCKETS:CORES:THREADS, or SOCKETS:LLCS:CORES:THREADS: LLCS last-level caches per
/// socket, each of CORES cores of THREADS threads (a chiplet machine: AMD CCXs, Intel
/// sub-NUMA clusters). Several LLCs per socket need qemu 9.2 or newer (`smp-cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub sockets: u32,
    pub llcs: u32,
    pub cores: u32,
    pub threads: u32,
}

impl Topology {
    pub fn cpus(&self) -> u32 {
        self.sockets * self.cpus_per_socket()
    }

    pub fn cpus_per_socket(&self) -> u32 {
        self.llcs * self.cores * self.threads
    }

    pub fn nr_cpus(&self) -> u32 {
        self.sockets * self.cpus_per_socket()
    }

    /// Last-level caches in the whole guest.
    pub fn nr_llcs(&self) -> u32 {
        self.sockets * self.llcs
    }
}

impl std::str::FromStr for Topology {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let v: Vec<u32> = s
            .split(':')
            .map(|x| x.parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("topology '{s}' is not SOCKETS[:LLCS]:CORES:THREADS"))?;
        let t = match v[..] {
            [sockets, cores, threads] => (sockets, 1, cores, threads),
            [sockets, llcs, cores, threads] => (sockets, llcs, cores, threads),
            _ => (0, 0, 0, 0),
        };
        let topo = Topology {
            sockets: t.0,
            llcs: t.1,
            cores: t.2,
            threads: t.3,
        };
        if v.contains(&0) || topo.nr_cpus() == 0 || topo.nr_cpus() > 255 {
            return Err(format!(
                "topology '{s}' must be positive numbers S:C:T or S:L:C:T with at most 255 CPUs"
            ));
        }
        Ok(topo)
    }
}

impl std::fmt::Display for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.llcs > 1 {
            write!(
                f,
                "{}:{}:{}:{}",
                self.sockets, self.llcs, self.cores, self.threads
            )
        } else {
            write!(f, "{}:{}:{}", self.sockets, self.cores, self.threads)
        }
    }
}

/// The oldest qemu whose `-machine smp-cache` gives each module its own L3.
pub const QEMU_MIN_LLCS: (u32, u32) = (9, 2);

/// What to run when the host's qemu cannot give a guest several LLCs per socket.
pub const QEMU_INSTALL: &str =
    "apt-get install -t bookworm-backports qemu-system-x86 (or run `cargo xtask setup` as root)";

/// The host qemu's version (major, minor) from `qemu-system-x86_64 --version`.
pub fn qemu_version() -> Result<(u32, u32)> {
    let out = Command::new("qemu-system-x86_64")
        .arg("--version")
        .output()
        .context("running qemu-system-x86_64 --version (apt-get install qemu-system-x86)")?;
    parse_qemu_version(&String::from_utf8_lossy(&out.stdout))
        .context("reading the version qemu-system-x86_64 --version printed")
}

pub(crate) fn parse_qemu_version(text: &str) -> Option<(u32, u32)> {
    let v = text.split("version ").nth(1)?.split_whitespace().next()?;
    let mut it = v.split('.').map(|x| x.parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// Fail in one line, naming what to install, when the host's qemu is too old for `t`.
pub fn check_qemu_for(t: &Topology) -> Result<()> {
    if t.llcs <= 1 {
        return Ok(());
    }
    let v = qemu_version()?;
    if v < QEMU_MIN_LLCS {
        bail!(
            "topology {t}: {} LLCs per socket need qemu {}.{} or newer, this host has {}.{}: {QEMU_INSTALL}",
            t.llcs,
            QEMU_MIN_LLCS.0,
            QEMU_MIN_LLCS.1,
            v.0,
            v.1
        );
    }
    Ok(())
}
