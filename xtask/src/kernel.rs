// SPDX-License-Identifier: GPL-2.0-only
//! Finding a sched_ext-enabled guest kernel: an explicit path or version, the shared
//! copies beside the checkout, the user cache, or a download from Debian's archive.

use crate::debian::download;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A bootable kernel image and the config it was built with.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub version: String,
    pub vmlinuz: PathBuf,
    pub config: PathBuf,
}

/// The sched_ext kernel lines scx_sis supports, oldest first, each with the Debian
/// cloud build the suite tests: the newest of the line in the archive on 2026-12-01.
pub const LINES: &[(&str, &str)] = &[
    ("6.16", "6.16.12+deb13-cloud-amd64"),
    ("6.17", "6.17.13+deb13-cloud-amd64"),
    ("6.18", "6.18.15+deb13-cloud-amd64"),
    ("6.19", "6.19.14+deb13-cloud-amd64"),
    ("7.0", "7.0.13+deb13-cloud-amd64"),
    ("7.1", "7.1.13+deb13-cloud-amd64"),
    ("7.2", "7.2.13+deb14-cloud-amd64"),
    ("7.3", "7.3.4+deb13-cloud-amd64"),
];

/// Besides the newest line, the one the whole suite runs on: the LTS most users have.
pub const LTS_LINE: &str = "6.18";

/// Lines on which no sched_ext scheduler loads, and why: the suite asserts the refusal.
pub const REFUSED: &[(&str, &str)] = &[(
    "7.1",
    "Debian built its BTF with pahole < 1.26 (malformed KF_IMPLICIT_ARGS kfunc prototypes; 7.1.8 and 7.1.13 checked)",
)];

/// `cargo xtask kernels`: README's kernel table, from LINES, REFUSED and the
/// interfaces scx_sis declares (`scx_sis --kernel-interfaces`, src/kcompat.rs).
pub fn print_table() -> Result<i32> {
    crate::build_scheduler()?;
    let out = Command::new(crate::scx_sis_bin())
        .arg("--kernel-interfaces")
        .output()
        .context("running scx_sis --kernel-interfaces")?;
    anyhow::ensure!(out.status.success(), "scx_sis --kernel-interfaces failed");
    print!("{}", kernel_table(&String::from_utf8_lossy(&out.stdout)));
    Ok(0)
}

/// The table for `interfaces` (NAME\tSINCE\tWHAT\tWITHOUT lines).
pub fn kernel_table(interfaces: &str) -> String {
    let caps: Vec<Vec<&str>> = interfaces
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f.len() == 4)
        .collect();
    let mut t = format!(
        "{:<5} {:<26} {}\n",
        "line", "build tested", "lacks (what scx_sis does instead)"
    );
    for (line, ver) in LINES {
        let key = version_key(line);
        let lacks: Vec<String> = caps
            .iter()
            .filter(|c| version_key(c[1]) > key)
            .map(|c| format!("{} ({}+): {}", c[0], c[1], c[3]))
            .collect();
        let what = match refused(ver) {
            Some(why) => format!("REFUSED: no sched_ext scheduler loads; {why}"),
            None if lacks.is_empty() => "nothing".to_string(),
            None => lacks.join("; "),
        };
        t += &format!("{line:<5} {ver:<26} {what}\n");
    }
    t += "\nwhere the kernel has them:\n";
    for c in &caps {
        t += &format!("  {} ({}+): {}\n", c[0], c[1], c[2]);
    }
    t
}

/// The line of a version: "6.18.15+deb13-cloud-amd64" -> "6.18".
pub fn line_of(ver: &str) -> String {
    ver.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// Why no scheduler loads on this kernel's line, if that is so.
pub fn refused(ver: &str) -> Option<&'static str> {
    let line = line_of(ver);
    REFUSED
        .iter()
        .find(|(l, _)| *l == line)
        .map(|(_, why)| *why)
}

/// Every line's kernel: the pinned build from the shared copies or the cache, else
/// downloaded (cached); when that fails (Debian drops old builds), the newest build of
/// the same line found locally. Lines with neither come back as (line, why).
pub fn line_kernels(root: &Path) -> (Vec<Kernel>, Vec<(String, String)>) {
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for (line, ver) in LINES {
        let pinned = by_version(root, ver).and_then(|k| verify_config(&k).map(|_| k));
        match pinned {
            Ok(k) => found.push(k),
            Err(e) => match local_build_of(root, line) {
                Some(k) => {
                    eprintln!("xtask: {ver}: {e:#}; using {} instead", k.version);
                    found.push(k);
                }
                None => missing.push((line.to_string(), format!("{ver}: {e:#}"))),
            },
        }
    }
    (found, missing)
}

/// The newest build of `line` in the shared copies or the cache, if any.
fn local_build_of(root: &Path, line: &str) -> Option<Kernel> {
    [shared_dir(root), cache_dir()]
        .iter()
        .flat_map(|d| kernels_in(d))
        .filter(|k| line_of(&k.version) == line && verify_config(k).is_ok())
        .max_by_key(|k| version_key(&k.version))
}

pub fn shared_dir(root: &Path) -> PathBuf {
    root.join("../shared/kernels")
}

pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into())).join(".cache")
        });
    base.join("scx_sis/kernels")
}

/// Every `vmlinuz-VER` with a `config-VER` beside it, newest version last.
pub fn kernels_in(dir: &Path) -> Vec<Kernel> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(ver) = name.strip_prefix("vmlinuz-") {
            let config = dir.join(format!("config-{ver}"));
            if config.exists() {
                found.push(Kernel {
                    version: ver.to_string(),
                    vmlinuz: e.path(),
                    config,
                });
            }
        }
    }
    found.sort_by_key(|k| version_key(&k.version));
    found
}

pub(crate) fn version_key(v: &str) -> Vec<u64> {
    v.split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or(0))
        .collect()
}

/// Resolve `--kernel PATH|VERSION` (or the default order) to a verified kernel.
pub fn resolve(root: &Path, spec: Option<&str>) -> Result<Kernel> {
    let k = match spec.filter(|s| !s.is_empty()) {
        // the newest sched_ext cloud kernel in Debian's archive, into the user cache
        Some("download") => download(None)?,
        Some(s) if s.contains('/') || Path::new(s).exists() => from_path(Path::new(s))?,
        Some(ver) => by_version(root, ver)?,
        None => default_kernel(root)?,
    };
    verify_config(&k)?;
    Ok(k)
}

fn from_path(path: &Path) -> Result<Kernel> {
    if !path.is_file() {
        bail!("kernel image {} does not exist", path.display());
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let ver = name.strip_prefix("vmlinuz-").unwrap_or(&name).to_string();
    let dir = path.parent().unwrap_or(Path::new("."));
    let config = dir.join(format!("config-{ver}"));
    if !config.is_file() {
        bail!(
            "kernel {}: no config beside it (expected {})",
            path.display(),
            config.display()
        );
    }
    Ok(Kernel {
        version: ver,
        vmlinuz: path.to_path_buf(),
        config,
    })
}

fn by_version(root: &Path, ver: &str) -> Result<Kernel> {
    for dir in [shared_dir(root), cache_dir()] {
        if let Some(k) = kernels_in(&dir).into_iter().find(|k| k.version == ver) {
            return Ok(k);
        }
    }
    download(Some(ver))
}

fn default_kernel(root: &Path) -> Result<Kernel> {
    for dir in [shared_dir(root), cache_dir()] {
        if let Some(k) = kernels_in(&dir).pop() {
            return Ok(k);
        }
    }
    download(None)
}

/// Fails with a clear message unless the kernel was built with sched_ext and BTF.
pub fn verify_config(k: &Kernel) -> Result<()> {
    let text = std::fs::read_to_string(&k.config)
        .with_context(|| format!("reading kernel config {}", k.config.display()))?;
    for opt in ["CONFIG_SCHED_CLASS_EXT", "CONFIG_DEBUG_INFO_BTF"] {
        if !text.lines().any(|l| l.trim() == format!("{opt}=y")) {
            bail!(
                "kernel {} cannot run scx_sis: {} is not {opt}=y",
                k.version,
                k.config.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_version_sorts_last() {
        let mut v = [
            "7.3.4+deb13-cloud-amd64",
            "7.2.13+deb14-cloud-amd64",
            "7.10.1-cloud-amd64",
        ];
        v.sort_by_key(|a| version_key(a));
        assert_eq!(v[2], "7.10.1-cloud-amd64");
        assert_eq!(v[0], "7.2.13+deb14-cloud-amd64");
    }

    #[test]
    fn kernel_table_says_what_each_line_lacks() {
        let t = kernel_table("scx_bpf_dsq_peek\t7.1\tpeek\tan iterator\nbad line\n");
        let row = |l: &str| {
            t.lines()
                .find(|r| r.starts_with(&format!("{l} ")))
                .unwrap()
                .to_string()
        };
        assert!(
            row("6.16").ends_with("scx_bpf_dsq_peek (7.1+): an iterator"),
            "{t}"
        );
        assert!(row("7.0").contains("scx_bpf_dsq_peek"), "{t}");
        assert!(row("7.1").contains("REFUSED"), "{t}");
        assert!(row("7.2").ends_with(" nothing"), "{t}");
        assert_eq!(t.lines().count(), LINES.len() + 4);
        assert!(t.ends_with("  scx_bpf_dsq_peek (7.1+): peek\n"), "{t}");
    }

    #[test]
    fn lines_cover_6_16_to_7_3() {
        let lines: Vec<&str> = LINES.iter().map(|(l, _)| *l).collect();
        assert_eq!(
            lines,
            ["6.16", "6.17", "6.18", "6.19", "7.0", "7.1", "7.2", "7.3"]
        );
        for (l, v) in LINES {
            assert_eq!(line_of(v), *l);
        }
        assert!(lines.contains(&LTS_LINE));
        assert!(refused("7.1.13+deb13-cloud-amd64").is_some());
        assert!(refused("7.2.13+deb14-cloud-amd64").is_none());
    }

    #[test]
    fn config_without_sched_ext_is_refused() {
        let d = std::env::temp_dir().join(format!("xtask-kcfg-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let k = Kernel {
            version: "1.0".into(),
            vmlinuz: d.join("vmlinuz-1.0"),
            config: d.join("config-1.0"),
        };
        std::fs::write(
            &k.config,
            "CONFIG_DEBUG_INFO_BTF=y\n# CONFIG_SCHED_CLASS_EXT is not set\n",
        )
        .unwrap();
        let e = verify_config(&k).unwrap_err().to_string();
        assert!(e.contains("CONFIG_SCHED_CLASS_EXT"), "{e}");
        std::fs::write(
            &k.config,
            "CONFIG_DEBUG_INFO_BTF=y\nCONFIG_SCHED_CLASS_EXT=y\n",
        )
        .unwrap();
        assert!(verify_config(&k).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
