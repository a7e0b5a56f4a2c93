// SPDX-License-Identifier: GPL-2.0-only
//! The stats socket is root's alone: scx_stats' server is created under umask 077
//! (folder 0700, socket 0600), and the loader refuses to start when a component of
//! its path is a symlink, belongs to another user or is a folder others may write
//! to, so nobody can redirect or pre-create it. Unprivileged users can neither read stats nor talk to the server.

use crate::stats::{self, Metrics};
use anyhow::{bail, Context, Result};
use scx_stats::prelude::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

pub const STATS_SOCK: &str = "/var/run/scx/root/stats";
const COMPONENTS: [&str; 3] = ["/var/run/scx", "/var/run/scx/root", STATS_SOCK];

/// Refuse a socket path an unprivileged user could have prepared.
pub fn check_path() -> Result<()> {
    for p in COMPONENTS {
        let Ok(m) = std::fs::symlink_metadata(p) else {
            continue;
        };
        if m.file_type().is_symlink() {
            bail!("refusing to start: {p} is a symlink");
        }
        if m.uid() != 0 {
            bail!(
                "refusing to start: {p} belongs to uid {}, not root",
                m.uid()
            );
        }
        if m.is_dir() && m.mode() & 0o022 != 0 {
            bail!(
                "refusing to start: {p} is writable by group or others (mode {:o})",
                m.mode() & 0o7777
            );
        }
    }
    Ok(())
}

/// Launch the stats server with a socket only root can connect to.
pub fn launch() -> Result<StatsServer<(), Metrics>> {
    check_path()?;
    // SAFETY: umask() only changes this process's file mode mask.
    let old = unsafe { libc::umask(0o077) };
    let server = StatsServer::new(stats::server_data()).launch();
    unsafe { libc::umask(old) };
    let server = server.context("starting the stats server")?;
    std::fs::set_permissions(STATS_SOCK, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("restricting {STATS_SOCK} to root"))?;
    Ok(server)
}

/// For `--monitor`: a clear answer when there is nothing to monitor, or when the
/// socket is there but not ours to read.
pub fn check_access() -> Result<()> {
    use std::io::ErrorKind::*;
    match std::os::unix::net::UnixStream::connect(STATS_SOCK) {
        Err(e) if e.kind() == PermissionDenied => bail!(
            "permission denied: only root can read the stats of a running scx_sis ({STATS_SOCK})"
        ),
        Err(e) if matches!(e.kind(), NotFound | ConnectionRefused) => {
            bail!("no running scx_sis to monitor ({STATS_SOCK}: {e})")
        }
        Err(e) => Err(e).with_context(|| format!("connecting to {STATS_SOCK}")),
        Ok(_) => Ok(()),
    }
}
