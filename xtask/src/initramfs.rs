// SPDX-License-Identifier: GPL-2.0-only
//! The guest's root file system: busybox, /init running one command, the workloads
//! and binaries it needs with their libraries, packed as an uncompressed cpio.

use crate::vm::{VmConfig, MARK_RC, MARK_UP};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Host binaries every guest gets when the host has them.
pub const WORKLOADS: &[&str] = &["tbench", "tbench_srv", "hackbench", "stress-ng", "perf"];

/// A shell-quoted command line.
pub fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn init_script(cmd: &str) -> String {
    format!(
        r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/local/bin:/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
mkdir -p /boot /var/run/scx
cp /etc/kconfig /boot/config-$(uname -r)
ip link set lo up
hostname guest
echo {MARK_UP} $(uname -r) $(nproc)
cd /root
sh -c {cmd}
rc=$?
echo
echo {MARK_RC}$rc@@
sync
poweroff -f
"#,
        cmd = shell_join(&[cmd.to_string()]),
    )
}

/// Shared libraries a dynamic binary needs, as ldd lists them.
fn ldd_libs(bin: &Path) -> Result<Vec<PathBuf>> {
    let out = Command::new("ldd")
        .arg(bin)
        .output()
        .with_context(|| format!("running ldd {}", bin.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let p = match l.split_once("=>") {
                Some((_, rhs)) => rhs.split_whitespace().next()?,
                None => l.split_whitespace().next()?,
            };
            p.starts_with('/').then(|| PathBuf::from(p))
        })
        .collect())
}

fn copy_into(root: &Path, src: &Path, dst_rel: &Path) -> Result<()> {
    let dst = root.join(dst_rel.strip_prefix("/").unwrap_or(dst_rel));
    if let Some(p) = dst.parent() {
        std::fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
    }
    std::fs::copy(src, &dst)
        .with_context(|| format!("copying {} into the initramfs", src.display()))?;
    Ok(())
}

fn add_binary(root: &Path, bin: &Path) -> Result<()> {
    let name = bin.file_name().context("binary without a name")?;
    copy_into(root, bin, &Path::new("/usr/local/bin").join(name))?;
    for lib in ldd_libs(bin)? {
        copy_into(root, &lib, &lib)?;
    }
    Ok(())
}

fn copy_dir(root: &Path, src: &Path, dst: &str) -> Result<()> {
    let out = Command::new("cp")
        .arg("-rL")
        .arg(src)
        .arg(root.join(dst.trim_start_matches('/')))
        .status()
        .context("running cp -r")?;
    if !out.success() {
        bail!("copying {} into the initramfs failed", src.display());
    }
    Ok(())
}

pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// Lay out the guest's root file system and pack it as an uncompressed cpio.
pub(crate) fn build_initramfs(cfg: &VmConfig, cmd: &str, work: &Path) -> Result<PathBuf> {
    let root = work.join("root");
    let _ = std::fs::remove_dir_all(&root);
    for d in [
        "bin",
        "sbin",
        "usr/bin",
        "usr/sbin",
        "usr/local/bin",
        "proc",
        "sys",
        "dev",
        "tmp",
        "run",
        "root",
        "etc",
        "boot",
    ] {
        std::fs::create_dir_all(root.join(d)).context("creating initramfs folders")?;
    }
    let busybox = which("busybox").context("busybox not found (apt-get install busybox-static)")?;
    std::fs::copy(&busybox, root.join("bin/busybox")).context("copying busybox")?;
    std::fs::copy(&cfg.kernel.config, root.join("etc/kconfig")).context("copying kconfig")?;
    std::fs::write(
        root.join("etc/passwd"),
        "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n",
    )?;
    std::fs::write(root.join("etc/group"), "root:x:0:\nnogroup:x:65534:\n")?;
    for w in WORKLOADS {
        if let Some(p) = which(w) {
            add_binary(&root, &p)?;
        }
    }
    let client = Path::new("/usr/share/dbench/client.txt");
    if client.exists() {
        copy_into(&root, client, client)?;
    }
    for w in &cfg.with {
        if !w.is_file() {
            bail!("--with {}: no such file", w.display());
        }
        add_binary(&root, w)?;
    }
    for (src, dst) in &cfg.dirs {
        copy_dir(&root, src, dst)?;
    }
    let init = root.join("init");
    std::fs::write(&init, init_script(cmd)).context("writing /init")?;
    Command::new("chmod")
        .arg("-R")
        .arg("a+rX,u+w")
        .arg(&root)
        .status()?;
    Command::new("chmod").arg("755").arg(&init).status()?;
    let cpio = work.join("initrd.cpio");
    let st = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cd '{}' && find . | cpio -o -H newc --quiet > '{}'",
            root.display(),
            cpio.display()
        ))
        .status()
        .context("running cpio")?;
    if !st.success() {
        bail!("packing the initramfs with cpio failed");
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok(cpio)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_join_quotes() {
        let s = shell_join(&["sh".into(), "-c".into(), "echo 'a b'; exit 7".into()]);
        assert_eq!(s, r#"sh -c 'echo '\''a b'\''; exit 7'"#);
    }

    #[test]
    fn ldd_lists_libc() {
        let libs = ldd_libs(Path::new("/bin/ls")).unwrap();
        assert!(
            libs.iter().any(|p| p.to_string_lossy().contains("libc.so")),
            "{libs:?}"
        );
    }
}
