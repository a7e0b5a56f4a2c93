// SPDX-License-Identifier: GPL-2.0-only
//! Root-only folders and the locks that make scx_sis one instance at a time.
//!
//! Every folder scx_sis works in (the bpffs pin folder, the lock folder, the stats
//! socket's folder) is opened without following a symlink and checked on the open
//! descriptor: a directory, owned by root, writable by nobody else. A folder that
//! fails is refused with one line, before anything is created or removed in it, so a
//! user who can write to the parent (bpffs is often mounted 1777) cannot redirect
//! root's chmod, unlink or pin.

use anyhow::{bail, Context, Result};
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Where the locks live: a root-only folder on tmpfs, gone at reboot.
pub const LOCK_DIR: &str = "/run/scx_sis";
/// Held by the loader for its whole life, across restarts.
pub const INSTANCE_LOCK: &str = "/run/scx_sis/instance.lock";
/// Held while the feature word is read, changed and written (`--set`, restarts).
pub const SET_LOCK: &str = "/run/scx_sis/set.lock";

fn cstr(p: &Path) -> Result<CString> {
    CString::new(p.as_os_str().as_bytes()).with_context(|| format!("{} has a NUL", p.display()))
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// Why the folder open on `fd` is not root's alone, if it is not.
fn check_dir_fd(fd: &OwnedFd) -> Result<Option<String>> {
    // SAFETY: fstat on a descriptor we own into a zeroed local struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(errno()).context("fstat");
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Ok(Some("is not a directory".into()));
    }
    if st.st_uid != 0 {
        return Ok(Some(format!("belongs to uid {}, not root", st.st_uid)));
    }
    if st.st_mode & 0o022 != 0 {
        return Ok(Some(format!(
            "is writable by group or others (mode {:o})",
            st.st_mode & 0o7777
        )));
    }
    Ok(None)
}

/// Open (creating it 0700 if missing) a folder that must be root's alone, without
/// following a symlink at its last component; restrict it to 0700 through the
/// descriptor. Anything else is a one-line refusal naming the folder.
pub fn secure_dir(path: &str) -> Result<OwnedFd> {
    let p = Path::new(path);
    let c = cstr(p)?;
    // SAFETY: mkdir with a valid C string; it never follows a symlink at the end.
    if unsafe { libc::mkdir(c.as_ptr(), 0o700) } != 0 {
        let e = errno();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(e).with_context(|| format!("creating {path}"));
        }
    }
    if std::fs::symlink_metadata(p)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
    {
        bail!("refusing to use {path}: it is a symlink");
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: open with a valid C string; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        let e = errno();
        if e.raw_os_error() == Some(libc::ELOOP) {
            bail!("refusing to use {path}: it is a symlink");
        }
        if e.raw_os_error() == Some(libc::ENOTDIR) {
            bail!("refusing to use {path}: it is not a directory");
        }
        return Err(e).with_context(|| format!("opening {path}"));
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    if let Some(why) = check_dir_fd(&fd)? {
        bail!("refusing to use {path}: it {why}");
    }
    // SAFETY: fchmod on the descriptor we just checked.
    if unsafe { libc::fchmod(fd.as_raw_fd(), 0o700) } != 0 {
        return Err(errno()).with_context(|| format!("restricting {path} to root"));
    }
    Ok(fd)
}

/// A file in a folder secure_dir() has checked, opened relative to that folder's
/// descriptor, never through a symlink.
fn open_in(dir: &OwnedFd, name: &str) -> Result<File> {
    let c = CString::new(name)?;
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat with a valid directory descriptor and C string.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(errno()).with_context(|| format!("opening {LOCK_DIR}/{name}"));
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Replace `LOCK_DIR/name` with `text` atomically (a temporary file renamed over it), so
/// a reader sees the old or the new content, never half of one.
pub fn write_atomic(name: &str, text: &str) -> Result<()> {
    let dir = lock_dir()?;
    let tmp = format!("{name}.tmp");
    let mut f = open_in(&dir, &tmp)?;
    f.set_len(0)
        .and_then(|_| f.write_all(text.as_bytes()))
        .with_context(|| format!("writing {LOCK_DIR}/{tmp}"))?;
    let (a, b) = (CString::new(tmp.as_str())?, CString::new(name)?);
    // SAFETY: renameat within one directory descriptor we hold, with C strings.
    if unsafe { libc::renameat(dir.as_raw_fd(), a.as_ptr(), dir.as_raw_fd(), b.as_ptr()) } != 0 {
        return Err(errno()).with_context(|| format!("renaming {LOCK_DIR}/{tmp} to {name}"));
    }
    Ok(())
}

/// Remove `LOCK_DIR/name` if it is there.
pub fn remove(name: &str) {
    let _ = std::fs::remove_file(Path::new(LOCK_DIR).join(name));
}

/// A held flock; released when dropped (or when the process dies, however it dies).
pub struct Lock(#[allow(dead_code)] File);

fn flock(f: &File, nonblock: bool) -> std::io::Result<()> {
    let op = libc::LOCK_EX | if nonblock { libc::LOCK_NB } else { 0 };
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

fn lock_dir() -> Result<OwnedFd> {
    if unsafe { libc::geteuid() } != 0 {
        bail!("permission denied: only root can run or change scx_sis");
    }
    secure_dir(LOCK_DIR)
}

/// The single-instance lock: a second loader is refused in one line, naming the
/// first one's pid, before it touches anything of the first.
pub fn instance_lock() -> Result<Lock> {
    let dir = lock_dir()?;
    let mut f = open_in(&dir, "instance.lock")?;
    if let Err(e) = flock(&f, true) {
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let mut pid = String::new();
            let _ = f.read_to_string(&mut pid);
            bail!(
                "another scx_sis is already running (pid {}); stop it first",
                pid.trim()
            );
        }
        return Err(e).with_context(|| format!("locking {INSTANCE_LOCK}"));
    }
    f.set_len(0).context("truncating the instance lock")?;
    f.rewind()?;
    write!(f, "{}", std::process::id()).context("writing the instance lock")?;
    Ok(Lock(f))
}

/// Serialises every read-modify-write of the live feature word.
pub fn set_lock() -> Result<Lock> {
    let dir = lock_dir()?;
    let f = open_in(&dir, "set.lock")?;
    flock(&f, false).with_context(|| format!("locking {SET_LOCK}"))?;
    Ok(Lock(f))
}
