// SPDX-License-Identifier: GPL-2.0-only
//! Finding a sched_ext-enabled guest kernel: an explicit path or version, the shared
//! copies beside the checkout, the user cache, or a download from Debian's archive.

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

/// Debian suites that carry sched_ext-enabled cloud kernels (docs/PLATFORM.md).
const SUITES: &[&str] = &["trixie-backports", "sid"];

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

fn version_key(v: &str) -> Vec<u64> {
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

/// The mirror URI the machine's own apt already uses for Debian's main archive.
fn debian_mirror() -> Result<String> {
    let mut texts = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/etc/apt/sources.list.d") {
        for e in rd.flatten() {
            let p = e.path();
            let n = p.to_string_lossy();
            if n.ends_with(".sources") || n.ends_with(".list") {
                texts.push(std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    texts.push(std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default());
    for t in &texts {
        for line in t.lines() {
            let line = line.trim();
            let uris: Vec<&str> = if let Some(rest) = line.strip_prefix("URIs:") {
                rest.split_whitespace().collect()
            } else if line.starts_with("deb ") {
                line.split_whitespace()
                    .filter(|w| w.contains("://"))
                    .take(1)
                    .collect()
            } else {
                continue;
            };
            if let Some(u) = uris
                .into_iter()
                .find(|u| u.trim_end_matches('/').ends_with("/debian"))
            {
                return Ok(u.to_string());
            }
        }
    }
    bail!("no Debian mirror found in /etc/apt sources to download a kernel from")
}

/// `apt-get download` into the user cache with a private apt configuration, so the
/// system's sources are never touched.
fn download(want: Option<&str>) -> Result<Kernel> {
    let mirror = debian_mirror()?;
    let cache = cache_dir();
    let apt = cache.join("apt");
    for d in ["lists/partial", "cache/archives/partial", "etc"] {
        std::fs::create_dir_all(apt.join(d)).context("creating the private apt folders")?;
    }
    let list = apt.join("etc/sources.list");
    let body: String = SUITES
        .iter()
        .map(|s| format!("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {mirror} {s} main\n"))
        .collect();
    std::fs::write(&list, body).context("writing the private sources.list")?;
    let opts = [
        format!("-oDir::Etc::SourceList={}", list.display()),
        "-oDir::Etc::SourceParts=/nonexistent".to_string(),
        format!("-oDir::State::Lists={}", apt.join("lists").display()),
        format!("-oDir::Cache={}", apt.join("cache").display()),
    ];
    eprintln!("xtask: downloading a sched_ext kernel from {mirror} ({SUITES:?})");
    run_apt("apt-get", &opts, &["update", "-qq"])?;
    let versions = match want {
        Some(v) => vec![v.to_string()],
        None => candidate_versions(&opts)?,
    };
    let work = cache.join("extract");
    for ver in versions {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).context("creating the extract folder")?;
        let mut ok = false;
        for pkgs in [
            vec![format!("linux-binary-{ver}"), format!("linux-base-{ver}")],
            vec![format!("linux-image-{ver}")],
        ] {
            let args: Vec<&str> = std::iter::once("download")
                .chain(pkgs.iter().map(|s| s.as_str()))
                .collect();
            if run_apt_in("apt-get", &opts, &args, &work).is_ok() {
                ok = true;
                break;
            }
        }
        if !ok {
            continue;
        }
        for deb in std::fs::read_dir(&work)?.flatten() {
            if deb.path().extension().is_some_and(|e| e == "deb") {
                let st = Command::new("dpkg")
                    .args(["-x"])
                    .arg(deb.path())
                    .arg(work.join("root"))
                    .status()
                    .context("running dpkg -x")?;
                if !st.success() {
                    bail!("dpkg -x {} failed", deb.path().display());
                }
            }
        }
        let src = work.join(format!("root/usr/lib/modules/{ver}"));
        let boot = work.join("root/boot");
        let vmlinuz = [src.join("vmlinuz"), boot.join(format!("vmlinuz-{ver}"))]
            .into_iter()
            .find(|p| p.exists());
        let config = [src.join("config"), boot.join(format!("config-{ver}"))]
            .into_iter()
            .find(|p| p.exists());
        let (Some(vmlinuz), Some(config)) = (vmlinuz, config) else {
            continue;
        };
        let k = Kernel {
            version: ver.clone(),
            vmlinuz: cache.join(format!("vmlinuz-{ver}")),
            config: cache.join(format!("config-{ver}")),
        };
        std::fs::copy(&vmlinuz, &k.vmlinuz).context("caching vmlinuz")?;
        std::fs::copy(&config, &k.config).context("caching config")?;
        let _ = std::fs::remove_dir_all(&work);
        if verify_config(&k).is_ok() {
            return Ok(k);
        }
        eprintln!("xtask: {ver} lacks sched_ext, trying the next suite");
    }
    bail!("could not download a sched_ext-enabled cloud kernel from {mirror}")
}

/// Versions that `linux-image-cloud-amd64` points at in each suite, newest first.
fn candidate_versions(opts: &[String]) -> Result<Vec<String>> {
    let out = Command::new("apt-cache")
        .args(opts)
        .args(["depends", "linux-image-cloud-amd64"])
        .output()
        .context("running apt-cache depends")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut vers: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Depends:"))
        .filter_map(|d| {
            let d = d.trim();
            let i = d.find(|c: char| c.is_ascii_digit())?;
            Some(d[i..].to_string())
        })
        .filter(|v| v.ends_with("-cloud-amd64"))
        .collect();
    vers.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
    vers.dedup();
    if vers.is_empty() {
        bail!("apt-cache found no linux-image-cloud-amd64 in {SUITES:?}");
    }
    Ok(vers)
}

fn run_apt(cmd: &str, opts: &[String], args: &[&str]) -> Result<()> {
    run_apt_in(cmd, opts, args, Path::new("."))
}

fn run_apt_in(cmd: &str, opts: &[String], args: &[&str], dir: &Path) -> Result<()> {
    let st = Command::new(cmd)
        .args(opts)
        .args(args)
        .current_dir(dir)
        .status()
        .with_context(|| format!("running {cmd}"))?;
    if !st.success() {
        bail!("{cmd} {} failed", args.join(" "));
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
