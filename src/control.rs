// SPDX-License-Identifier: GPL-2.0-only
//! Live feature switching. The loader pins the BPF `ctl` map (one `struct sis_ctl`)
//! at /sys/fs/bpf/scx_sis/ctl, mode 0600 in a root-owned 0700 folder (checked by
//! guard::secure_dir): only root can open it. `scx_sis --set` opens the pin and
//! rewrites the feature word under guard::set_lock(), so concurrent calls and a
//! restart (which carries the word over) never lose a change; the BPF side
//! reads it at every wakeup, so the change applies to the next one, without a reload.

use crate::bpf_intf::{self, sis_ctl};
use crate::features;
use crate::guard;
use anyhow::{bail, Context, Result};
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use std::os::unix::fs::PermissionsExt;

pub const PIN_DIR: &str = "/sys/fs/bpf/scx_sis";
pub const CTL_PIN: &str = "/sys/fs/bpf/scx_sis/ctl";
/// The task storage map, for `scx_sis --pelt` (src/pelt.rs).
pub const TASKS_PIN: &str = crate::pelt::TASKS_PIN;

pub fn read(map: &impl MapCore) -> Result<sis_ctl> {
    let v = map
        .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
        .context("reading the ctl map")?
        .context("ctl map has no entry 0")?;
    bpf_intf::from_bytes(&v).with_context(|| {
        format!(
            "ctl map value is {} bytes, expected {}",
            v.len(),
            std::mem::size_of::<sis_ctl>()
        )
    })
}

pub fn write(map: &impl MapCore, ctl: &sis_ctl) -> Result<()> {
    map.update(&0u32.to_ne_bytes(), bpf_intf::as_bytes(ctl), MapFlags::ANY)
        .context("writing the ctl map")
}

/// Removes the pin when the loader exits (the root-only folder stays).
pub struct Pin;

impl Pin {
    /// Pin the ctl map, replacing a stale pin a killed loader left behind (the
    /// caller holds the instance lock, so no other scx_sis owns it).
    pub fn create(ctl: &mut libbpf_rs::MapMut, tasks: &mut libbpf_rs::MapMut) -> Result<Self> {
        // checked before anything is done in it: no symlink, root's, 0700
        let _dir = guard::secure_dir(PIN_DIR).context("the ctl pin folder (is bpffs mounted?)")?;
        pin_at(ctl, CTL_PIN, "ctl")?;
        pin_at(tasks, TASKS_PIN, "task storage")?;
        Ok(Pin)
    }
}

fn pin_at(map: &mut libbpf_rs::MapMut, path: &str, what: &str) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        std::fs::remove_file(path).with_context(|| format!("removing the stale {path}"))?;
    }
    map.pin(path)
        .with_context(|| format!("pinning the {what} map at {path}"))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("restricting {path} to root"))
}

impl Drop for Pin {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(CTL_PIN);
        let _ = std::fs::remove_file(TASKS_PIN);
    }
}

pub fn running_sis() -> Result<()> {
    let state = std::fs::read_to_string("/sys/kernel/sched_ext/state")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "missing".into());
    let ops = std::fs::read_to_string("/sys/kernel/sched_ext/root/ops").unwrap_or_default();
    if state != "enabled" || !ops.trim().starts_with("sis") {
        bail!(
            "no running scx_sis to change (sched_ext state {state}{})",
            if ops.trim().is_empty() {
                String::new()
            } else {
                format!(", scheduler {}", ops.trim())
            }
        );
    }
    Ok(())
}

/// `scx_sis --set [SPEC]`: print the running instance's features, or change them.
pub fn set(spec: &str) -> Result<()> {
    if spec.trim().is_empty() {
        running_sis()?;
    } else {
        // Validate before touching anything.
        features::parse(spec, 0)?;
        running_sis()?;
    }
    let map = open_pin()?;
    let cur = read(&map)?;
    if spec.trim().is_empty() {
        println!("{}", features::format(cur.features));
        return Ok(());
    }
    // Read-modify-write under the set lock, on the pin as it is once we hold it (a
    // restart re-pins a new map, carrying the word over, under the same lock).
    let _lock = guard::set_lock()?;
    running_sis()?;
    let map = open_pin()?;
    let cur = read(&map)?;
    let new = sis_ctl {
        features: features::parse(spec, cur.features)?,
        generation: cur.generation.wrapping_add(1),
    };
    write(&map, &new)?;
    println!(
        "{} -> {}",
        features::format(cur.features),
        features::format(new.features)
    );
    Ok(())
}

fn open_pin() -> Result<MapHandle> {
    MapHandle::from_pinned_path(CTL_PIN)
        .map_err(|e| pin_error(CTL_PIN, "read or change the features of", e))
}

/// The error for a pin of the running scx_sis that would not open: root's, or gone.
pub fn pin_error(pin: &str, what: &str, e: libbpf_rs::Error) -> anyhow::Error {
    let msg = e.to_string();
    if msg.contains("ermission") || msg.contains("EACCES") || msg.contains("EPERM") {
        anyhow::anyhow!("permission denied: only root can {what} a running scx_sis ({pin})")
    } else {
        anyhow::anyhow!("cannot open {pin} of the running scx_sis: {msg}")
    }
}
