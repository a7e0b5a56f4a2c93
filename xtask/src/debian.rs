// SPDX-License-Identifier: GPL-2.0-only
//! A sched_ext cloud kernel from Debian's archive: apt, through a private configuration
//! that leaves the machine's sources alone, unpacks it into the user cache, and its
//! config is written from the image when the package lacks one.

use crate::kernel::{cache_dir, verify_config, version_key, Kernel};
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::Command;

/// Debian suites that carry sched_ext-enabled cloud kernels (docs/PLATFORM.md).
const SUITES: &[&str] = &["trixie-backports", "sid"];

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
pub(crate) fn download(want: Option<&str>) -> Result<Kernel> {
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
    // one index update per run, however many kernels it downloads
    static UPDATED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    eprintln!(
        "xtask: downloading sched_ext kernel {} from {mirror} ({SUITES:?})",
        want.unwrap_or("(newest)")
    );
    if !UPDATED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        run_apt("apt-get", &opts, &["update", "-qq"])?;
    }
    let versions = match want {
        Some(v) => vec![v.to_string()],
        None => candidate_versions(&opts)?,
    };
    for ver in versions {
        let Some(k) = fetch_version(&opts, &cache, &ver)? else {
            continue;
        };
        if verify_config(&k).is_ok() {
            return Ok(k);
        }
        eprintln!("xtask: {ver} lacks sched_ext, trying the next suite");
    }
    bail!("could not download a sched_ext-enabled cloud kernel from {mirror}")
}

/// Download one version into the cache: `linux-binary` + `linux-base` (6.19+),
/// `linux-image` (up to 6.18, both files in one package), or `linux-binary` alone
/// when the archive no longer has that version's `linux-base` (6.19.14, 7.0.13,
/// 7.1.13): then the config is synthesized from the image (synth_config).
fn fetch_version(opts: &[String], cache: &Path, ver: &str) -> Result<Option<Kernel>> {
    let work = cache.join("extract");
    for pkgs in [
        vec![format!("linux-binary-{ver}"), format!("linux-base-{ver}")],
        vec![format!("linux-image-{ver}")],
        vec![format!("linux-binary-{ver}")],
    ] {
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).context("creating the extract folder")?;
        let args: Vec<&str> = std::iter::once("download")
            .chain(pkgs.iter().map(|s| s.as_str()))
            .collect();
        if run_apt_in("apt-get", opts, &args, &work).is_err() {
            continue;
        }
        extract_debs(&work)?;
        let src = work.join(format!("root/usr/lib/modules/{ver}"));
        let boot = work.join("root/boot");
        let Some(vmlinuz) = [src.join("vmlinuz"), boot.join(format!("vmlinuz-{ver}"))]
            .into_iter()
            .find(|p| p.exists())
        else {
            continue;
        };
        let config = [src.join("config"), boot.join(format!("config-{ver}"))]
            .into_iter()
            .find(|p| p.exists());
        let k = Kernel {
            version: ver.to_string(),
            vmlinuz: cache.join(format!("vmlinuz-{ver}")),
            config: cache.join(format!("config-{ver}")),
        };
        std::fs::copy(&vmlinuz, &k.vmlinuz).context("caching vmlinuz")?;
        match config {
            Some(c) => {
                std::fs::copy(&c, &k.config).context("caching config")?;
            }
            None => {
                eprintln!("xtask: linux-base-{ver} is not in the archive: synthesizing its config from the image");
                let text = synth_config(&std::fs::read(&k.vmlinuz)?, ver)?;
                std::fs::write(&k.config, text).context("writing the synthesized config")?;
            }
        }
        let _ = std::fs::remove_dir_all(&work);
        return Ok(Some(k));
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(None)
}

fn extract_debs(work: &Path) -> Result<()> {
    for deb in std::fs::read_dir(work)?.flatten() {
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
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A config for a build whose config package is gone: only the options libbpf reads
/// (scx's kconfig externs) and the two the suite checks, each read off the image: its
/// BTF (sched_ext) and its version banner (compiler, preemption model).
pub fn synth_config(bzimage: &[u8], ver: &str) -> Result<String> {
    const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
    let at = find(bzimage, ZSTD).with_context(|| format!("vmlinuz-{ver}: no zstd payload"))?;
    let mut child = Command::new("zstd")
        .args(["-dcq"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("running zstd (apt-get install zstd)")?;
    let mut stdin = child.stdin.take().context("zstd's stdin")?;
    let payload = bzimage[at..].to_vec();
    // the payload is followed by the image's trailer, which zstd reports and skips
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&payload);
    });
    let out = child.wait_with_output().context("reading zstd's output")?;
    let _ = writer.join();
    config_from_vmlinux(&out.stdout, ver)
}

/// synth_config's reading of the decompressed kernel.
pub fn config_from_vmlinux(elf: &[u8], ver: &str) -> Result<String> {
    if !elf.starts_with(b"\x7fELF") {
        bail!("vmlinuz-{ver}: the zstd payload is not an ELF kernel");
    }
    let banner_at = find(elf, b"Linux version ")
        .with_context(|| format!("vmlinuz-{ver}: no version banner"))?;
    let end = elf[banner_at..]
        .iter()
        .position(|&b| b == b'\n' || b == 0)
        .unwrap_or(0);
    let banner = String::from_utf8_lossy(&elf[banner_at..banner_at + end]).to_string();
    let mut out = format!(
        "# synthesized by cargo xtask: linux-base-{ver} is not in Debian's archive.\n\
         # Only what libbpf and the suite read, taken from the image: {banner}\n\
         CONFIG_X86_64=y\n"
    );
    // BTF that describes sched_ext's ops: the build has sched_ext and BTF
    if find(elf, b".BTF\0").is_some() && find(elf, b"\0sched_ext_ops\0").is_some() {
        out += "CONFIG_DEBUG_INFO_BTF=y\nCONFIG_SCHED_CLASS_EXT=y\n";
    }
    if banner.contains(" SMP ") {
        out += "CONFIG_SMP=y\n";
    }
    if banner.contains("PREEMPT_RT") {
        out += "CONFIG_PREEMPT_RT=y\n";
    }
    if banner.contains("PREEMPT") {
        out += "CONFIG_PREEMPT_RCU=y\n";
    }
    if let Some(cc) = compiler_of(&banner) {
        out += &format!("CONFIG_CC_VERSION_TEXT=\"{cc}\"\n");
    }
    out += "CONFIG_LOCALVERSION=\"\"\n";
    Ok(out)
}

/// The compiler in a banner: "Linux version V (builder) (CC, LD) #..." -> CC.
fn compiler_of(banner: &str) -> Option<String> {
    let (mut depth, mut group, mut cur) = (0, 0, String::new());
    for ch in banner.chars() {
        match ch {
            '(' => {
                depth += 1;
                if depth == 1 {
                    group += 1;
                    cur.clear();
                    continue;
                }
            }
            ')' => {
                depth -= 1;
                if depth == 0 && group == 2 {
                    break;
                }
            }
            ',' if depth == 1 && group == 2 => return Some(cur),
            _ => {}
        }
        if depth >= 1 && group == 2 {
            cur.push(ch);
        }
    }
    (group == 2 && !cur.is_empty()).then_some(cur)
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
    fn config_synthesized_from_the_image() {
        let banner = "Linux version 6.19.14+deb13-cloud-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0, GNU ld (GNU Binutils for Debian) 2.44) # SMP PREEMPT_DYNAMIC Debian 6.19.14-1~bpo13+1 (2026-05-01)";
        assert_eq!(
            compiler_of(banner).as_deref(),
            Some("x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0")
        );
        let mut elf = b"\x7fELF....shstrtab\0.BTF\0..\0sched_ext_ops\0..".to_vec();
        elf.extend_from_slice(banner.as_bytes());
        elf.push(b'\n');
        let c = config_from_vmlinux(&elf, "6.19.14").unwrap();
        for want in [
            "CONFIG_SCHED_CLASS_EXT=y",
            "CONFIG_DEBUG_INFO_BTF=y",
            "CONFIG_PREEMPT_RCU=y",
            "CONFIG_SMP=y",
            "CONFIG_CC_VERSION_TEXT=\"x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0\"",
        ] {
            assert!(c.lines().any(|l| l == want), "{want} missing:\n{c}");
        }
        assert!(!c.contains("PREEMPT_RT=y"));
        // an image whose BTF does not describe sched_ext gets no sched_ext option
        let plain = format!("\x7fELF .BTF\0 {banner}\n");
        let c = config_from_vmlinux(plain.as_bytes(), "6.12").unwrap();
        assert!(!c.contains("CONFIG_SCHED_CLASS_EXT"), "{c}");
        assert!(config_from_vmlinux(b"MZ not elf", "x").is_err());
    }
}
