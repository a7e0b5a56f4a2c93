// SPDX-License-Identifier: GPL-2.0-only
//! The VM tests, read from the `# suite:` header lines of tests/guest/*.sh.

use super::{TestKernels, VmTest};
use crate::kernel::{self, Kernel};
use crate::repo_root;
use crate::vm::Topology;
use anyhow::{Context, Result};

/// Which kernels a VM test runs on.
#[derive(Debug, PartialEq, Clone, Copy)]
pub(crate) enum On {
    /// The full suite's kernels: the newest line and the LTS (kernel::LTS_LINE).
    Every,
    /// The newest line only.
    Newest,
    /// Every supported line (kernel::LINES); on a refused line the script gets the
    /// argument `refused` and asserts the refusal.
    Lines,
    /// The supported lines outside the full suite's (refused ones as with `Lines`): a
    /// lighter variant of a test the full suite runs whole.
    Others,
}

/// One `# suite:` line of a guest script: a VM test, declared beside the checks it runs.
/// `# suite: NAME TOPOLOGY every|newest|lines|others TIMEOUT_S [numa] [numadist=N] [rc=N] [-- ARGS]`
/// runs `sh /tests/SCRIPT ARGS` in a guest of that topology on the full suite's kernels,
/// the newest one, every supported line, or the lines outside the full suite (named
/// NAME-VERSION unless newest), expecting exit status N (default 0).
#[derive(Debug, PartialEq)]
pub(crate) struct Spec {
    pub(crate) name: String,
    pub(crate) topo: String,
    pub(crate) on: On,
    pub(crate) timeout: u64,
    pub(crate) numa: bool,
    pub(crate) rc: i32,
    /// `maxcpus=N`: the kernel brings only N CPUs online at boot (its maxcpus= option);
    /// the others are possible and present but offline when scx_sis loads.
    pub(crate) maxcpus: Option<u32>,
    /// `numadist=N`: the SLIT distance between every two nodes (with `numa`).
    pub(crate) numa_distance: Option<u32>,
    pub(crate) cmd: String,
    /// On a refused line: the script with the one argument `refused`, its own dropped.
    pub(crate) refused_cmd: String,
}

pub(crate) fn parse_spec(script: &str, line: &str) -> Result<Spec, String> {
    let (head, args) = match line.split_once(" -- ") {
        Some((h, a)) => (h, format!(" {a}")),
        None => (line, String::new()),
    };
    let f: Vec<&str> = head.split_whitespace().collect();
    let [name, topo, kernels, timeout, rest @ ..] = f.as_slice() else {
        return Err(format!(
            "{script}: `# suite: {line}` needs NAME TOPOLOGY every|newest|lines|others TIMEOUT_S"
        ));
    };
    topo.parse::<Topology>()
        .map_err(|e| format!("{script}: suite {name}: {e}"))?;
    let on = match *kernels {
        "every" => On::Every,
        "newest" => On::Newest,
        "lines" => On::Lines,
        "others" => On::Others,
        k => {
            return Err(format!(
                "{script}: suite {name}: kernels '{k}' is not every, newest, lines or others"
            ))
        }
    };
    let timeout = timeout
        .parse()
        .map_err(|_| format!("{script}: suite {name}: timeout '{timeout}' is not seconds"))?;
    let (mut numa, mut rc, mut maxcpus, mut numa_distance) = (false, 0, None, None);
    for opt in rest {
        let bad = || format!("{script}: suite {name}: bad {opt}");
        if let Some(n) = opt.strip_prefix("rc=") {
            rc = n.parse().map_err(|_| bad())?;
        } else if let Some(n) = opt.strip_prefix("maxcpus=") {
            maxcpus = Some(n.parse().map_err(|_| bad())?);
        } else if let Some(n) = opt.strip_prefix("numadist=") {
            numa_distance = Some(n.parse().map_err(|_| bad())?);
        } else if *opt == "numa" {
            numa = true;
        } else {
            return Err(format!("{script}: suite {name}: unknown option '{opt}'"));
        }
    }
    if numa_distance.is_some() && !numa {
        return Err(format!("{script}: suite {name}: numadist= needs numa"));
    }
    Ok(Spec {
        name: name.to_string(),
        topo: topo.to_string(),
        on,
        timeout,
        numa,
        rc,
        maxcpus,
        numa_distance,
        cmd: format!("sh /tests/{script}{args}"),
        refused_cmd: format!("sh /tests/{script} refused"),
    })
}

/// Every `# suite:` line of tests/guest/*.sh: adding a guest test is adding a script.
pub(crate) fn specs() -> Result<Vec<Spec>> {
    let dir = repo_root().join("tests/guest");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    files.sort();
    let mut v = Vec::new();
    for f in files {
        let script = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?;
        for line in text.lines().filter_map(|l| l.strip_prefix("# suite: ")) {
            v.push(parse_spec(&script, line).map_err(anyhow::Error::msg)?);
        }
    }
    anyhow::ensure!(!v.is_empty(), "no `# suite:` lines in {}", dir.display());
    Ok(v)
}

pub(crate) fn vm_tests(ks: &TestKernels) -> Result<Vec<VmTest>> {
    let newest = ks.full.last().context("at least one kernel")?;
    let mut v = Vec::new();
    for s in specs()? {
        let on: Vec<&Kernel> = match s.on {
            On::Every => ks.full.iter().collect(),
            On::Newest => vec![newest],
            On::Lines => ks.lines.iter().collect(),
            On::Others => ks
                .lines
                .iter()
                .filter(|k| ks.full.iter().all(|f| f.version != k.version))
                .collect(),
        };
        for k in on {
            let refused =
                matches!(s.on, On::Lines | On::Others) && kernel::refused(&k.version).is_some();
            v.push(VmTest {
                name: if s.on == On::Newest {
                    s.name.clone()
                } else {
                    format!("{}-{}", s.name, k.version)
                },
                kernel: k.clone(),
                topo: s.topo.clone(),
                numa: s.numa,
                numa_distance: s.numa_distance,
                maxcpus: s.maxcpus,
                cmd: if refused {
                    s.refused_cmd.clone()
                } else {
                    s.cmd.clone()
                },
                rc: s.rc,
                timeout: s.timeout,
            });
        }
    }
    // longest first: the queue is popped from the end
    v.sort_by_key(|t| t.timeout);
    Ok(v)
}
