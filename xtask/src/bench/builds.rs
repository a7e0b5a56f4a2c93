// SPDX-License-Identifier: GPL-2.0-only
//! The binaries a bench runs besides this tree's: another build of scx_sis
//! (`LABEL=sis@PATH`) and a peer scheduler from crates.io.

use crate::repo_root;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Another build of scx_sis for configuration @i, copied as `scx_sis@i` where the
/// guest (or, natively, PATH) finds it: bench.sh runs spec `sis@i` with it. Returns
/// the copy and the build's id.
pub(super) fn stage_build(i: usize, path: &Path) -> Result<(PathBuf, String)> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .permissions()
        .mode();
    anyhow::ensure!(mode & 0o111 != 0, "{}: not executable", path.display());
    let id = build_id(path)?;
    // a folder per bench, so that no copy overwrites its own source or another bench's
    let dir = repo_root().join(format!("target/bench-builds/{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let to = dir.join(format!("scx_sis@{i}"));
    std::fs::copy(path, &to)
        .with_context(|| format!("copying {} to {}", path.display(), to.display()))?;
    Ok((to, id))
}

/// The build id another build prints (`scx_sis 0.1.0-g<sha> ...`): the table header
/// names it; a file that prints no such line is not an scx_sis build.
pub(super) fn build_id(path: &Path) -> Result<String> {
    let out = std::process::Command::new(path)
        .arg("--version")
        .output()
        .with_context(|| format!("running {} --version", path.display()))?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match id.strip_prefix("scx_sis ") {
        Some(v) if out.status.success() && !id.contains('\n') => Ok(v.to_string()),
        _ => bail!(
            "{}: not an scx_sis build (--version printed '{}')",
            path.display(),
            id.lines().next().unwrap_or("")
        ),
    }
}

/// A peer scheduler's binary, installed from crates.io into the cache on first use.
pub(super) fn peer(name: &str) -> Result<PathBuf> {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        bail!("'{name}' is not a crate name");
    }
    let kernels = crate::kernel::cache_dir();
    let root = kernels.parent().unwrap_or(&kernels).join("peers");
    let bin = root.join("bin").join(name);
    if bin.exists() {
        return Ok(bin);
    }
    println!(
        "bench: installing {name} from crates.io into {} (a few minutes)",
        root.display()
    );
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["install", "--locked", "--root"])
        .arg(&root)
        .arg(name);
    if std::env::var_os("BPF_CLANG").is_none() {
        cmd.env("BPF_CLANG", "clang-19");
    }
    let st = cmd.status().context("running cargo install")?;
    anyhow::ensure!(st.success() && bin.exists(), "cargo install {name} failed");
    Ok(bin)
}
