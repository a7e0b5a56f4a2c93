// SPDX-License-Identifier: GPL-2.0-only
use std::process::Command;

/// The checkout's short git hash for the build id (`-dirty` when files differ from it);
/// nothing outside a git checkout.
fn git_sha() {
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(sha) = git(&["rev-parse", "--short=8", "HEAD"]) {
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        let suffix = if dirty { "-dirty" } else { "" };
        println!("cargo:rustc-env=SCX_SIS_GIT_SHA={sha}{suffix}");
    }
}

/// pelt.h and preempt.h, arithmetic the BPF side runs, built for the host: src/pelt.rs
/// and src/kcompat.rs test it.
fn pelt_for_tests() {
    println!("cargo:rerun-if-changed=src/bpf/pelt.h");
    println!("cargo:rerun-if-changed=src/bpf/pelt_host.c");
    println!("cargo:rerun-if-changed=src/bpf/preempt.h");
    println!("cargo:rerun-if-changed=src/bpf/intf.h");
    cc::Build::new()
        .file("src/bpf/pelt_host.c")
        .warnings(true)
        .compile("sis_pelt");
}

fn main() {
    git_sha();
    pelt_for_tests();
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();
}
